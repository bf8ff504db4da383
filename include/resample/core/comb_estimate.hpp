// The comb from estimated weights: comb_run's decisions for a run of particles whose weights are
// known only to within a relative error (on the GPU, estimated_exp: 2^-31), so that the exact weights --
// the deterministic exp, quantised and summed in 128 bits -- are needed only where an estimate
// cannot decide. Host and device; every particle it decides gets exact_comb's answer
// (tests/comb_estimate_test.cpp).
//
// The run starts somewhere after an exact C_start (on the GPU: the start of a warp's 256
// particles, whose exact C the tile pass wrote). With v_j the estimated weights from there on,
// |v_j - w_j| <= eps w_j, and W_m = v_0 + ... + v_m in double, particle m's estimate is
//   e_m = fma(s, W_m, base),  base = exact_comb::estimate(C_start) [- u],  s = per_weight (~ N 2^F / Q).
// Its error against r_m [- u] = N C_m / Q [- u], C_m = C_start + q_0 + ... + q_m:
//   base                         <= N 2^-50 + 2^-53       (exact_comb's bound, and - u)
//   s against N 2^F / Q          <= 3 2^-53 s W_m
//   W_m against w_0 + ... + w_m   <= (eps + 64 2^-53) W_m (eps per term; at most 64 roundings on
//                                                        the path of a sum of positive terms)
//   q_j against w_j 2^F          <= 256 N 2^-F            (each q_j is w_j 2^F truncated; F >= 64)
//   fma                          <= 2^-53 (N + 1)
// so |e_m - (r_m [- u])| <= N 2^-47 + (e_m - base)(eps + 2^-46), as s W_m = e_m - base to within
// 2^-52 (N + 1). The margin used, N 2^-45 + 2 eps (e_last - base) with e_last the run's last (and
// largest) estimate, is above that for eps >= 2^-40: it grows with the distance from the exact
// start, which is why runs start at a known C often. Weights below 2^-100 may instead be off by
// an absolute 2^-100 (a flushed estimate): 256 N 2^-100 on an estimate, inside the N 2^-45.
#pragma once

#include <cstdint>

#include "resample/core/comb_run.hpp"
#include "resample/core/config.hpp"
#include "resample/core/exact_offspring.hpp"
#include "resample/core/philox.hpp"

namespace resample {

template <int Items>
class comb_estimate {
 public:
  /// base: exact_comb::estimate(C_start), minus u for systematic; W_before: the sum of the
  /// estimated weights from C_start to the run (double); v: the run's estimated weights;
  /// relative_error: eps, a bound on |v - w| / w for every weight (at least 2^-40).
  RESAMPLE_HOST_DEVICE comb_estimate(const exact_comb& comb, int fraction, double base, double W_before,
                                     const double (&v)[Items], double relative_error)
      : n_(comb.size()), base_(base), W_before_(W_before), v_(v), slope_(2.0 * relative_error),
        margin_(static_cast<double>(comb.size()) * 2.842170943040401e-14),  // N 2^-45
        per_weight_(comb.per_weight(fraction)) {}

  /// Systematic (Code 5; base includes - u): O[m] for each particle; bit m of the result is set
  /// where the estimate cannot decide (O[m] is then meaningless).
  RESAMPLE_HOST_DEVICE unsigned systematic(std::uint64_t (&O)[Items]) const {
    double e[Items];
    const double margin = estimates(e);
    unsigned undecided = 0;
RESAMPLE_UNROLL
    for (int m = 0; m < Items; ++m) undecided |= detail::systematic_from_estimate(e[m], margin, O[m]) ? 0u : 1u << m;
    return undecided;
  }

  /// Stratified (Code 4): as systematic, with stratum K's point from Philox at (K, step).
  RESAMPLE_HOST_DEVICE unsigned stratified(key k, std::uint32_t step, std::uint64_t (&O)[Items]) const {
    double e[Items];
    const double margin = estimates(e);
    unsigned undecided = 0;
RESAMPLE_UNROLL
    for (int m = 0; m < Items; ++m) {
      undecided |= detail::stratified_from_estimate(e[m], margin, n_, k, step, O[m]) ? 0u : 1u << m;
    }
    return undecided;
  }

  /// Multinomial-sorted (comb = exact_comb(Q, B), core/sorted_points.hpp): O[m] = P_K + the points
  /// of stratum K = floor(r_m) below r_m, strata(K) giving stratum K's ranks; bit m of the result
  /// is set where K or a point's side is not certain from the estimate. `scratch`: room for the
  /// run's point offsets (detail::count_points_below).
  template <class Strata, class Scratch>
  RESAMPLE_HOST_DEVICE unsigned multinomial_sorted(key k, std::uint32_t step, const Strata& strata, Scratch& scratch,
                                                   std::uint64_t (&O)[Items]) const {
    double e[Items];
    const double margin = estimates(e);
    return detail::multinomial_sorted_from_estimates(e, margin, n_, strata, k, step, scratch, O);
  }

 private:
  /// The run's estimates, and one margin for all of them: the last particle's, the largest (the
  /// estimates grow along the run), which saves two flops per particle and widens the others' by
  /// at most the run's own share of the distance from the exact start.
  RESAMPLE_HOST_DEVICE double estimates(double (&e)[Items]) const {
    double W = W_before_;
RESAMPLE_UNROLL
    for (int m = 0; m < Items; ++m) e[m] = detail::fused(per_weight_, W += v_[m], base_);
    return detail::fused(e[Items - 1] - base_, slope_, margin_);
  }

  std::uint64_t n_;
  double base_;
  double W_before_;
  const double (&v_)[Items];
  double slope_;
  double margin_;
  double per_weight_;
};

}  // namespace resample
