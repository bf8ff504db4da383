// exp and log that give the same bits on every CPU and GPU: built only from IEEE-754 basic
// operations (+, -, *, /, sqrt, each correctly rounded) and explicit fused multiply-adds, never
// from libm or CUDA intrinsics, whose last bits differ between platforms.
//
// A compiler may fuse a*b + c into an fma on its own (GCC with -ffp-contract=fast, nvcc by
// default), which changes bits; so every product here that feeds a sum is already an explicit
// fma, and no other a*b + c pattern appears. Both functions are faithful (error < 1 ulp; the
// tests measure the error against a correctly rounded reference).
#pragma once

#include <cstdint>
#include <limits>

#include "resample/core/config.hpp"

namespace resample {

namespace detail {
/// The series' coefficients of deterministic_exp (1/n! for n = 13 - i, i = 0 .. 11, as correctly
/// rounded doubles) and deterministic_log (2 / (2n + 1) for n = 13 down to 1).
#define RESAMPLE_EXP_SERIES                                                                           \
  1.6059043836821613e-10, 2.08767569878681e-09, 2.505210838544172e-08, 2.755731922398589e-07,         \
      2.7557319223985893e-06, 2.48015873015873e-05, 0.0001984126984126984, 0.001388888888888889,      \
      0.008333333333333333, 0.041666666666666664, 0.16666666666666666, 0.5
#define RESAMPLE_LOG_SERIES                                                                           \
  0.07407407407407407, 0.08, 0.08695652173913043, 0.09523809523809523, 0.10526315789473684,           \
      0.11764705882352941, 0.13333333333333333, 0.15384615384615385, 0.18181818181818182,             \
      0.2222222222222222, 0.2857142857142857, 0.4, 0.6666666666666666

#if defined(__CUDACC__)
// On the device the coefficients are read from constant memory, which an fma takes as an operand:
// as immediates, each double took two uniform-register moves at every use (about 120 instructions
// per particle in the particle filter's exact kernels, whose exp and log run per particle). The
// same values and the same operations, hence the same bits. Each translation unit has its own
// copy (static; the library builds without relocatable device code), which the inline accessors
// below read: identical contents, so which copy a kernel reads makes no difference.
static __constant__ double exp_series_on_device[12] = {RESAMPLE_EXP_SERIES};
static __constant__ double log_series_on_device[13] = {RESAMPLE_LOG_SERIES};
#endif

/// The i-th coefficient of the exp series (i = 0 .. 11) and of the log series (i = 0 .. 12).
RESAMPLE_HOST_DEVICE inline double exp_series(int i) {
#if defined(__CUDA_ARCH__)
  return exp_series_on_device[i];
#else
  constexpr double c[12] = {RESAMPLE_EXP_SERIES};
  return c[i];
#endif
}
RESAMPLE_HOST_DEVICE inline double log_series(int i) {
#if defined(__CUDA_ARCH__)
  return log_series_on_device[i];
#else
  constexpr double c[13] = {RESAMPLE_LOG_SERIES};
  return c[i];
#endif
}
#undef RESAMPLE_EXP_SERIES
#undef RESAMPLE_LOG_SERIES

/// The constants of deterministic_exp, shared by its scalar and lockstep forms (and ln 2's two
/// parts by deterministic_log).
struct exp_constants {
  static constexpr double inv_ln2 = 1.4426950408889634074;     // 1 / ln 2
  static constexpr double ln2_hi = 6.93147180369123816490e-01;  // ln 2, top 32 bits: k * ln2_hi is exact
  static constexpr double ln2_lo = 1.90821492927058770002e-10;  // ln 2 - ln2_hi
  static constexpr double shifter = 6755399441055744.0;         // 1.5 * 2^52: adding it rounds to an integer
  static constexpr double lowest = -745.1332191019412;         // below it e^x rounds to 0
  /// The series' coefficients: 1/n! for n = 13 - i (i = 0 .. 11), as correctly rounded doubles.
  RESAMPLE_HOST_DEVICE static double c(int i) { return exp_series(i); }
  /// 2^k for a normal exponent k, from its bits.
  RESAMPLE_HOST_DEVICE static double two_to(std::int32_t k) {
    return double_of(static_cast<std::uint64_t>(static_cast<std::uint32_t>(k + 1023) << 20) << 32);
  }
};

/// deterministic_exp(x) for x in [-745.13, 709.78]: its reduction, series and scaling.
RESAMPLE_HOST_DEVICE inline double exp_in_range(double x) {
  using e = exp_constants;
  constexpr double inv_ln2 = e::inv_ln2, ln2_hi = e::ln2_hi, ln2_lo = e::ln2_lo, shifter = e::shifter;
  const double shifted = fused(x, inv_ln2, shifter);
  const double k = shifted - shifter;  // round(x / ln 2), ties to even
  double r = fused(-k, ln2_hi, x);
  r = fused(-k, ln2_lo, r);
  double p = e::c(0);
  for (int n = 1; n < 12; ++n) p = fused(p, r, e::c(n));
  p = fused(p, r, 1.0);
  p = fused(p, r, 1.0);  // exp(r) = 1 + r (1 + r (1/2 + r (1/6 + ...)))
  // k as an integer without a float-to-integer conversion: `shifted` has unit ulp, so its low 32
  // bits hold k mod 2^32 (|k| <= 1100).
  const auto ki = static_cast<std::int32_t>(static_cast<std::uint32_t>(bits_of(shifted)));
  const auto two_to = e::two_to;
  if (ki > 1023) return p * 2.0 * two_to(ki - 1);
  if (ki >= -1022) return p * two_to(ki);
  // Subnormal result: scale by 2^(k + 64) first (normal), then by 2^-64 (one rounding).
  return p * two_to(ki + 64) * two_to(-64);
}
}  // namespace detail

/// e^x for double x. Cody-Waite reduction x = k ln 2 + r, |r| <= ln(2) / 2, with ln 2 split in two
/// parts; exp(r) by its Taylor series to r^13 (truncation < 0.02 ulp) in Horner form with fma;
/// then times 2^k, in two steps where the result is subnormal.
RESAMPLE_HOST_DEVICE inline double deterministic_exp(double x) {
  if (x != x) return x;  // NaN
  if (x > 709.782712893384) return std::numeric_limits<double>::infinity();
  if (x < detail::exp_constants::lowest) return 0.0;
  return detail::exp_in_range(x);
}

namespace detail {
/// exp_in_range for K arguments in [-745.13, 0], step by step across the K of them: the same
/// operations on each as exp_in_range, hence the same bits, with one branch for all K (the rare
/// subnormal results: times 2^(k + 64), then 2^-64). On a GPU the K chains then run
/// interleaved and each coefficient is materialised once for all K, where a branchy exp per
/// argument ran its chains one after another.
template <int K>
RESAMPLE_HOST_DEVICE inline void exp_nonpositive_lockstep(const double (&x)[K], double (&e)[K]) {
  using constants = exp_constants;
  constexpr double inv_ln2 = constants::inv_ln2, ln2_hi = constants::ln2_hi, ln2_lo = constants::ln2_lo;
  constexpr double shifter = constants::shifter;
  double r[K], p[K];
  std::int32_t ki[K];
  RESAMPLE_UNROLL
  for (int m = 0; m < K; ++m) {
    const double shifted = fused(x[m], inv_ln2, shifter);
    const double k = shifted - shifter;
    r[m] = fused(-k, ln2_lo, fused(-k, ln2_hi, x[m]));
    ki[m] = static_cast<std::int32_t>(static_cast<std::uint32_t>(bits_of(shifted)));
    p[m] = constants::c(0);
  }
  RESAMPLE_UNROLL
  for (int n = 1; n < 12; ++n) {
    RESAMPLE_UNROLL
    for (int m = 0; m < K; ++m) p[m] = fused(p[m], r[m], constants::c(n));
  }
  const auto two_to = constants::two_to;
  bool subnormal = false;
  RESAMPLE_UNROLL
  for (int m = 0; m < K; ++m) {
    p[m] = fused(fused(p[m], r[m], 1.0), r[m], 1.0);
    e[m] = p[m] * two_to(ki[m]);  // garbage where k < -1022, fixed below
    subnormal |= ki[m] < -1022;
  }
  if (subnormal) {  // rare: results below 2^-1022 (x < -708.4); as exp_in_range, 2^(k + 64) then 2^-64
    RESAMPLE_UNROLL
    for (int m = 0; m < K; ++m) {
      if (ki[m] < -1022) e[m] = p[m] * two_to(ki[m] + 64) * two_to(-64);
    }
  }
}
}  // namespace detail

/// deterministic_exp(x[m]) for K arguments x[m] <= 0 (-inf included), as for weights
/// exp(lw - max lw): the same bits, computed in lockstep (detail::exp_nonpositive_lockstep).
template <int K>
RESAMPLE_HOST_DEVICE inline void deterministic_exp_nonpositive(const double (&x)[K], double (&e)[K]) {
  constexpr double lowest = detail::exp_constants::lowest;
  double clamped[K];  // those below (-inf: zero weights) replaced by 0, whose exp is cheap and normal
  RESAMPLE_UNROLL
  for (int m = 0; m < K; ++m) clamped[m] = x[m] < lowest ? 0.0 : x[m];
  detail::exp_nonpositive_lockstep(clamped, e);
  RESAMPLE_UNROLL
  for (int m = 0; m < K; ++m) e[m] = x[m] < lowest ? 0.0 : e[m];
}

/// deterministic_exp_nonpositive's bits by another route: the arguments below its range (-inf too)
/// replaced by -746, whose e^x the arithmetic itself takes to 0 (k = -1076: the subnormal branch's
/// p 2^-1012 is exact, and p 2^-1076 < 2^-1075 rounds to 0), where deterministic_exp_nonpositive
/// replaces them by 0 and selects the results to 0 after. One select of a double a weight fewer,
/// but a warp holding a zero weight runs the subnormal branch, which costs more than that (with a
/// zero weight in every warp the tile pass is 0.3 us, under 1%, slower; with one in 92% of warps
/// still faster: docs/results/gpu.md, session 41). The GPU's tile pass uses it
/// (quantised_weights_split, exact_cdf.hpp): in a micro-benchmark of that pass's arithmetic at 2^24
/// on an H200, 1.8 us of 43 (docs/results/gpu.md, session 40). The other kernels keep the selecting
/// form: in the comb's rerun of a warp this one made the systematic comb kernel about 7 us slower,
/// with the same spills and the same common path (the cause not found).
template <int K>
RESAMPLE_HOST_DEVICE inline void deterministic_exp_nonpositive_through_underflow(const double (&x)[K], double (&e)[K]) {
  constexpr double lowest = detail::exp_constants::lowest;
  double clamped[K];
  RESAMPLE_UNROLL
  for (int m = 0; m < K; ++m) clamped[m] = x[m] < lowest ? -746.0 : x[m];
  detail::exp_nonpositive_lockstep(clamped, e);
}

/// deterministic_exp(x) for one x <= 0 (-inf included).
RESAMPLE_HOST_DEVICE inline double deterministic_exp_nonpositive(double x) {
  const double in[1] = {x};
  double out[1];
  deterministic_exp_nonpositive(in, out);
  return out[0];
}

/// ln x for double x, after fdlibm's __ieee754_log: x = (1 + f) 2^k with 1 + f in [sqrt(1/2), sqrt 2),
/// s = f / (2 + f), and ln(1 + f) = f - (hfsq - s (hfsq + R)), hfsq = f^2 / 2,
/// R = z (2/3 + z (2/5 + ...)), z = s^2 (the series of 2 atanh(s) - 2s - ... to s^26, truncation
/// below 1e-20 for |s| < 0.172); ln 2 in two parts. ln 0 = -inf, ln of a negative number or NaN is
/// NaN, ln inf = inf.
RESAMPLE_HOST_DEVICE inline double deterministic_log(double x) {
  constexpr double ln2_hi = detail::exp_constants::ln2_hi;
  constexpr double ln2_lo = detail::exp_constants::ln2_lo;
  constexpr double sqrt2 = 1.4142135623730951;
  if (x != x || x < 0.0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0.0) return -std::numeric_limits<double>::infinity();
  if (x == std::numeric_limits<double>::infinity()) return x;
  std::int64_t k = 0;
  if (x < 2.2250738585072014e-308) {  // subnormal: scale into the normal range first
    x *= 18014398509481984.0;         // 2^54, exact
    k = -54;
  }
  const std::uint64_t b = detail::bits_of(x);
  k += static_cast<std::int64_t>((b >> 52) & 0x7ff) - 1023;
  double m = detail::double_of((b & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL);  // [1, 2)
  if (m > sqrt2) {
    m *= 0.5;  // exact
    ++k;
  }
  const double f = m - 1.0;  // exact (Sterbenz)
  const double s = f / (2.0 + f);
  const double z = s * s;
  double p = detail::log_series(0);  // 2 / (2n + 1) for n = 13 down to 1
  for (int n = 1; n < 13; ++n) p = detail::fused(p, z, detail::log_series(n));
  const double half_f = 0.5 * f;                // exact
  const double hfsq = half_f * f;
  const double a = detail::fused(z, p, hfsq);   // hfsq + R
  const double dk = static_cast<double>(k);
  const double b2 = detail::fused(s, a, dk * ln2_lo);      // s (hfsq + R) + k ln2_lo
  const double inner = detail::fused(half_f, f, -b2) - f;  // hfsq - b2 - f
  return detail::fused(dk, ln2_hi, -inner);                 // k ln2_hi is exact
}

}  // namespace resample
