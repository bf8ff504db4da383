// A warp's 256 particles through the comb, with the deterministic exp only where it decides:
// first from estimated weights (core/comb_estimate.hpp), and, in a warp where any particle is
// undecided, again from the exact weights (comb_run, the pass it replaces). Device code.
//
//   estimated_weight  e^d, d = lw - max <= 0, in about ten instructions (the deterministic exp
//                     takes forty): t = d log2(e) = k + f with k = round(t) (an fma with 1.5 2^52)
//                     and f = fma(d, log2(e), -k) in [-1/2, 1/2], 2^f by ex2.approx.ftz.f32 on f
//                     rounded to float, times 2^k by adding k to the exponent. Relative error:
//                     ex2.approx (at most 2 ulp from the correctly rounded result, PTX ISA: with
//                     that rounding, 2.5 2^-23), f's rounding to float (2^-25, so 2^-25 ln 2 on
//                     2^f), log2(e)'s and the fma's (|d| 2^-52 <= 2^-45 on the exponent): below
//                     2^-21.6. Below d = -87 (w < 2^-125, -inf included) it gives 0.
//   warp_comb         each lane's 8 estimated weights, a warp scan of their sums in double (the
//                     exclusive sum from lane - 1's inclusive one, so that every sum is of positive
//                     terms), comb_estimate from the warp's exact C (tile offset + the tile pass's
//                     warp offset); then one vote. An undecided particle (probability about
//                     2^-19 (r_m - r_start), so a few percent of warps) sends its whole warp to the
//                     exact weights, quantised and scanned in 128 bits, and comb_run: the CPU's bits
//                     either way.
#pragma once

#include <cstdint>

#include "pipeline.cuh"
#include "resample/core/comb_estimate.hpp"
#include "resample/core/comb_run.hpp"
#include "resample/core/exact_cdf.hpp"
#include "resample/cuda/block/wide_sum.cuh"

namespace resample::cuda::detail {

/// The bound on estimated_weight's relative error that comb_estimate is given (2^-21; the error
/// is below 2^-21.6).
inline constexpr double estimated_weight_error = 4.76837158203125e-07;

__device__ inline double estimated_weight(double d) {
  constexpr double log2e = 1.4426950408889634;
  constexpr double shifter = 6755399441055744.0;  // 1.5 2^52: adding it rounds to an integer
  // Computed on max(d, -87), so that k >= -126 (2^k a normal double), and replaced by 0 below it:
  // a select, where a branch per weight cost a divergence barrier each.
  const double in_range = fmax(d, -87.0);
  const double shifted = __fma_rn(in_range, log2e, shifter);
  const float f = __double2float_rn(__fma_rn(in_range, log2e, -(shifted - shifter)));
  float p;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(p) : "f"(f));
  const double e = static_cast<double>(p);
  const int k = __double2loint(shifted);  // the low word of shifted holds k (two's complement)
  const double w = __hiloint2double(__double2hiint(e) + k * (1 << 20), __double2loint(e));
  return d >= -87.0 ? w : 0.0;
}

/// One warp's run of 32 x items_per_thread particles (lane l owns items l * items ..): emit(m, O)
/// for each of the calling lane's items. C_warp: the exact C before the warp's first particle;
/// minus_u: u for systematic, 0 for stratified and multinomial-sorted; decide(estimate, O) runs
/// comb_estimate's scheme and returns its undecided bits; exact(run, emit) runs comb_run's. Every
/// lane of the warp must call.
template <class T, class Decide, class Exact, class Emit>
__device__ void warp_comb(const T (&x)[items_per_thread], double max_lw, int fraction, const exact_comb& comb,
                          u128 C_warp, double minus_u, Decide decide, Exact exact, Emit emit) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  double v[items_per_thread];
  double sum = 0;
#pragma unroll
  for (int m = 0; m < items_per_thread; ++m) sum += v[m] = estimated_weight(static_cast<double>(x[m]) - max_lw);
  double inclusive = sum;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const double y = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d) inclusive += y;
  }
  double before = __shfl_up_sync(0xffffffffu, inclusive, 1);
  if (lane == 0) before = 0;
  const comb_estimate<items_per_thread> estimate(comb, fraction, comb.estimate(C_warp) - minus_u, before, v,
                                                 estimated_weight_error);
  std::uint64_t O[items_per_thread];
  const unsigned undecided = decide(estimate, O);
  if (__any_sync(0xffffffffu, undecided != 0)) {
    double w[items_per_thread];
    const u128 q = quantised_weights(x, max_lw, fraction, w);
    const comb_run<items_per_thread> run(comb, fraction, C_warp + block::warp_inclusive_sum(q) - q, w);
    exact(run, emit);
  } else {
#pragma unroll
    for (int m = 0; m < items_per_thread; ++m) emit(m, O[m]);
  }
}

}  // namespace resample::cuda::detail
