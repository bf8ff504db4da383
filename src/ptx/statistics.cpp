// Log-sum-exp and ESS on the PTX backend: three kernels of ptx/ on one stream (also the start of
// every resampler's call: weight_summary.hpp).
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
#include "grid.hpp"
#include "look_back_storage.hpp"
#include "status_layout.hpp"
#include "weight_summary.hpp"

namespace resample::ptx {
namespace detail {

unsigned weight_sum_blocks(std::size_t n) {
  constexpr std::size_t per_block = std::size_t{threads} * 8, max_blocks = 1024;
  return static_cast<unsigned>(std::clamp<std::size_t>((n + per_block - 1) / per_block, 1, max_blocks));
}

namespace {

/// The max pass, `partial` (resample_weight_sums or resample_tile_sums: the same parameters, its
/// sixth and seventh `sums` and `second`) on `parts` blocks of `partial_threads`, and the finishing
/// block over those `parts` sums (with `squares` and `offsets`, either null). Each kernel waits for
/// the one ahead (griddepcontrol.wait) before it touches the status.
void enqueue_summary(const void* lw, bool is_double, std::size_t n, cuda::device_status* st, const char* partial,
                     unsigned parts, unsigned partial_threads, std::uint64_t* sums, std::uint64_t* second,
                     std::uint64_t* squares, std::uint64_t* offsets, const summary_request& req,
                     cudaStream_t stream, bool max_given = false) {
  constexpr unsigned finish_threads = 1024;
  // The max pass's grid as CUDA C's max_pass has it: enough blocks for each thread to have four
  // 16-byte loads in flight at once (its unrolled loop), at most 1024. (By the weight sums' grid, a
  // float call below 2^22 gave each thread fewer than four vectors, so that loop never ran and
  // they were loaded one at a time.)
  constexpr std::size_t vectors_per_block = std::size_t{threads} * 4;
  const std::size_t vectors = n * (is_double ? 8 : 4) / 16;
  const auto blocks =
      static_cast<unsigned>(std::clamp<std::size_t>((vectors + vectors_per_block - 1) / vectors_per_block, 1, 1024));
  const std::uint64_t weights = address(lw), status = address(st), sums_at = address(sums);
  const std::uint64_t second_at = address(second), squares_at = address(squares), offsets_at = address(offsets);
  const std::uint64_t result = address(req.d_result), ess_at = address(req.d_ess);
  const std::uint64_t count = n;
  const std::uint32_t double_weights = is_double ? 1 : 0;
  const auto fraction = static_cast<std::uint32_t>(fraction_bits(n));
  if (!max_given) {
    launch_early("resample_max_pass", blocks, threads, stream, {&weights, &count, &double_weights, &status, &req.bound});
  }
  launch_early(partial, parts, partial_threads, stream,
               {&weights, &count, &double_weights, &fraction, &status, &sums_at, &second_at});
  launch_early("resample_weight_statistics", 1, finish_threads, stream,
               {&weights, &count, &double_weights, &fraction, &status, &sums_at, &squares_at, &parts, &req.wanted,
                &result, &ess_at, &req.bound, &req.eps, &req.fixed_steps, &offsets_at});
}

}  // namespace

void enqueue_weight_summary(const void* lw, bool is_double, std::size_t n, cuda::device_status* st,
                            std::uint64_t* sums, std::uint64_t* squares, const summary_request& req,
                            cudaStream_t stream) {
  enqueue_summary(lw, is_double, n, st, "resample_weight_sums", weight_sum_blocks(n), threads, sums, squares, squares,
                  nullptr, req, stream);
}

void enqueue_tile_summary(const void* lw, bool is_double, std::size_t n, cuda::device_status* st,
                          std::uint64_t* tile_sums, std::uint64_t* warp_offsets, std::uint64_t* offsets,
                          const summary_request& req, cudaStream_t stream, bool max_given) {
  enqueue_summary(lw, is_double, n, st, "resample_tile_sums",
                  static_cast<unsigned>(tile_count(n)), tile_threads, tile_sums, warp_offsets, nullptr, offsets, req,
                  stream, max_given);
}

namespace {

template <class T>
void enqueue(void* d_temp, std::size_t& temp_bytes, const T* lw, std::size_t n, std::uint32_t wanted, double* d_result,
             double* d_ess, cudaStream_t stream) {
  check_size<std::uint64_t>(n, n);  // N >= 1 and within the exact CDF
  const unsigned blocks = weight_sum_blocks(n);
  cuda::detail::carve c(d_temp);
  auto* st = c.take<cuda::device_status>(1);
  auto* sums = c.take<std::uint64_t>(2 * std::size_t{blocks});  // {lo, hi} per block
  auto* square_sums = (wanted & summary_request::ess) != 0 ? c.take<std::uint64_t>(2 * std::size_t{blocks}) : nullptr;
  if (cuda::detail::measure_only(d_temp, temp_bytes, c.bytes())) return;
  cuda::check(cudaMemsetAsync(st, 0, sizeof(cuda::device_status), stream), "cudaMemsetAsync (PTX status)");
  summary_request req;
  req.wanted = wanted;
  req.d_result = d_result;
  req.d_ess = d_ess;
  enqueue_weight_summary(lw, sizeof(T) == 8, n, st, sums, square_sums, req, stream);
}

}  // namespace
}  // namespace detail

template <class T>
void log_sum_exp(void* d_temp, std::size_t& temp_bytes, const T* lw, std::size_t n, double* d_result,
                 cudaStream_t stream) {
  detail::enqueue(d_temp, temp_bytes, lw, n, detail::summary_request::lse, d_result, nullptr, stream);
}

template <class T>
void effective_sample_size(void* d_temp, std::size_t& temp_bytes, const T* lw, std::size_t n, double* d_result,
                           cudaStream_t stream) {
  detail::enqueue(d_temp, temp_bytes, lw, n, detail::summary_request::ess, d_result, nullptr, stream);
}

template <class T>
void weight_statistics(void* d_temp, std::size_t& temp_bytes, const T* lw, std::size_t n, double* d_lse,
                       double* d_ess, cudaStream_t stream) {
  constexpr std::uint32_t both = detail::summary_request::lse | detail::summary_request::ess;
  detail::enqueue(d_temp, temp_bytes, lw, n, both, d_lse, d_ess, stream);
}

template void log_sum_exp<float>(void*, std::size_t&, const float*, std::size_t, double*, cudaStream_t);
template void log_sum_exp<double>(void*, std::size_t&, const double*, std::size_t, double*, cudaStream_t);
template void effective_sample_size<float>(void*, std::size_t&, const float*, std::size_t, double*, cudaStream_t);
template void effective_sample_size<double>(void*, std::size_t&, const double*, std::size_t, double*, cudaStream_t);
template void weight_statistics<float>(void*, std::size_t&, const float*, std::size_t, double*, double*, cudaStream_t);
template void weight_statistics<double>(void*, std::size_t&, const double*, std::size_t, double*, double*,
                                        cudaStream_t);

}  // namespace resample::ptx
