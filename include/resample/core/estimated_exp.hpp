// The comb's estimated weights (core/comb_estimate.hpp): e^d for d = lw - max <= 0 to a relative
// error below 2^-31, in about eighteen operations where deterministic_exp takes forty, and with
// none of the slow pipe's (no conversion, no ex2). Host and device: the GPU combs call it
// (detail/warp_comb.cuh; comb_from_estimates.ptx writes the same operations out), the tests check
// its bound on the host.
//
//   t = d log2(e) = k + f, k = round(t) by an fma with 1.5 2^52, f = fma(d, log2(e), -k) in
//   [-1/2, 1/2]; 2^f by its Taylor polynomial of degree 8, (ln 2)^j / j!, in Horner form; 2^k
//   added to the exponent. Relative error: the truncation, below (ln 2 / 2)^9 / 9! / 2^-1/2 =
//   2^-31.7 (2^-31.78 at f = -1/2, the worst); the fmas' and coefficients' roundings (about 2^-50)
//   and log2(e)'s and f's (87 log2(e) 2^-53 < 2^-45.6 on the exponent): below estimated_exp_error
//   = 2^-31, against e^d and against deterministic_exp(d) alike (faithful: 2^-52 more), the eps
//   comb_estimate is given. Computed on max(d, -87), so that k >= -126 (2^k a normal double), and
//   0 below it (w < 2^-125, -inf and NaN included: comb_estimate's absolute 2^-100 covers it): a
//   select, where a branch per weight cost a divergence barrier each.
//
// Session 31: the GPU had used ex2.approx.f32 on f rounded to float (eps 2^-21). Its margin sent
// 6 % of warps at 2^24 to the exact weights (counted in the SASS); at 2^-31 the margin's arithmetic
// gives about 0.03 % (docs/results/gpu.md, session 31).
#pragma once

#include <cstdint>

#include "resample/core/config.hpp"
#include "resample/core/deterministic_math.hpp"

namespace resample {

/// A bound on |estimated_exp(d) - e^d| / e^d for -87 <= d <= 0: 2^-31.
inline constexpr double estimated_exp_error = 4.656612873077393e-10;

RESAMPLE_HOST_DEVICE inline double estimated_exp(double d) {
  using detail::fused;
  constexpr double log2e = detail::exp_constants::inv_ln2;     // 1 / ln 2
  constexpr double shifter = detail::exp_constants::shifter;  // 1.5 2^52: adding it rounds to an integer
  const double in_range = d > -87.0 ? d : -87.0;
  const double shifted = fused(in_range, log2e, shifter);
  const double f = fused(in_range, log2e, -(shifted - shifter));
  double p = 1.321548679014431e-06;  // (ln 2)^8 / 8!
  p = fused(p, f, 1.5252733804059841e-05);
  p = fused(p, f, 0.0001540353039338161);
  p = fused(p, f, 0.0013333558146428443);
  p = fused(p, f, 0.009618129107628477);
  p = fused(p, f, 0.05550410866482158);
  p = fused(p, f, 0.24022650695910072);
  p = fused(p, f, 0.6931471805599453);
  p = fused(p, f, 1.0);
  // k from shifted's low word (two's complement, |k| <= 126), added to p's exponent field
  const auto k = static_cast<std::uint32_t>(detail::bits_of(shifted));
  const double w = detail::double_of(detail::bits_of(p) + (static_cast<std::uint64_t>(k << 20) << 32));
  return d >= -87.0 ? w : 0.0;
}

}  // namespace resample
