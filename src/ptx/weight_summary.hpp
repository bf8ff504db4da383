// The passes every PTX call over log-weights starts with (ptx/max_pass.ptx, weight_sums.ptx,
// weight_statistics.ptx): shared by the statistics (statistics.cpp) and the resamplers
// (ancestors.cpp). CUDA twin: cuda::detail::summarise (src/cuda/detail/pipeline.cuh).
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "resample/cuda/status.hpp"

namespace resample::ptx::detail {

/// resample_weight_sums' blocks for N log-weights: grid-stride, about 8 log-weights per thread of
/// 256, at most 1024 (the finishing block adds one partial sum per thread).
unsigned weight_sum_blocks(std::size_t n);

/// Enqueues the max pass, the weight sums and the finishing block on `stream`; the status (zeroed
/// by the caller) then holds the verdict, max lw, F and Q. `squares` (weight_sum_blocks(n) pairs,
/// or null) gives S too; `wanted`: bit 0 log-sum-exp, bit 1 ESS, into the status's result and
/// *d_result / *d_ess (either may be null). sums: weight_sum_blocks(n) {lo, hi} pairs.
void enqueue_weight_summary(const void* lw, bool is_double, std::size_t n, cuda::device_status* st,
                            std::uint64_t* sums, std::uint64_t* squares, std::uint32_t wanted, double* d_result,
                            double* d_ess, cudaStream_t stream);

}  // namespace resample::ptx::detail
