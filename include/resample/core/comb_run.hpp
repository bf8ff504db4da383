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
/// the last one. True, with O, when neither an integer nor that point lies within the margin of e;
/// or when an integer J does (equal weights put every r on one, zero weights r = 0 or N) but stratum
/// J - 1's point lies below J - 3 margin and stratum J's above J + 3 margin, so that O = J whether
/// r is just below J or not (r is within 2 margin of J): one more Philox word, only there.
RESAMPLE_HOST_DEVICE inline bool stratified_from_estimate(double e, double margin, std::uint64_t n, key k,
                                                          std::uint32_t step, std::uint64_t& O) {
  const double f = std::floor(e - margin);
  const std::uint64_t K = small_integer(f);  // f = -1 gives 2^32 - 1, beyond every stratum
  const std::uint32_t U = philox_stream(k, K < n ? K : n - 1, step).next();
  if (!(f + 1.0 > e + margin)) {  // J = f + 1 within the margin; U is stratum J - 1's where J >= 1
    const std::uint64_t J = small_integer(f + 1.0);
    const double lowest = 3.0 * margin;
    const bool below = J == 0 || (J - 1 < n && U * two_to_minus_32 < 1.0 - lowest);
    const bool above = J >= n || philox_stream(k, J, step).next() * two_to_minus_32 >= lowest;
    O = J;
    return below && above;
  }
  const double above = (e - f) - U * two_to_minus_32;  // r - K - u_K; e - f is exact
  O = K >= n ? n : K + (above > 0.0 ? 1 : 0);
  return K >= n || above > margin || above < -margin;
}

/// Multinomial-sorted's offsets u (of 2^32) that lie certainly below r, u < lo, and certainly not
/// below it, u > hi, given frac, an estimate of r - K within `margin` (K = floor(e - margin), so
/// frac - margin >= 0 up to the rounding of e - margin). u 2^-32 < frac - margin gives u < lo =
/// ceil((frac - margin) 2^32) for an integer u, and u 2^-32 > frac + margin gives u > hi =
/// floor((frac + margin) 2^32). Both are clamped to [0, 2^32 - 1]: a lo clamped from 2^32 leaves
/// u = 2^32 - 1 undecided (hi is then 2^32 - 1 too), never decided wrongly. The rounding of
/// frac -/+ margin (below 2^-52; the product by 2^32 is exact) sits inside the slack of every
/// margin this is given: comb_run's and comb_estimate's lie at least N 2^-46 above their error
/// bounds.
RESAMPLE_HOST_DEVICE inline void point_thresholds(double frac, double margin, std::uint32_t& lo, std::uint32_t& hi) {
  constexpr double two_32 = 4294967296.0;
#ifdef __CUDA_ARCH__
  // the same ceiling / floor and clamp, each one saturating conversion
  lo = __double2uint_ru((frac - margin) * two_32);
  hi = __double2uint_rd((frac + margin) * two_32);
#else
  constexpr double top = 4294967295.0;
  const double a = std::ceil((frac - margin) * two_32);
  const double b = std::floor((frac + margin) * two_32);
  lo = static_cast<std::uint32_t>(small_integer(a <= 0.0 ? 0.0 : a < top ? a : top));
  hi = static_cast<std::uint32_t>(small_integer(b <= 0.0 ? 0.0 : b < top ? b : top));
#endif
}

/// Multinomial-sorted's stratum for one particle from e, an estimate of r = B C / Q within
/// `margin`: false (and an empty range) when an integer lies within the margin or r may reach B,
/// where the stratum is not certain; else stratum K = floor(r)'s ranks [first, first + count)
/// (strata(K)) and the point thresholds of r - K (point_thresholds).
template <class Strata>
RESAMPLE_HOST_DEVICE bool sorted_stratum_from_estimate(double e, double margin, std::uint64_t B, const Strata& strata,
                                                       std::uint32_t& first, std::uint32_t& count, std::uint32_t& lo,
                                                       std::uint32_t& hi) {
  const double f = std::floor(e - margin);
  const std::uint64_t K = small_integer(f);  // 2^32 - 2 >= B for f = -1 (2^52 - 1 lies a binade lower)
  first = count = lo = hi = 0;
  if (!(f + 1.0 > e + margin) || K >= B) return false;
  const stratum_points p = strata(K);
  first = static_cast<std::uint32_t>(p.before);  // ranks < N < 2^32 (P is 32-bit)
  count = static_cast<std::uint32_t>(p.count);
  point_thresholds(e - f, margin, lo, hi);  // e - f is exact
  return true;
}

/// Room for a run's point offsets (count_points_below): `capacity` words, slot s at [s]. On the
/// host (and in tests) an array; the GPU's comb pass passes a column of shared memory.
template <int Capacity>
struct local_points {
  static constexpr int capacity = Capacity;
  std::uint32_t word[Capacity];
  RESAMPLE_HOST_DEVICE std::uint32_t& operator[](int s) { return word[s]; }
};

/// count_points_below when the run's ranks do not fit its scratch: the ranges walked one Philox
/// block (four ranks) at a time, each point tested against every particle (the same loop in every
/// thread of a warp).
template <int Items>
RESAMPLE_HOST_DEVICE unsigned count_points_below_by_blocks(key k, std::uint32_t step,
                                                           const std::uint32_t (&first)[Items],
                                                           const std::uint32_t (&count)[Items],
                                                           const std::uint32_t (&lo)[Items],
                                                           const std::uint32_t (&hi)[Items], std::uint32_t (&O)[Items]) {
  constexpr std::uint64_t none = ~std::uint64_t{0};
  // The smallest rank >= from in some particle's range, or none.
  const auto next_rank = [&first, &count](std::uint64_t from) {
    std::uint64_t t = none;
RESAMPLE_UNROLL
    for (int m = 0; m < Items; ++m) {
      const std::uint64_t start = first[m] > from ? first[m] : from;
      if (start < std::uint64_t{first[m]} + count[m] && start < t) t = start;
    }
    return t;
  };
  std::uint32_t below[Items], at_most[Items];  // #{u_t < lo[m]}, #{u_t <= hi[m]} over m's range
RESAMPLE_UNROLL
  for (int m = 0; m < Items; ++m) below[m] = at_most[m] = 0;
  for (std::uint64_t t = next_rank(0); t != none; t = next_rank(4 * (t / 4) + 4)) {
    const auto block = sorted_points::point_words(k, step, t / 4);
RESAMPLE_UNROLL
    for (int lane = 0; lane < 4; ++lane) {
      // wraps only past rank 2^32 - 1, beyond every range
      const auto rank = static_cast<std::uint32_t>(4 * (t / 4) + lane);
      const std::uint32_t u = block.v[lane];
RESAMPLE_UNROLL
      for (int m = 0; m < Items; ++m) {
        const bool in = rank - first[m] < count[m];
        below[m] += in && u < lo[m] ? 1u : 0u;
        at_most[m] += in && u <= hi[m] ? 1u : 0u;
      }
    }
  }
  unsigned near = 0;
RESAMPLE_UNROLL
  for (int m = 0; m < Items; ++m) {
    near |= below[m] != at_most[m] ? 1u << m : 0u;
    O[m] += below[m];
  }
  return near;
}

/// Multinomial-sorted's points against a run of particles (comb_run, comb_estimate): particle m's
/// stratum holds the ranks [first[m], first[m] + count[m]) (count 0 for a particle decided another
/// way), the point of rank t at offset u_t (sorted_points::point_offset), certainly below r_m
/// when u_t < lo[m] and certainly not when u_t > hi[m]. Adds #{u_t < lo[m]} to O[m] and returns bit
/// m set where some u_t lies in [lo[m], hi[m]]. The ranges are nondecreasing in m: the Philox
/// blocks over the run's span of ranks go to `scratch` (Scratch::capacity words) once, then each
/// particle compares its own points only, in 32-bit integers. A span too long for the scratch
/// (heavy particles with many strata between them) takes count_points_below_by_blocks.
template <int Items, class Scratch>
RESAMPLE_HOST_DEVICE unsigned count_points_below(key k, std::uint32_t step, const std::uint32_t (&first)[Items],
                                                 const std::uint32_t (&count)[Items], const std::uint32_t (&lo)[Items],
                                                 const std::uint32_t (&hi)[Items], std::uint32_t (&O)[Items],
                                                 Scratch& scratch) {
  std::uint32_t begin = 0xFFFFFFFFu, end = 0;  // the span of the nonempty ranges
RESAMPLE_UNROLL
  for (int m = 0; m < Items; ++m) {
    if (count[m] != 0) {
      begin = first[m] < begin ? first[m] : begin;
      end = first[m] + count[m];  // the ranges are nondecreasing: the last nonempty ends last
    }
  }
  if (begin >= end) return 0;
  const std::uint32_t base = begin & ~3u;  // the first Philox block's first rank
  if (end - base > static_cast<std::uint32_t>(Scratch::capacity)) {
    return count_points_below_by_blocks(k, step, first, count, lo, hi, O);
  }
  for (std::uint32_t r = base; r < end; r += 4) {
    const auto block = sorted_points::point_words(k, step, r / 4);
RESAMPLE_UNROLL
    for (int lane = 0; lane < 4; ++lane) scratch[static_cast<int>(r - base) + lane] = block.v[lane];
  }
  unsigned near = 0;
RESAMPLE_UNROLL
  for (int m = 0; m < Items; ++m) {
    std::uint32_t below = 0, at_most = 0;
    for (std::uint32_t j = 0; j < count[m]; ++j) {
      const std::uint32_t u = scratch[static_cast<int>(first[m] - base + j)];
      below += u < lo[m] ? 1u : 0u;
      at_most += u <= hi[m] ? 1u : 0u;
    }
    near |= below != at_most ? 1u << m : 0u;
    O[m] += below;
  }
  return near;
}

/// Multinomial-sorted's O for a run from estimates e[m] of r_m, each within `margin` (comb_run's
/// and comb_estimate's decisions): the stratum (sorted_stratum_from_estimate), then the points
/// (count_points_below). Bit m of the result is set where K or a point's side is not certain.
template <int Items, class Strata, class Scratch>
RESAMPLE_HOST_DEVICE unsigned multinomial_sorted_from_estimates(const double (&e)[Items], double margin,
                                                                std::uint64_t B, const Strata& strata, key k,
                                                                std::uint32_t step, Scratch& scratch,
                                                                std::uint64_t (&O)[Items]) {
  std::uint32_t first[Items], count[Items], lo[Items], hi[Items], below[Items];
  unsigned undecided = 0;
RESAMPLE_UNROLL
  for (int m = 0; m < Items; ++m) {
    undecided |= sorted_stratum_from_estimate(e[m], margin, B, strata, first[m], count[m], lo[m], hi[m]) ? 0u : 1u << m;
    below[m] = first[m];
  }
  undecided |= count_points_below(k, step, first, count, lo, hi, below, scratch);
RESAMPLE_UNROLL
  for (int m = 0; m < Items; ++m) O[m] = below[m];
  return undecided;
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
    const double base = comb_.estimate(C_before_) - U * detail::two_to_minus_32;
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
    if (near) {  // rare: an integer or a point within the margin, which the points beside it did not settle
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
  /// u_t 2^-32 < r_m - K} (detail::count_points_below).
  /// `scratch`: room for the run's point offsets (detail::local_points, or the GPU's shared memory).
  template <class Strata, class Scratch, class Emit>
  RESAMPLE_HOST_DEVICE void multinomial_sorted(key k, std::uint32_t step, const resample::sorted_points& layout,
                                               const Strata& strata, Scratch& scratch, Emit emit) const {
    const double base = comb_.estimate(C_before_);
    double W = 0, e[Items];
RESAMPLE_UNROLL
    for (int m = 0; m < Items; ++m) e[m] = detail::fused(per_weight_, W += w_[m], base);
    std::uint64_t result[Items];
    // bit m: K or a point's side is not certain from the estimate
    const unsigned near =
        detail::multinomial_sorted_from_estimates(e, margin_, comb_.size(), strata, k, step, scratch, result);
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
          clear = clear && resample::sorted_points::point_offset(k, step, t) * detail::two_to_minus_32 < 1.0 - lowest;
        }
      }
      if (J < B) {
        const stratum_points p = strata(J);
        for (std::uint64_t t = p.before; t < p.before + p.count; ++t) {
          clear = clear && resample::sorted_points::point_offset(k, step, t) * detail::two_to_minus_32 >= lowest;
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
    // An integer within the margin: stratified_from_estimate's two points did not decide it.
    if (!(f + 1.0 > e + margin_)) return comb_.stratified(exact_C(m), k, step);
    const std::uint64_t K = detail::small_integer(f);
    if (K >= n) return n;
    // K is certain but point K lies within the margin of r: the exact comparison decides.
    const std::uint32_t U = philox_stream(k, K, step).next();
    return K + (detail::point_below(K, U, comb_.total(), n, exact_C(m)) ? 1 : 0);
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
