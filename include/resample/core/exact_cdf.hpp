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
  const int width = static_cast<int>(std::bit_width(n));
  return 128 - width < 96 ? 128 - width : 96;
}

/// floor(w 2^F) for w in [0, 1], exactly.
RESAMPLE_HOST_DEVICE inline u128 quantise(double w, int fraction) {
  const std::uint64_t b = detail::bits_of(w);
  const int biased_exponent = static_cast<int>((b >> 52) & 0x7ff);
  if (biased_exponent == 0 && (b & 0x000fffffffffffffULL) == 0) return 0;  // +-0
  // w = m 2^(e - 1075) with m the 53-bit significand (52 bits for subnormals, where e = 1).
  const std::uint64_t m = (b & 0x000fffffffffffffULL) | (biased_exponent ? (1ULL << 52) : 0);
  const int shift = (biased_exponent ? biased_exponent : 1) - 1075 + fraction;
  if (shift >= 0) return static_cast<u128>(m) << shift;  // shift <= F - 52 <= 44, since w <= 1
  return -shift >= 64 ? 0 : static_cast<u128>(m >> -shift);
}

/// q_i from a log-weight and the maximum log-weight; -inf gives 0.
template <class T>
RESAMPLE_HOST_DEVICE inline u128 quantised_weight(T log_w, T max_log_w, int fraction) {
  return quantise(deterministic_exp(static_cast<double>(log_w) - static_cast<double>(max_log_w)), fraction);
}

}  // namespace resample
