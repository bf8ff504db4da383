// A warp's 256 particles through the comb, with the deterministic exp only where it decides:
// first from estimated weights (core/comb_estimate.hpp), and, in a warp where any particle is
// undecided, again from the exact weights (comb_run, the pass it replaces). Device code.
//
//   estimated_exp     e^d, d = lw - max <= 0, to within 2^-31 relative: an fma reduction and a
//                     degree-8 polynomial in double (core/estimated_exp.hpp).
//   warp_comb         each lane's 8 estimated weights, a warp scan of their sums in double (the
//                     exclusive sum from lane - 1's inclusive one, so that every sum is of positive
//                     terms), comb_estimate from the warp's exact C (tile offset + the tile pass's
//                     warp offset); then one vote. An undecided particle (probability about
//                     2 (N 2^-45 + 2^-30 (r_m - r_start)): at N = 2^24, about 0.03 % of warps, where
//                     ex2.approx's 2^-21 sent 6 %) sends its whole warp to the exact weights,
//                     quantised and scanned in 128 bits, and comb_run: the CPU's bits either way.
//                     Fast (options::fast_exp): the fast weights themselves (fast_exp.cuh) in
//                     both places, so a draw is exact for them; the margin's eps 2^-40 (the
//                     least comb_estimate takes), as the PTX comb's fast mode.
#pragma once

#include <cstdint>

#include "fast_exp.cuh"
#include "pipeline.cuh"
#include "resample/core/comb_estimate.hpp"
#include "resample/core/comb_run.hpp"
#include "resample/core/estimated_exp.hpp"
#include "resample/core/exact_cdf.hpp"
#include "resample/cuda/block/wide_sum.cuh"

namespace resample::cuda::detail {

/// One warp's run of 32 x items_per_thread particles (lane l owns items l * items ..): emit(m, O)
/// for each of the calling lane's items. C_warp: the exact C before the warp's first particle;
/// minus_u: u for systematic, 0 for stratified and multinomial-sorted; decide(estimate, O) runs
/// comb_estimate's scheme and returns its undecided bits; exact(run, emit) runs comb_run's. Every
/// lane of the warp must call. Fast: options::fast_exp's weights (the tile pass's too).
template <bool Fast, class T, class Decide, class Exact, class Emit>
__device__ void warp_comb(const T (&x)[items_per_thread], double max_lw, int fraction, const exact_comb& comb,
                          u128 C_warp, double minus_u, Decide decide, Exact exact, Emit emit) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  double v[items_per_thread];
  double sum = 0;
#pragma unroll
  for (int m = 0; m < items_per_thread; ++m) {
    const double d = static_cast<double>(x[m]) - max_lw;
    if constexpr (Fast) {
      sum += v[m] = fast_exp_nonpositive(d);
    } else {
      sum += v[m] = estimated_exp(d);
    }
  }
  double inclusive = sum;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const double y = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d) inclusive += y;
  }
  double before = __shfl_up_sync(0xffffffffu, inclusive, 1);
  if (lane == 0) before = 0;
  // The fast weights are the weights themselves: eps 2^-40, as ptx/comb_from_estimates.ptx takes
  // in its fast mode (the estimate's sums and products in double), where the estimated exp's 2^-31.
  const comb_estimate<items_per_thread> estimate(comb, fraction, comb.estimate(C_warp) - minus_u, before, v,
                                                 Fast ? 0x1p-40 : estimated_exp_error);
  std::uint64_t O[items_per_thread];
  const unsigned undecided = decide(estimate, O);
  if (__any_sync(0xffffffffu, undecided != 0)) {
    double w[items_per_thread];
    u128 q;
    if constexpr (Fast) {
      q = quantised_fast_weights(x, max_lw, fraction, w);
    } else {
      q = quantised_weights(x, max_lw, fraction, w);
    }
    const comb_run<items_per_thread> run(comb, fraction, C_warp + block::warp_inclusive_sum(q) - q, w);
    exact(run, emit);
  } else {
#pragma unroll
    for (int m = 0; m < items_per_thread; ++m) emit(m, O[m]);
  }
}

}  // namespace resample::cuda::detail
