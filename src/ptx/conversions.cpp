// Conversions between the three forms, and Code 7's permutation, on the PTX backend: the cuda
// backend's operations (src/cuda/conversions.cu) in hand-written kernels, the same bits.
//   ancestors_to_offspring            check (ptx/check_indices.ptx), o = 0, Code 9 by atom.add
//                                     (ptx/offspring_count.ptx)
//   offspring_to_cumulative           one pass: block scan + decoupled look-back (ptx/offspring_scan.ptx)
//   cumulative_offspring_to_ancestors check (O never decreases, ends at N), Code 8 per tile
//                                     (ptx/cumulative_to_ancestors.ptx)
//   permute                           check, d = N, PREPERMUTE by atom.min, the losers' chase, the
//                                     gather (ptx/permute.ptx)
// The verdict is in the temp storage's first bytes (cuda::check_status); a bad input writes nothing.
#include <cstdint>

#include "cuda/detail/temp_storage.hpp"
#include "module.hpp"
#include "resample/core/error.hpp"
#include "resample/cuda/error.hpp"
#include "resample/ptx/resample.hpp"
#include "grid.hpp"
#include "look_back_storage.hpp"
#include "status_layout.hpp"

namespace resample::ptx {
namespace detail {
namespace {

template <class Index>
void check_call(std::size_t n, const void* in, const void* out) {
  if (n == 0) throw invalid_input("no ancestors: N = 0");
  if (n > 0xFFFFFFFFULL) throw invalid_input("N = " + std::to_string(n) + " is beyond 2^32 - 1 particles");
  if (address(in) % sizeof(Index) != 0 || address(out) % sizeof(Index) != 0) {
    throw invalid_input("a device pointer is not aligned to its index type");
  }
}

/// memset of the status, then the check of `values` (ancestors, or cumulative offspring) and the
/// verdict; the status's code is 0 afterwards when every later kernel may write.
template <class Index>
void enqueue_check(const Index* values, std::size_t n, bool cumulative, device_status* st, cudaStream_t stream) {
  cuda::check(cudaMemsetAsync(st, 0, sizeof(device_status), stream), "cudaMemsetAsync (PTX status)");
  const std::uint64_t in = address(values), count = n, status = address(st);
  const std::uint32_t index64 = sizeof(Index) == 8 ? 1 : 0;
  const std::uint32_t flagged = static_cast<std::uint32_t>(cumulative ? cuda::status_code::cumulative_decreases
                                                                      : cuda::status_code::bad_ancestor);
  const std::uint32_t check_end = cumulative ? 1 : 0;
  launch(cumulative ? "resample_check_cumulative" : "resample_check_ancestors", grid_for(n), threads, stream,
         {&in, &count, &index64, &status});
  launch("resample_index_verdict", 1, 1, stream, {&in, &count, &index64, &status, &flagged, &check_end});
}

template <class Index>
void enqueue_fill(Index* out, std::size_t n, std::uint64_t value, const device_status* st, cudaStream_t stream) {
  const std::uint64_t to = address(out), count = n, status = address(st);
  const std::uint32_t index64 = sizeof(Index) == 8 ? 1 : 0;
  launch("resample_fill_indices", grid_for(n), threads, stream, {&to, &count, &index64, &value, &status});
}

}  // namespace
}  // namespace detail

template <class Index>
void ancestors_to_offspring(void* d_temp, std::size_t& temp_bytes, const Index* a, std::size_t n, Index* o,
                            cudaStream_t stream) {
  detail::check_call<Index>(n, a, o);
  cuda::detail::carve c(d_temp);
  auto* st = c.take<detail::device_status>(1);
  if (cuda::detail::measure_only(d_temp, temp_bytes, c.bytes())) return;
  detail::enqueue_check(a, n, false, st, stream);
  detail::enqueue_fill(o, n, 0, st, stream);
  const std::uint64_t in = detail::address(a), out = detail::address(o), count = n, status = detail::address(st);
  const std::uint32_t index64 = sizeof(Index) == 8 ? 1 : 0;
  detail::launch("resample_count_offspring", detail::grid_for(n), detail::threads, stream,
         {&in, &count, &index64, &status, &out});
}

template <class Index>
void offspring_to_cumulative(void* d_temp, std::size_t& temp_bytes, const Index* o, std::size_t n, Index* O,
                             cudaStream_t stream) {
  detail::check_call<Index>(n, o, O);
  const std::size_t tiles = detail::offspring_scan_tiles(n, sizeof(Index) == 8);  // the scan's own tiles
  cuda::detail::carve c(d_temp);
  const auto scan = detail::look_back_storage::take(c, tiles);
  if (cuda::detail::measure_only(d_temp, temp_bytes, c.bytes())) return;
  scan.clear(stream);  // the status stays good: any counts are summed
  const std::uint64_t in = detail::address(o), out = detail::address(O), count = n, ungated = 0;
  const std::uint32_t index64 = sizeof(Index) == 8 ? 1 : 0;
  detail::launch("resample_offspring_scan", static_cast<unsigned>(tiles), detail::offspring_scan_threads, stream,
                 {&in, &count, &index64, &scan.ticket_at, &scan.flags_at, &scan.aggregates_at, &scan.inclusives_at,
                  &out, &ungated});
}

template <class Index>
void cumulative_offspring_to_ancestors(void* d_temp, std::size_t& temp_bytes, const Index* O, std::size_t n, Index* a,
                                       cudaStream_t stream) {
  detail::check_call<Index>(n, O, a);
  cuda::detail::carve c(d_temp);
  auto* st = c.take<detail::device_status>(1);
  if (cuda::detail::measure_only(d_temp, temp_bytes, c.bytes())) return;
  detail::enqueue_check(O, n, true, st, stream);
  const std::uint64_t in = detail::address(O), out = detail::address(a), count = n, status = detail::address(st);
  const std::uint32_t index64 = sizeof(Index) == 8 ? 1 : 0;
  detail::launch("resample_cumulative_to_ancestors", static_cast<unsigned>(detail::tile_count(n)), detail::tile_threads,
                 stream, {&in, &count, &index64, &status, &out});
}

template <class Index>
void permute(void* d_temp, std::size_t& temp_bytes, const Index* a, std::size_t n, Index* c_out, cudaStream_t stream) {
  detail::check_call<Index>(n, a, c_out);
  cuda::detail::carve c(d_temp);
  auto* st = c.take<detail::device_status>(1);
  auto* d = c.take<Index>(n);
  if (cuda::detail::measure_only(d_temp, temp_bytes, c.bytes())) return;
  detail::enqueue_check(a, n, false, st, stream);
  detail::enqueue_fill(d, n, n, st, stream);
  const std::uint64_t in = detail::address(a), slots = detail::address(d), out = detail::address(c_out), count = n;
  const std::uint64_t status = detail::address(st);
  const std::uint32_t index64 = sizeof(Index) == 8 ? 1 : 0;
  const unsigned grid = detail::grid_for(n);
  detail::launch("resample_prepermute", grid, detail::threads, stream, {&in, &count, &index64, &status, &slots});
  detail::launch("resample_chase", grid, detail::threads, stream, {&in, &count, &index64, &status, &slots});
  detail::launch("resample_gather", grid, detail::threads, stream, {&in, &slots, &count, &index64, &status, &out});
}

#define RESAMPLE_PTX_CONVERSIONS(Index)                                                                              \
  template void ancestors_to_offspring<Index>(void*, std::size_t&, const Index*, std::size_t, Index*, cudaStream_t); \
  template void offspring_to_cumulative<Index>(void*, std::size_t&, const Index*, std::size_t, Index*, cudaStream_t); \
  template void cumulative_offspring_to_ancestors<Index>(void*, std::size_t&, const Index*, std::size_t, Index*,   \
                                                         cudaStream_t);                                           \
  template void permute<Index>(void*, std::size_t&, const Index*, std::size_t, Index*, cudaStream_t);
RESAMPLE_PTX_CONVERSIONS(std::int32_t)
RESAMPLE_PTX_CONVERSIONS(std::int64_t)
#undef RESAMPLE_PTX_CONVERSIONS

}  // namespace resample::ptx
