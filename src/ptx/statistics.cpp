// Log-sum-exp and ESS on the PTX backend: three kernels of ptx/ on one stream.
//   resample_max_pass           max lw and the first NaN / +inf (ptx/max_pass.ptx)
//   resample_weight_sums        per-block exact sums of q_i (and of quantised w_i^2) (ptx/weight_sums.ptx)
//   resample_weight_statistics  one block: the verdict, Q, S, LSE, ESS (ptx/weight_statistics.ptx)
// The status is zeroed by a memset first, so a failed check_status never sees a stale verdict.
#include <algorithm>
#include <cstdint>

#include "cuda/detail/temp_storage.hpp"
#include "module.hpp"
#include "resample/core/exact_cdf.hpp"
#include "resample/core/validate.hpp"
#include "resample/cuda/error.hpp"
#include "resample/ptx/resample.hpp"
#include "status_layout.hpp"

namespace resample::ptx {
namespace detail {
namespace {

constexpr unsigned threads = 256;
constexpr unsigned finish_threads = 1024;
constexpr std::size_t max_blocks = 1024;  // per-block sums the finishing block adds up (one per thread)

unsigned blocks_for(std::size_t n) {
  // grid-stride: about 8 log-weights per thread, at most max_blocks blocks
  return static_cast<unsigned>(std::clamp<std::size_t>((n + threads * 8 - 1) / (threads * 8), 1, max_blocks));
}

enum statistic : std::uint32_t { lse = 1, ess = 2 };

template <class T>
void enqueue(void* d_temp, std::size_t& temp_bytes, const T* lw, std::size_t n, std::uint32_t wanted, double* d_result,
             double* d_ess, cudaStream_t stream) {
  check_size<std::uint64_t>(n, n);  // N >= 1 and within the exact CDF
  const unsigned blocks = blocks_for(n);
  const bool squares = (wanted & ess) != 0;
  cuda::detail::carve c(d_temp);
  auto* st = c.take<cuda::device_status>(1);
  auto* sums = c.take<std::uint64_t>(2 * std::size_t{blocks});  // {lo, hi} per block
  auto* square_sums = squares ? c.take<std::uint64_t>(2 * std::size_t{blocks}) : nullptr;
  if (cuda::detail::measure_only(d_temp, temp_bytes, c.bytes())) return;
  // the kernels' pointer arguments, as the .u64 their parameters are
  const std::uint64_t status = reinterpret_cast<std::uintptr_t>(st);
  const std::uint64_t sums_at = reinterpret_cast<std::uintptr_t>(sums);
  const std::uint64_t squares_at = reinterpret_cast<std::uintptr_t>(square_sums);
  const std::uint64_t weights = reinterpret_cast<std::uintptr_t>(lw);
  const std::uint64_t count = n;
  const std::uint32_t is_double = sizeof(T) == 8 ? 1 : 0;
  const auto fraction = static_cast<std::uint32_t>(fraction_bits(n));
  const std::uint64_t result = reinterpret_cast<std::uintptr_t>(d_result);
  const std::uint64_t ess_at = reinterpret_cast<std::uintptr_t>(d_ess);
  cuda::check(cudaMemsetAsync(st, 0, sizeof(cuda::device_status), stream), "cudaMemsetAsync (PTX status)");
  launch("resample_max_pass", blocks, threads, stream, {&weights, &count, &is_double, &status});
  launch("resample_weight_sums", blocks, threads, stream,
         {&weights, &count, &is_double, &fraction, &status, &sums_at, &squares_at});
  launch("resample_weight_statistics", 1, finish_threads, stream,
         {&weights, &count, &is_double, &fraction, &status, &sums_at, &squares_at, &blocks, &wanted, &result, &ess_at});
}

}  // namespace
}  // namespace detail

template <class T>
void log_sum_exp(void* d_temp, std::size_t& temp_bytes, const T* lw, std::size_t n, double* d_result,
                 cudaStream_t stream) {
  detail::enqueue(d_temp, temp_bytes, lw, n, detail::lse, d_result, nullptr, stream);
}

template <class T>
void effective_sample_size(void* d_temp, std::size_t& temp_bytes, const T* lw, std::size_t n, double* d_result,
                           cudaStream_t stream) {
  detail::enqueue(d_temp, temp_bytes, lw, n, detail::ess, d_result, nullptr, stream);
}

template <class T>
void weight_statistics(void* d_temp, std::size_t& temp_bytes, const T* lw, std::size_t n, double* d_lse,
                       double* d_ess, cudaStream_t stream) {
  detail::enqueue(d_temp, temp_bytes, lw, n, detail::lse | detail::ess, d_lse, d_ess, stream);
}

template void log_sum_exp<float>(void*, std::size_t&, const float*, std::size_t, double*, cudaStream_t);
template void log_sum_exp<double>(void*, std::size_t&, const double*, std::size_t, double*, cudaStream_t);
template void effective_sample_size<float>(void*, std::size_t&, const float*, std::size_t, double*, cudaStream_t);
template void effective_sample_size<double>(void*, std::size_t&, const double*, std::size_t, double*, cudaStream_t);
template void weight_statistics<float>(void*, std::size_t&, const float*, std::size_t, double*, double*, cudaStream_t);
template void weight_statistics<double>(void*, std::size_t&, const double*, std::size_t, double*, double*,
                                        cudaStream_t);

}  // namespace resample::ptx
