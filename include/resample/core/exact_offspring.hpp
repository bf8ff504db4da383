// Cumulative offspring O^i from the exact CDF, in integers: the per-particle step of stratified
// (Code 4) and systematic (Code 5) resampling, for any backend.
//
// Strata: point k lies at k + u_k, u_k = U_k / 2^32 (U_k a 32-bit word), and
//   O^i = #{ k in [0, N) : k + u_k < r_i },   r_i = N C_i / Q,
// with u_k = u for all k in systematic resampling. The comparison k + U/2^32 < N C_i / Q is
//   (k 2^32 + U) Q  <  (N 2^32) C_i,
// a pair of 64 x 128-bit products compared in 192 bits: exact, for N < 2^32. A double estimate e
// of the real number it decides is within N 2^-50 of it (about seven roundings of relative size
// 2^-53, in the two 128-bit-to-double conversions, the quotient, the product and the difference, on
// values at most N); when [e - N 2^-48, e + N 2^-48] holds no integer, the estimate's ceiling (or
// floor) is the exact answer and the 192-bit comparisons are skipped; otherwise they decide. Either
// way the result is the exact one, so every backend agrees. A zero weight has
// C_i = C_{i-1}, hence the same O, hence no offspring. E[o_i] = N q_i / Q up to the 2^-32 grid of u.
#pragma once

#include <cmath>
#include <cstdint>

#include "resample/core/philox.hpp"
#include "resample/core/wide_int.hpp"

namespace resample {

namespace detail {
/// (k 2^32 + U) Q < (N 2^32) C: whether point k (at offset U) lies below r = N C / Q.
RESAMPLE_HOST_DEVICE inline bool point_below(std::uint64_t k, std::uint32_t U, u128 Q, std::uint64_t n, u128 C) {
  return mul_wide(Q, (k << 32) | U) < mul_wide(C, n << 32);
}
}  // namespace detail

/// Systematic: O^i = #{k : k + U / 2^32 < N C_i / Q}, for C_i <= Q, Q > 0, n < 2^32.
RESAMPLE_HOST_DEVICE inline std::uint64_t systematic_cumulative_offspring_at(u128 C, u128 Q, std::uint64_t n,
                                                                             std::uint32_t U) {
  const double estimate = static_cast<double>(n) * (to_double(C) / to_double(Q)) - U * 2.3283064365386963e-10;
  const double margin = static_cast<double>(n) * 3.552713678800501e-15;  // n 2^-48
  if (std::ceil(estimate - margin) == std::ceil(estimate + margin)) {  // no integer nearby: O = ceil(r - u)
    const double O = std::ceil(estimate);
    return O <= 0.0 ? 0 : O >= static_cast<double>(n) ? n : static_cast<std::uint64_t>(O);
  }
  std::uint64_t k = estimate <= 0.0 ? 0 : estimate >= static_cast<double>(n) ? n : static_cast<std::uint64_t>(estimate);
  while (k > 0 && !detail::point_below(k - 1, U, Q, n, C)) --k;
  while (k < n && detail::point_below(k, U, Q, n, C)) ++k;
  return k;
}

/// Stratified: K = floor(N C_i / Q) strata lie wholly below r_i; stratum K's point is below r_i
/// when (K 2^32 + U_K) Q < N 2^32 C_i, U_K the first word of Philox at (K, step).
RESAMPLE_HOST_DEVICE inline std::uint64_t stratified_cumulative_offspring_at(u128 C, u128 Q, std::uint64_t n,
                                                                             key k, std::uint32_t step) {
  const double estimate = static_cast<double>(n) * (to_double(C) / to_double(Q));
  const double margin = static_cast<double>(n) * 3.552713678800501e-15;  // n 2^-48
  std::uint64_t K = estimate <= 0.0 ? 0 : estimate >= static_cast<double>(n) ? n : static_cast<std::uint64_t>(estimate);
  if (std::floor(estimate - margin) != std::floor(estimate + margin)) {
    // Exact floor: K Q <= N C < (K + 1) Q.
    while (K > 0 && mul_wide(C, n) < mul_wide(Q, K)) --K;
    while (K < n && mul_wide(Q, K + 1) <= mul_wide(C, n)) ++K;
  }
  if (K >= n) return n;
  const std::uint32_t U = philox_stream(k, K, step).next();
  // Stratum K's point K + U / 2^32 lies below r iff r - K - U / 2^32 > 0.
  const double above = estimate - static_cast<double>(K) - U * 2.3283064365386963e-10;
  if (above > margin) return K + 1;
  if (above < -margin) return K;
  return K + (detail::point_below(K, U, Q, n, C) ? 1 : 0);
}

}  // namespace resample
