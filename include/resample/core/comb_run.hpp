// The comb over a run of consecutive particles, with one exact 128-bit C per run instead of one
// per particle: what a GPU thread does for the Items particles it owns. Host and device; the
// result is exact_comb's, bit for bit, for every particle (tests/comb_run_test.cpp).
//
// Given C_b, the exact C of the particle before the run, and the run's weights w_m (doubles whose
// quantised values q_m = quantise(w_m, F) the exact CDF sums), particle m of the run has
//   r_m = N C_m / Q,   C_m = C_b + q_0 + ... + q_m.
// The estimate e_m = fma(s, W_m, base), W_m = w_0 + ... + w_m in double, s = exact_comb::per_weight
// (about N 2^F / Q), base = exact_comb::estimate(C_b) [- u], costs two flops per particle where the
// per-particle estimate costs a 128-bit shift and a 64-bit-integer-to-double conversion. Its error:
//   estimate(C_b)             <= N 2^-50                 (exact_comb's bound)
//   W_m, m + 1 <= 64 terms    <= 64 2^-53 N              (recursive summation, each term <= 1)
//   s                         <= 3 2^-53 N               (scale and power of two: three roundings)
//   q_m against w_m 2^F       <= 64 N 2^-F               (each q_m is w_m 2^F truncated)
//   fma, - u                  <= 2 2^-53 N
// in all below 80 N 2^-53 < N 2^-45 = margin: when [e - margin, e + margin] holds no integer, the
// integer the decision needs is the estimate's, as in exact_comb; otherwise the run's exact C_m is
// summed (rarely: with probability about 2 margin per particle) and exact_comb decides.
#pragma once

#include <cstdint>

#include "resample/core/config.hpp"
#include "resample/core/exact_cdf.hpp"
#include "resample/core/exact_offspring.hpp"
#include "resample/core/philox.hpp"
#include "resample/core/sorted_points.hpp"

namespace resample {

namespace detail {
/// A double holding an integer in [0, 2^32): its value, read from the significand of c + 2^52.
RESAMPLE_HOST_DEVICE inline std::uint64_t small_integer(double c) {
  return bits_of(c + 4503599627370496.0) & 0xFFFFFFFFull;
}

/// Systematic's O = ceil(r - u) for one particle from e, an estimate of r - u within `margin`:
/// true, with O, when no integer lies in [e - margin, e + margin]; false when the estimate cannot
/// decide (O is then meaningless).
RESAMPLE_HOST_DEVICE inline bool systematic_from_estimate(double e, double margin, std::uint64_t& O) {
  const double c = std::ceil(e - margin);
  O = small_integer(c);
  return c > e + margin;
}

/// Stratified's O for one particle from e, an estimate of r within `margin`: K = floor(r) strata
/// below r, and stratum K's point K + U_K / 2^32 (U_K the first word of Philox at (K, step)) decides
/// the last one. True, with O, when neither an integer nor that point lies within the margin of e.
RESAMPLE_HOST_DEVICE inline bool stratified_from_estimate(double e, double margin, std::uint64_t n, key k,
                                                          std::uint32_t step, std::uint64_t& O) {
  const double f = std::floor(e - margin);
  const std::uint64_t K = small_integer(f);
  const bool certain = f + 1.0 > e + margin;  // no integer near r: K = f
  const std::uint32_t U = philox_stream(k, K < n ? K : n - 1, step).next();
  const double above = (e - f) - U * 2.3283064365386963e-10;  // r - K - u_K; e - f is exact
  O = K >= n ? n : K + (above > 0.0 ? 1 : 0);
  return certain && (K >= n || above > margin || above < -margin);
}
}  // namespace detail

template <int Items>
class comb_run {
  static_assert(Items >= 1 && Items <= 64, "the error bound above counts at most 64 terms");

 public:
  /// C_before: the exact C before the run's first particle; w: the run's weights.
  RESAMPLE_HOST_DEVICE comb_run(const exact_comb& comb, int fraction, u128 C_before, const double (&w)[Items])
      : comb_(comb), fraction_(fraction), C_before_(C_before), w_(w),
        margin_(static_cast<double>(comb.size()) * 2.842170943040401e-14),  // N 2^-45
        per_weight_(comb.per_weight(fraction)) {}

  /// Systematic (Code 5): emit(m, O^m) for each particle of the run, O^m = #{k : k + U/2^32 < r_m}.
  template <class Emit>
  RESAMPLE_HOST_DEVICE void systematic(std::uint32_t U, Emit emit) const {
    const double base = comb_.estimate(C_before_) - U * 2.3283064365386963e-10;
    double W = 0;
    std::uint64_t O[Items];
    unsigned near = 0;  // bit m: an integer lies within the margin of particle m's estimate
RESAMPLE_UNROLL
    for (int m = 0; m < Items; ++m) {
      W += w_[m];
      near |= detail::systematic_from_estimate(detail::fused(per_weight_, W, base), margin_, O[m]) ? 0u : 1u << m;
    }
    if (near) {  // rare (probability about 2 margin each): the exact comparison decides
RESAMPLE_UNROLL
      for (int m = 0; m < Items; ++m) {
        if (near >> m & 1u) O[m] = comb_.systematic(exact_C(m), U);
      }
    }
RESAMPLE_UNROLL
    for (int m = 0; m < Items; ++m) emit(m, O[m]);
  }

  /// Stratified (Code 4): K = floor(r_m) strata lie below r_m, and stratum K's point K + U_K/2^32
  /// (U_K the first word of Philox at (K, step)) decides the last one.
  template <class Emit>
  RESAMPLE_HOST_DEVICE void stratified(key k, std::uint32_t step, Emit emit) const {
    const double base = comb_.estimate(C_before_);
    const std::uint64_t n = comb_.size();
    double W = 0;
    std::uint64_t O[Items];
    unsigned near = 0;  // bit m: K or the last point's side is not certain from the estimate
RESAMPLE_UNROLL
    for (int m = 0; m < Items; ++m) {
      W += w_[m];
      const double e = detail::fused(per_weight_, W, base);
      near |= detail::stratified_from_estimate(e, margin_, n, k, step, O[m]) ? 0u : 1u << m;
    }
    if (near) {  // rare, but every particle on an integer r (equal weights) comes here
RESAMPLE_UNROLL
      for (int m = 0; m < Items; ++m) {
        if (near >> m & 1u) O[m] = stratified_near(k, step, m);
      }
    }
RESAMPLE_UNROLL
    for (int m = 0; m < Items; ++m) emit(m, O[m]);
  }

  /// Multinomial-sorted (core/sorted_points.hpp, comb = exact_comb(Q, B)): stratum K = floor(r_m)
  /// holds the points of ranks [P_K, P_K + c_K) (strata(K)), and O^m = P_K + #{t in that range :
  /// u_t 2^-32 < r_m - K}. The run's strata hold consecutive ranks, walked one Philox block (four
  /// ranks) at a time, each point compared with every particle whose stratum holds it: the same
  /// loop in every thread of a warp, where a loop per particle over its own points diverges.
  template <class Strata, class Emit>
  RESAMPLE_HOST_DEVICE void multinomial_sorted(key k, std::uint32_t step, const resample::sorted_points& layout,
                                               const Strata& strata, Emit emit) const {
    const double base = comb_.estimate(C_before_);
    const std::uint64_t B = comb_.size();
    double W = 0;
    double frac[Items];                         // r_m - K_m as estimated (e - f is exact)
    std::uint32_t first[Items], last[Items];    // ranks of stratum K_m's points (N < 2^32)
    std::uint32_t O[Items];
    unsigned near = 0;  // bit m: K or a point's side is not certain from the estimate
RESAMPLE_UNROLL
    for (int m = 0; m < Items; ++m) {
      W += w_[m];
      const double e = detail::fused(per_weight_, W, base);
      const double f = std::floor(e - margin_);
      const std::uint64_t K = detail::small_integer(f);
      frac[m] = e - f;
      first[m] = last[m] = O[m] = 0;
      if (!(f + 1.0 > e + margin_) || K >= B) {  // an integer near r (or r = B): decided below
        near |= 1u << m;
      } else {
        const stratum_points p = strata(K);
        first[m] = O[m] = static_cast<std::uint32_t>(p.before);
        last[m] = static_cast<std::uint32_t>(p.before + p.count);
      }
    }
    // The ranges are nondecreasing in m (empty for the particles decided below).
    std::uint64_t t = next_rank(first, last, 0);
    while (t != no_rank) {
      const std::uint64_t t4 = t / 4;
      const auto block = resample::sorted_points::point_words(k, step, t4);
RESAMPLE_UNROLL
      for (int lane = 0; lane < 4; ++lane) {
        const std::uint64_t rank = 4 * t4 + lane;
        const double u = block.v[lane] * 2.3283064365386963e-10;
RESAMPLE_UNROLL
        for (int m = 0; m < Items; ++m) {
          if (first[m] <= rank && rank < last[m]) {
            const double above = frac[m] - u;  // r - point
            near |= above > margin_ || above < -margin_ ? 0u : 1u << m;
            O[m] += above > 0.0 ? 1 : 0;
          }
        }
      }
      t = next_rank(first, last, 4 * t4 + 4);
    }
    std::uint64_t result[Items];
RESAMPLE_UNROLL
    for (int m = 0; m < Items; ++m) result[m] = O[m];
    if (near) {  // rare, but every particle on an integer r (equal weights, B = N) comes here
RESAMPLE_UNROLL
      for (int m = 0; m < Items; ++m) {
        if (near >> m & 1u) result[m] = multinomial_sorted_near(k, step, layout, strata, m);
      }
    }
RESAMPLE_UNROLL
    for (int m = 0; m < Items; ++m) emit(m, result[m]);
  }

 private:
  /// Particle m's estimate of r, as the run's loop forms it.
  RESAMPLE_HOST_DEVICE double estimate_of(int m) const {
    double W = 0;
    for (int j = 0; j <= m; ++j) W += w_[j];
    return detail::fused(per_weight_, W, comb_.estimate(C_before_));
  }

  /// Multinomial-sorted's O of particle m when the estimate alone does not decide it.
  template <class Strata>
  RESAMPLE_HOST_DEVICE std::uint64_t multinomial_sorted_near(key k, std::uint32_t step,
                                                             const resample::sorted_points& layout,
                                                             const Strata& strata, int m) const {
    const std::uint64_t B = comb_.size();
    const double e = estimate_of(m);
    const double f = std::floor(e - margin_);
    if (!(f + 1.0 > e + margin_)) {
      // r lies within 2 margin of the integer J (as in stratified_near): O = P_J when every point
      // of stratum J - 1 lies below J - 3 margin and every point of stratum J above J + 3 margin.
      const std::uint64_t J = detail::small_integer(f + 1.0);
      const double lowest = 3.0 * margin_;
      bool clear = true;
      if (J >= 1 && J - 1 < B) {
        const stratum_points p = strata(J - 1);
        for (std::uint64_t t = p.before; t < p.before + p.count; ++t) {
          clear = clear && resample::sorted_points::point_offset(k, step, t) * 2.3283064365386963e-10 < 1.0 - lowest;
        }
      }
      if (J < B) {
        const stratum_points p = strata(J);
        for (std::uint64_t t = p.before; t < p.before + p.count; ++t) {
          clear = clear && resample::sorted_points::point_offset(k, step, t) * 2.3283064365386963e-10 >= lowest;
        }
        if (clear) return p.before;
      } else if (clear) {
        return layout.size();
      }
    }
    return sorted_points_below(comb_, layout, exact_C(m), k, step, strata);
  }

  /// Stratified O of particle m when the estimate alone does not decide it.
  RESAMPLE_HOST_DEVICE std::uint64_t stratified_near(key k, std::uint32_t step, int m) const {
    const std::uint64_t n = comb_.size();
    const double e = estimate_of(m);
    const double f = std::floor(e - margin_);
    if (!(f + 1.0 > e + margin_)) {
      // r lies within 2 margin of the integer J = f + 1 (equal weights put every r on one), so
      // K is J - 1 or J; either way O = J when u_{J-1} < 1 - 2 margin and u_J >= 2 margin:
      // strata below J - 1 lie wholly below r, point J - 1 lies below it and point J above.
      const std::uint64_t J = detail::small_integer(f + 1.0);
      const double lowest = 3.0 * margin_;
      const bool below = J == 0 || philox_stream(k, J - 1, step).next() * 2.3283064365386963e-10 < 1.0 - lowest;
      const bool above = J >= n || philox_stream(k, J, step).next() * 2.3283064365386963e-10 >= lowest;
      return below && above ? J : comb_.stratified(exact_C(m), k, step);
    }
    const std::uint64_t K = detail::small_integer(f);
    if (K >= n) return n;
    // K is certain but point K lies within the margin of r: the exact comparison decides.
    const std::uint32_t U = philox_stream(k, K, step).next();
    return K + (detail::point_below(K, U, comb_.total(), n, exact_C(m)) ? 1 : 0);
  }

  static constexpr std::uint64_t no_rank = ~std::uint64_t{0};

  /// The smallest rank >= from in some particle's range [first[m], last[m]), or no_rank.
  RESAMPLE_HOST_DEVICE static std::uint64_t next_rank(const std::uint32_t (&first)[Items],
                                                      const std::uint32_t (&last)[Items], std::uint64_t from) {
    std::uint64_t t = no_rank;
RESAMPLE_UNROLL
    for (int m = 0; m < Items; ++m) {
      const std::uint64_t lo = first[m] > from ? first[m] : from;
      if (lo < last[m] && lo < t) t = lo;
    }
    return t;
  }

  RESAMPLE_HOST_DEVICE u128 exact_C(int m) const {
    u128 C = C_before_;
    for (int j = 0; j <= m; ++j) C += quantise(w_[j], fraction_);
    return C;
  }

  const exact_comb& comb_;
  int fraction_;
  u128 C_before_;
  const double (&w_)[Items];
  double margin_;
  double per_weight_;
};

}  // namespace resample
