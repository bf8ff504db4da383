// The exact CDF: weights quantised to unsigned fixed point and summed in 128-bit integers, so that
// prefix sums are associative, order-independent and identical on every backend (DESIGN §3).
//
//   w_i = deterministic_exp(lw_i - max_j lw_j) in [0, 1]   (the largest weight is exactly 1)
//   q_i = floor(w_i 2^F),  F = min(96, 128 - bit_width(N)),  C_i = q_0 + ... + q_i,  Q = C_{N-1}
//
// Q <= N 2^F < 2^128, so nothing overflows. A weight w_i >= 2^(52 - F) is quantised exactly (its
// 53-bit mantissa fits); smaller ones lose less than one unit of 2^-F. docs/numerics.md bounds the
// resulting bias in E[o_i] by N (1 + N) 2^-F, below 2e-11 for N <= 2^30.
#pragma once

#include <bit>
#include <cstdint>

#include "resample/core/config.hpp"
#include "resample/core/deterministic_math.hpp"
#include "resample/core/wide_int.hpp"

namespace resample {

/// Largest N the exact CDF supports: the systematic and stratified comparisons need N < 2^32.
inline constexpr std::uint64_t exact_cdf_max_size = 0xFFFFFFFFull;

/// F, the number of fractional bits of the quantised weights, for N particles.
RESAMPLE_HOST_DEVICE constexpr int fraction_bits(std::uint64_t n) {
  const int width = detail::bit_width(n);
  return 128 - width < 96 ? 128 - width : 96;
}

/// floor(w 2^F) for w in [0, 1] and 64 <= F <= 96, exactly, in a few flops (on a GPU, where 64-bit
/// integer shifts cost several instructions each, this is several times cheaper than taking the
/// significand apart): w 2^F = hi 2^64 + lo with hi = floor(w 2^(F - 64)) <= 2^32. Every step is
/// exact: scaling by a power of two (no overflow, w <= 1), floor, and w 2^F - hi 2^64, a number
/// below 2^64 whose bits are a subset of w 2^F's; its truncation is lo = floor(w 2^F) - hi 2^64.
struct quantised_parts {
  double hi;         ///< floor(w 2^(F - 64)), an integer <= 2^32
  std::uint64_t lo;  ///< floor(w 2^F) - hi 2^64
};
RESAMPLE_HOST_DEVICE inline quantised_parts quantise_parts(double w, int fraction) {
  const double scale = detail::double_of(static_cast<std::uint64_t>(1023 + fraction) << 52);   // 2^F
  const double scale_hi = detail::double_of(static_cast<std::uint64_t>(959 + fraction) << 52);  // 2^(F - 64)
  const double hi = std::floor(w * scale_hi);
  const double lo = detail::fused(hi, -18446744073709551616.0, w * scale);  // w 2^F - hi 2^64, exact
  return {hi, static_cast<std::uint64_t>(lo)};
}
RESAMPLE_HOST_DEVICE inline u128 quantise(double w, int fraction) {
  const quantised_parts q = quantise_parts(w, fraction);
  return (static_cast<u128>(static_cast<std::uint64_t>(q.hi)) << 64) | q.lo;
}

/// The weights w[m] = exp(lw[m] - max) of a run of K log-weights (computed in lockstep) and the sum
/// of their quantised values: a GPU thread's share of a tile. -inf gives 0.
template <class T, int K>
RESAMPLE_HOST_DEVICE inline u128 quantised_weights(const T (&lw)[K], double max_log_w, int fraction, double (&w)[K]) {
  double d[K];
  RESAMPLE_UNROLL
  for (int m = 0; m < K; ++m) d[m] = static_cast<double>(lw[m]) - max_log_w;
  deterministic_exp_nonpositive(d, w);
  u128 sum = 0;
  RESAMPLE_UNROLL
  for (int m = 0; m < K; ++m) sum += quantise(w[m], fraction);
  return sum;
}

/// The sum of K weights' quantised values (w in [0, 1]) with quantise's high words added as doubles
/// and converted once: quantised_weights_split's sum, and the GPU fast mode's (fast_exp.cuh).
template <int K>
RESAMPLE_HOST_DEVICE inline u128 quantised_sum_split(const double (&w)[K], int fraction) {
  static_assert(K < (1 << 21), "the high words' double sum must stay exact");
  double high = 0;
  u128 low = 0;
  RESAMPLE_UNROLL
  for (int m = 0; m < K; ++m) {
    const quantised_parts q = quantise_parts(w[m], fraction);
    high += q.hi;
    low += q.lo;
  }
  return (static_cast<u128>(static_cast<std::uint64_t>(high)) << 64) + low;
}

/// quantised_weights' weights and sum in fewer instructions, for log-weights at most the max (weights
/// in [0, 1], as every caller passes): the exp through its underflow
/// (deterministic_exp_nonpositive_through_underflow), and the sum taken apart, the high words
/// hi_m = floor(w_m 2^(F - 64)) <= 2^32 added as doubles (exact below 2^53, that is for K < 2^21)
/// and converted once, the low words as integers: a conversion a weight traded for a double add.
/// The GPU's tile pass, issue-bound, gains 2.2 of its 43.7 us at 2^24 by it (docs/results/gpu.md,
/// session 40). Every other kernel keeps quantised_weights, so that its code stays as it was: in the
/// comb's rerun of a warp (warp_comb.cuh) the new exp with the old sum made the systematic comb
/// about 7 us slower, and both forms there raised its spill loads from 104 to 336 bytes (the time
/// then as before).
template <class T, int K>
RESAMPLE_HOST_DEVICE inline u128 quantised_weights_split(const T (&lw)[K], double max_log_w, int fraction,
                                                         double (&w)[K]) {
  double d[K];
  RESAMPLE_UNROLL
  for (int m = 0; m < K; ++m) d[m] = static_cast<double>(lw[m]) - max_log_w;
  deterministic_exp_nonpositive_through_underflow(d, w);
  return quantised_sum_split(w, fraction);
}

/// q_i from a log-weight and the maximum log-weight; -inf gives 0.
template <class T>
RESAMPLE_HOST_DEVICE inline u128 quantised_weight(T log_w, T max_log_w, int fraction) {
  return quantise(deterministic_exp_nonpositive(static_cast<double>(log_w) - static_cast<double>(max_log_w)), fraction);
}

/// log sum_i exp(lw_i) = max + ln(Q 2^-F) from the exact sum Q: ln Q - F ln 2 with ln 2 in two
/// parts and explicit fmas (F ln 2 left as a product might be fused into the sum by one compiler
/// and not another). One formula for every backend.
RESAMPLE_HOST_DEVICE inline double log_sum_exp_of(double max_log_w, u128 total, int fraction) {
  const double f = -static_cast<double>(fraction);
  const double log_mean = detail::fused(f, detail::exp_constants::ln2_hi,
                                        detail::fused(f, detail::exp_constants::ln2_lo, deterministic_log(to_double(total))));
  return max_log_w + log_mean;
}

/// The effective sample size (sum w)^2 / sum w^2 from the exact sums Q = sum q_i and
/// S = sum quantise(w_i^2), both in units of 2^-F: (Q 2^-F)^2 / (S 2^-F) = (Q / S) (Q 2^-F).
/// One formula for every backend, so the same bits everywhere.
RESAMPLE_HOST_DEVICE inline double effective_sample_size_of(u128 total, u128 squares, int fraction) {
  const double q = to_double(total);
  return q / to_double(squares) * (q * detail::exp_constants::two_to(-fraction));  // 2^-F: exact scaling
}

}  // namespace resample
