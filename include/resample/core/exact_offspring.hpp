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

#include <bit>
#include <cmath>
#include <cstdint>

#include "resample/core/config.hpp"
#include "resample/core/philox.hpp"
#include "resample/core/wide_int.hpp"

namespace resample {

namespace detail {
/// 2^-32: a 32-bit offset U as the fraction U 2^-32 of a stratum (exact, a power of two).
inline constexpr double two_to_minus_32 = 0x1p-32;

/// (k 2^32 + U) Q < (N 2^32) C: whether point k (at offset U) lies below r = N C / Q.
RESAMPLE_HOST_DEVICE inline bool point_below(std::uint64_t k, std::uint32_t U, u128 Q, std::uint64_t n, u128 C) {
  return mul_wide(Q, (k << 32) | U) < mul_wide(C, n << 32);
}
}  // namespace detail

/// The comb of one call: N, Q and a fast estimate of r = N C / Q for 0 <= C <= Q. The estimate uses
/// the top 62 bits of C and Q (truncation: relative 2^-60) and a precomputed N / Q (three roundings
/// of 2^-53), so it is within N 2^-50 of r, as the file comment requires.
class exact_comb {
 public:
  RESAMPLE_HOST_DEVICE exact_comb(u128 Q, std::uint64_t n) : Q_(Q), n_(n) {
    const int width = 128 - (static_cast<std::uint64_t>(Q >> 64) != 0 ? count_leading_zeros(static_cast<std::uint64_t>(Q >> 64))
                                                                        : 64 + count_leading_zeros(static_cast<std::uint64_t>(Q)));
    shift_ = width > 62 ? width - 62 : 0;
    scale_ = static_cast<double>(n) / static_cast<double>(static_cast<std::int64_t>(Q >> shift_));
    margin_ = static_cast<double>(n) * 3.552713678800501e-15;  // n 2^-48
  }

  /// r = N C / Q, to within N 2^-50.
  [[nodiscard]] RESAMPLE_HOST_DEVICE double estimate(u128 C) const {
    return static_cast<double>(static_cast<std::int64_t>(C >> shift_)) * scale_;
  }

  /// The estimate's change per unit of weight: one weight w adds w 2^F to C, hence about
  /// N 2^F / Q to r. Exactly the estimate's own scale times a power of two.
  [[nodiscard]] RESAMPLE_HOST_DEVICE double per_weight(int fraction) const {
    return scale_ * detail::double_of(static_cast<std::uint64_t>(1023 + fraction - shift_) << 52);
  }
  [[nodiscard]] RESAMPLE_HOST_DEVICE u128 total() const { return Q_; }
  [[nodiscard]] RESAMPLE_HOST_DEVICE std::uint64_t size() const { return n_; }

  /// floor(N C / Q), exactly: the estimate, checked with 192-bit products when it is near an integer.
  [[nodiscard]] RESAMPLE_HOST_DEVICE std::uint64_t floor_ratio(u128 C) const { return floor_ratio(C, estimate(C)); }

  /// Systematic: O = #{k : k + U / 2^32 < N C / Q}.
  [[nodiscard]] RESAMPLE_HOST_DEVICE std::uint64_t systematic(u128 C, std::uint32_t U) const {
    const double e = estimate(C) - U * detail::two_to_minus_32;
    if (std::ceil(e - margin_) == std::ceil(e + margin_)) {  // no integer nearby: O = ceil(r - u)
      const double O = std::ceil(e);
      return O <= 0.0 ? 0 : O >= static_cast<double>(n_) ? n_ : static_cast<std::uint64_t>(O);
    }
    std::uint64_t k = e <= 0.0 ? 0 : e >= static_cast<double>(n_) ? n_ : static_cast<std::uint64_t>(e);
    while (k > 0 && !detail::point_below(k - 1, U, Q_, n_, C)) --k;
    while (k < n_ && detail::point_below(k, U, Q_, n_, C)) ++k;
    return k;
  }

  /// Stratified: K = floor(N C / Q) strata lie wholly below r; stratum K's point K + U_K / 2^32 is
  /// below r when (K 2^32 + U_K) Q < N 2^32 C, U_K the first word of Philox at (K, step).
  [[nodiscard]] RESAMPLE_HOST_DEVICE std::uint64_t stratified(u128 C, key k, std::uint32_t step) const {
    const double e = estimate(C);
    const std::uint64_t K = floor_ratio(C, e);
    if (K >= n_) return n_;
    const std::uint32_t U = philox_stream(k, K, step).next();
    const double above = e - static_cast<double>(K) - U * detail::two_to_minus_32;  // r - K - u_K
    if (above > margin_) return K + 1;
    if (above < -margin_) return K;
    return K + (detail::point_below(K, U, Q_, n_, C) ? 1 : 0);
  }

 private:
  RESAMPLE_HOST_DEVICE std::uint64_t floor_ratio(u128 C, double e) const {
    std::uint64_t K = e <= 0.0 ? 0 : e >= static_cast<double>(n_) ? n_ : static_cast<std::uint64_t>(e);
    if (std::floor(e - margin_) != std::floor(e + margin_)) {  // exact floor: K Q <= N C < (K + 1) Q
      while (K > 0 && mul_wide(C, n_) < mul_wide(Q_, K)) --K;
      while (K < n_ && mul_wide(Q_, K + 1) <= mul_wide(C, n_)) ++K;
    }
    return K;
  }

  RESAMPLE_HOST_DEVICE static int count_leading_zeros(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
    return __clzll(static_cast<long long>(x));
#else
    return std::countl_zero(x);
#endif
  }

  u128 Q_;
  std::uint64_t n_;
  int shift_ = 0;
  double scale_ = 0;
  double margin_ = 0;
};

}  // namespace resample
