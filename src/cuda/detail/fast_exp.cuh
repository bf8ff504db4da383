// options::fast_exp on the CUDA backend: the weights' exponentials by the GPU's approximate ex2,
// computed as ptx/fast_exp.ptx's resample_exp_fast_x4 computes them, instruction for instruction,
// so that the two backends take the same weights and draw the same bits on one GPU, where the
// driver's JIT (the PTX module's) and nvcc assemble ex2.approx.f32 alike (tested on an H200:
// CudaFastExp in tests/gpu/ptx_backend_test.cpp). No CPU twin: PTX defines ex2.approx by its error
// bound only. Device code.
//
//   fast_exp_nonpositive    e^d for d = lw - max <= 0: 2^t, t = d log2(e) (a double product)
//                           rounded to float, by ex2.approx.f32 (relative error about 2^-22, PTX
//                           ISA), widened to double. Rounding t adds at most |t| 2^-24 ln 2 (6e-6
//                           at t = -149); below t = -149 the weight is 0 (the deterministic exp
//                           goes on to 2^-1074); -inf gives 0.
//   quantised_fast_weights  quantised_weights_split's weights and sum (exact_cdf.hpp: the high
//                           words added as doubles) with this exp: the exact CDF of the fast
//                           weights, so a draw is exact for them.
#pragma once

#include "resample/core/exact_cdf.hpp"
#include "resample/core/wide_int.hpp"

namespace resample::cuda::detail {

__device__ inline double fast_exp_nonpositive(double d) {
  const float t = __double2float_rn(__dmul_rn(d, 1.4426950408889634));  // mul.rn.f64, cvt.rn.f32.f64
  float y;
  asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(t));  // no .ftz: subnormal weights kept, as in PTX
  return static_cast<double>(y);
}

/// Quantised by quantised_sum_split (exact_cdf.hpp: the high words added as doubles): from the
/// float's bits by integer operations instead (no conversions) the tile pass took 50 us at 2^24
/// against 42 (docs/results/gpu.md, session 41).
template <class T, int K>
__device__ inline u128 quantised_fast_weights(const T (&lw)[K], double max_log_w, int fraction, double (&w)[K]) {
#pragma unroll
  for (int m = 0; m < K; ++m) w[m] = fast_exp_nonpositive(static_cast<double>(lw[m]) - max_log_w);
  return quantised_sum_split(w, fraction);
}

}  // namespace resample::cuda::detail
