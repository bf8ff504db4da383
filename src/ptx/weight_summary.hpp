// The passes every PTX call over log-weights starts with (ptx/max_pass.ptx, weight_sums.ptx,
// weight_statistics.ptx): shared by the statistics (statistics.cpp) and the resamplers
// (ancestors.cpp). CUDA twin: cuda::detail::summarise (src/cuda/detail/pipeline.cuh).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include <cuda_runtime_api.h>

#include "resample/cuda/status.hpp"

namespace resample::ptx::detail {

/// resample_weight_sums' blocks for N log-weights: grid-stride, about 8 log-weights per thread of
/// 256, at most 1024 (the finishing block adds one partial sum per thread).
unsigned weight_sum_blocks(std::size_t n);

/// What the finishing block computes besides the verdict, max lw, F and Q (its `statistics` bits
/// and the parameters that go with them).
struct summary_request {
  enum : std::uint32_t { lse = 1, ess = 2, steps = 4, steps_given = 8 };
  std::uint32_t wanted = 0;  ///< lse and ess into the status's result and *d_result / *d_ess; steps: B
  double* d_result = nullptr;
  double* d_ess = nullptr;
  double eps = 0.01;                 ///< Metropolis' eps (steps without steps_given) ...
  std::uint64_t fixed_steps = 0;     ///< ... or B itself (steps_given)
  double bound = std::numeric_limits<double>::quiet_NaN();  ///< rejection's bound, checked; NaN: none
};

/// Enqueues the max pass, the weight sums and the finishing block on `stream`; the status (zeroed
/// by the caller) then holds the verdict, max lw, F and Q, and what `req` asks for. `squares`
/// (weight_sum_blocks(n) pairs, or null) gives S too (needed for the ESS). sums:
/// weight_sum_blocks(n) {lo, hi} pairs.
void enqueue_weight_summary(const void* lw, bool is_double, std::size_t n, cuda::device_status* st,
                            std::uint64_t* sums, std::uint64_t* squares, const summary_request& req,
                            cudaStream_t stream);

/// The comb tiles' summary (the comb from estimated weights, ptx/comb_from_estimates.ptx): the max
/// pass, resample_tile_sums over tile_count(n) tiles of 2048 (tile_sums: their Q_t; warp_offsets:
/// 8 per tile, each warp's C within its tile) and the finishing block, which writes each tile's C
/// before it to `offsets` as well as the verdict, max lw, F and Q. {lo, hi} pairs throughout.
/// `max_given` (options::device_max_log_weight, which open_call.ptx wrote into the status): no max
/// pass; the tile sums check the max instead.
void enqueue_tile_summary(const void* lw, bool is_double, std::size_t n, cuda::device_status* st,
                          std::uint64_t* tile_sums, std::uint64_t* warp_offsets, std::uint64_t* offsets,
                          const summary_request& req, cudaStream_t stream, bool max_given = false);

}  // namespace resample::ptx::detail
