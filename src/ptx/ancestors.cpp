// Ancestors, offspring and cumulative offspring on the PTX backend: systematic and stratified,
// each one pass of the look-back comb after the weight statistics, five operations on the
// caller's stream:
//   memset        the status, the look-back's ticket and its per-tile flags (one contiguous range)
//   resample_max_pass, resample_weight_sums, resample_weight_statistics
//                 the verdict (NaN / +inf first, then all zero), max lw, F and Q (weight_summary.hpp)
//   resample_comb_look_back
//                 one block per tile of 2048 particles: the exact C by a block scan and the
//                 decoupled look-back, the comb, then Code 8, o or O (ptx/comb_look_back.ptx):
//                 the counts are written from the comb directly, not counted from ancestors
// Systematic's word U is drawn here, on the host, from Philox at (shared_index, step), as the
// cuda backend draws it.
#include <cstdint>
#include <string>

#include "cuda/detail/temp_storage.hpp"
#include "module.hpp"
#include "resample/core/validate.hpp"
#include "resample/cuda/error.hpp"
#include "resample/ptx/resample.hpp"
#include "look_back_storage.hpp"
#include "status_layout.hpp"
#include "weight_summary.hpp"

namespace resample::ptx {
namespace detail {
namespace {

template <class Index>
void check_call(scheme s, std::size_t n, const options& opt) {
  check_size<Index>(n, n);
  if (!has_scheme(s)) {
    throw invalid_input("the ptx backend has systematic and stratified resampling so far; " + std::string(name(s)) +
                        " is on the cpu and cuda backends");
  }
  if (opt.cdf != precision::exact) throw invalid_input("the ptx backend has the exact CDF only");
  if (opt.device_gate != nullptr || opt.device_step != nullptr) {
    throw invalid_input("the ptx backend does not take options::device_gate or options::device_step yet");
  }
}

/// What the comb kernel writes (its form_in).
enum class form : std::uint32_t { ancestors = 0, offspring = 1, cumulative = 2 };

template <class T, class Index>
void enqueue(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k, std::uint32_t step,
             Index* a, form f, const options& opt, cudaStream_t stream) {
  check_call<Index>(s, n, opt);
  const std::size_t tiles = tile_count(n);
  cuda::detail::carve c(d_temp);
  const auto scan = look_back_storage::take(c, tiles);
  auto* sums = c.take<std::uint64_t>(2 * std::size_t{weight_sum_blocks(n)});
  if (cuda::detail::measure_only(d_temp, temp_bytes, c.bytes())) return;
  if (reinterpret_cast<std::uintptr_t>(a) % sizeof(Index) != 0) {
    throw invalid_input("the output's device pointer is not aligned to its index type");
  }
  const std::uint64_t weights = reinterpret_cast<std::uintptr_t>(lw);
  const std::uint64_t out = reinterpret_cast<std::uintptr_t>(a);
  const std::uint64_t count = n;
  const std::uint32_t is_double = sizeof(T) == 8 ? 1 : 0, index64 = sizeof(Index) == 8 ? 1 : 0;
  const std::uint32_t stratified = s == scheme::stratified ? 1 : 0;
  const auto written = static_cast<std::uint32_t>(f);
  const std::uint32_t U = philox_stream(k, shared_index, step).next();
  scan.clear(stream);
  enqueue_weight_summary(lw, sizeof(T) == 8, n, scan.status, sums, nullptr, 0, nullptr, nullptr, stream);
  launch("resample_comb_look_back", static_cast<unsigned>(tiles), tile_threads, stream,
         {&weights, &count, &is_double, &index64, &stratified, &scan.status_at, &scan.ticket_at, &scan.flags_at,
          &scan.aggregates_at, &scan.inclusives_at, &U, &k.seed, &k.stream, &step, &out, &written});
}

}  // namespace
}  // namespace detail

template <class T, class Index>
void ancestors(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k, std::uint32_t step,
               Index* a, const options& opt, cudaStream_t stream) {
  detail::enqueue(d_temp, temp_bytes, s, lw, n, k, step, a, detail::form::ancestors, opt, stream);
}

template <class T, class Index>
void offspring(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k, std::uint32_t step,
               Index* o, const options& opt, cudaStream_t stream) {
  detail::enqueue(d_temp, temp_bytes, s, lw, n, k, step, o, detail::form::offspring, opt, stream);
}

template <class T, class Index>
void cumulative_offspring(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k,
                          std::uint32_t step, Index* O, const options& opt, cudaStream_t stream) {
  detail::enqueue(d_temp, temp_bytes, s, lw, n, k, step, O, detail::form::cumulative, opt, stream);
}

#define RESAMPLE_PTX_ANCESTORS(T, Index)                                                                             \
  template void ancestors<T, Index>(void*, std::size_t&, scheme, const T*, std::size_t, key, std::uint32_t, Index*,   \
                                    const options&, cudaStream_t);                                                  \
  template void offspring<T, Index>(void*, std::size_t&, scheme, const T*, std::size_t, key, std::uint32_t, Index*,   \
                                    const options&, cudaStream_t);                                                  \
  template void cumulative_offspring<T, Index>(void*, std::size_t&, scheme, const T*, std::size_t, key,               \
                                               std::uint32_t, Index*, const options&, cudaStream_t);
RESAMPLE_PTX_ANCESTORS(float, std::int32_t)
RESAMPLE_PTX_ANCESTORS(float, std::int64_t)
RESAMPLE_PTX_ANCESTORS(double, std::int32_t)
RESAMPLE_PTX_ANCESTORS(double, std::int64_t)
#undef RESAMPLE_PTX_ANCESTORS

}  // namespace resample::ptx
