// Conversions between the three forms, and Code 7's permutation, on the GPU.
//
//   ancestors_to_offspring (Code 9): o^i = #{j : a^j = i} by atomic increments (counts are exact,
//       so the order of the increments does not matter). CPU twin: cpu::ancestors_to_offspring.
//   offspring_to_cumulative: CUB DeviceScan::InclusiveSum (integers: exact).
//   cumulative_offspring_to_ancestors (Code 8): code8.cuh after a check that O never decreases
//       and ends at N.
//   permute (Code 7): PREPERMUTE d^{a^i} = min(d^{a^i}, i) by atomicMin; then each loser i (d^{a^i}
//       != i) follows x -> d^x from x = i to the first unclaimed slot and claims it. The chains
//       of different losers are disjoint (d is injective and a loser is in no chain but its own),
//       so they can run at once with no race, and every loser ends where the CPU's serial chase in
//       index order ends: the same permutation as cpu::permute. Then c^i = a^{d^i}.
// Inputs are validated on the device first (ancestors in [0, N)); a bad input writes nothing.
#include <type_traits>

#include "detail/code8.cuh"
#include "resample/cuda/resample.hpp"

namespace resample::cuda {
namespace detail {
namespace {

template <class Index>
__global__ void __launch_bounds__(block_threads)
    check_ancestors_pass(const Index* __restrict__ a, std::size_t n, device_status* st) {
  const std::size_t i = blockIdx.x * std::size_t{block_threads} + threadIdx.x;
  if (i >= n) return;
  const Index x = a[i];
  if ((std::is_signed_v<Index> && x < 0) || static_cast<std::uint64_t>(x) >= n) flag_first(&st->first_bad, i);
}

template <class Index>
__global__ void check_cumulative_pass(const Index* __restrict__ O, std::size_t n, device_status* st) {
  const std::size_t i = blockIdx.x * std::size_t{block_threads} + threadIdx.x;
  if (i >= n) return;
  if (O[i] < (i == 0 ? Index{0} : O[i - 1])) flag_first(&st->first_bad, i);
}

/// The verdict of a check pass: the first flagged index, with the integer found there.
template <class Index>
__global__ void verdict_pass(const Index* values, std::size_t n, device_status* st, status_code flagged,
                             bool check_end) {
  st->n = n;
  if (st->first_bad != 0) {
    st->index = ~st->first_bad;
    st->integer = static_cast<long long>(values[st->index]);
    st->code = static_cast<int>(flagged);
  } else if (check_end && static_cast<std::uint64_t>(values[n - 1]) != n) {
    st->index = n - 1;
    st->integer = static_cast<long long>(values[n - 1]);
    st->code = static_cast<int>(status_code::cumulative_end);
  } else {
    st->code = 0;
  }
}

template <class Index>
void check_ancestors(const Index* a, std::size_t n, device_status* st, cudaStream_t stream) {
  cuda::check(cudaMemsetAsync(st, 0, sizeof(device_status), stream), "cudaMemsetAsync (status)");
  check_ancestors_pass<Index><<<grid_for(n), block_threads, 0, stream>>>(a, n, st);
  check_launch("check_ancestors_pass");
  verdict_pass<Index><<<1, 1, 0, stream>>>(a, n, st, status_code::bad_ancestor, false);
  check_launch("verdict_pass");
}

template <class Index>
__global__ void fill_pass(std::size_t n, const device_status* st, Index* d) {
  const std::size_t i = blockIdx.x * std::size_t{block_threads} + threadIdx.x;
  if (i < n && st->code == 0) d[i] = static_cast<Index>(n);
}

template <class Index>
__global__ void prepermute_pass(const Index* __restrict__ a, std::size_t n, const device_status* st, Index* d) {
  const std::size_t i = blockIdx.x * std::size_t{block_threads} + threadIdx.x;
  if (i >= n || st->code != 0) return;
  using atomic_t = std::conditional_t<sizeof(Index) == 4, unsigned int, unsigned long long>;
  // Indices are in [0, N], so their unsigned order is their order.
  atomicMin(reinterpret_cast<atomic_t*>(d + a[i]), static_cast<atomic_t>(i));
}

template <class Index>
__global__ void chase_pass(const Index* __restrict__ a, std::size_t n, const device_status* st, Index* d) {
  const std::size_t i = blockIdx.x * std::size_t{block_threads} + threadIdx.x;
  if (i >= n || st->code != 0) return;
  if (static_cast<std::size_t>(d[a[i]]) == i) return;  // i owns its ancestor's slot
  // Loser: only this thread reads the slots of its chain or writes its end (see the file comment).
  std::size_t x = i;
  while (static_cast<std::size_t>(d[x]) < n) x = static_cast<std::size_t>(d[x]);
  d[x] = static_cast<Index>(i);
}

template <class Index>
__global__ void gather_pass(const Index* __restrict__ a, const Index* __restrict__ d, std::size_t n,
                            const device_status* st, Index* c) {
  const std::size_t i = blockIdx.x * std::size_t{block_threads} + threadIdx.x;
  if (i < n && st->code == 0) c[i] = a[d[i]];
}

template <class Index>
std::size_t inclusive_sum_bytes(std::size_t n) {
  std::size_t bytes = 0;
  check(cub::DeviceScan::InclusiveSum(nullptr, bytes, static_cast<const Index*>(nullptr), static_cast<Index*>(nullptr),
                                      static_cast<int64_t>(n)),
        "cub::DeviceScan::InclusiveSum (size)");
  return bytes;
}

void check_n(std::size_t n) {
  if (n == 0) throw invalid_input("no ancestors: N = 0");
}

}  // namespace
}  // namespace detail

template <class Index>
void ancestors_to_offspring(void* d_temp, std::size_t& temp_bytes, const Index* a, std::size_t n, Index* o,
                            cudaStream_t stream) {
  detail::check_n(n);
  detail::carve c(d_temp);
  auto* st = c.take<device_status>(1);
  if (detail::measure_only(d_temp, temp_bytes, c.bytes())) return;
  detail::check_ancestors(a, n, st, stream);
  detail::zero_pass<Index><<<detail::grid_for(n), detail::block_threads, 0, stream>>>(n, st, o);
  check_launch("zero_pass");
  detail::count_pass<Index><<<detail::grid_for(n), detail::block_threads, 0, stream>>>(a, n, st, o);
  check_launch("count_pass");
}

template <class Index>
void offspring_to_cumulative(void* d_temp, std::size_t& temp_bytes, const Index* o, std::size_t n, Index* O,
                             cudaStream_t stream) {
  detail::check_n(n);
  detail::carve c(d_temp);
  auto* st = c.take<device_status>(1);
  std::size_t scan_bytes = detail::inclusive_sum_bytes<Index>(n);
  void* scan_temp = c.take<char>(scan_bytes);
  if (detail::measure_only(d_temp, temp_bytes, c.bytes())) return;
  check(cudaMemsetAsync(st, 0, sizeof(device_status), stream), "cudaMemsetAsync (status)");
  check(cub::DeviceScan::InclusiveSum(scan_temp, scan_bytes, o, O, static_cast<int64_t>(n), stream),
        "cub::DeviceScan::InclusiveSum (offspring)");
}

template <class Index>
void cumulative_offspring_to_ancestors(void* d_temp, std::size_t& temp_bytes, const Index* O, std::size_t n, Index* a,
                                       cudaStream_t stream) {
  detail::check_n(n);
  detail::carve c(d_temp);
  auto* st = c.take<device_status>(1);
  if (detail::measure_only(d_temp, temp_bytes, c.bytes())) return;
  check(cudaMemsetAsync(st, 0, sizeof(device_status), stream), "cudaMemsetAsync (status)");
  detail::check_cumulative_pass<Index><<<detail::grid_for(n), detail::block_threads, 0, stream>>>(O, n, st);
  check_launch("check_cumulative_pass");
  detail::verdict_pass<Index><<<1, 1, 0, stream>>>(O, n, st, status_code::cumulative_decreases, true);
  check_launch("verdict_pass");
  detail::cumulative_to_ancestors_pass<Index, Index>
      <<<static_cast<unsigned>(detail::tile_count(n)), detail::block_threads, 0, stream>>>(O, n, st, a);
  check_launch("cumulative_to_ancestors_pass");
}

template <class Index>
void permute(void* d_temp, std::size_t& temp_bytes, const Index* a, std::size_t n, Index* c_out, cudaStream_t stream) {
  detail::check_n(n);
  detail::carve c(d_temp);
  auto* st = c.take<device_status>(1);
  auto* d = c.take<Index>(n);
  if (detail::measure_only(d_temp, temp_bytes, c.bytes())) return;
  const unsigned grid = detail::grid_for(n);
  detail::check_ancestors(a, n, st, stream);
  detail::fill_pass<Index><<<grid, detail::block_threads, 0, stream>>>(n, st, d);
  check_launch("fill_pass");
  detail::prepermute_pass<Index><<<grid, detail::block_threads, 0, stream>>>(a, n, st, d);
  check_launch("prepermute_pass");
  detail::chase_pass<Index><<<grid, detail::block_threads, 0, stream>>>(a, n, st, d);
  check_launch("chase_pass");
  detail::gather_pass<Index><<<grid, detail::block_threads, 0, stream>>>(a, d, n, st, c_out);
  check_launch("gather_pass");
}

#define RESAMPLE_INSTANTIATE(Index)                                                                               \
  template void ancestors_to_offspring<Index>(void*, std::size_t&, const Index*, std::size_t, Index*, cudaStream_t); \
  template void offspring_to_cumulative<Index>(void*, std::size_t&, const Index*, std::size_t, Index*, cudaStream_t); \
  template void cumulative_offspring_to_ancestors<Index>(void*, std::size_t&, const Index*, std::size_t, Index*,  \
                                                         cudaStream_t);                                          \
  template void permute<Index>(void*, std::size_t&, const Index*, std::size_t, Index*, cudaStream_t);
RESAMPLE_INSTANTIATE(std::int32_t)
RESAMPLE_INSTANTIATE(std::int64_t)
#undef RESAMPLE_INSTANTIATE

}  // namespace resample::cuda
