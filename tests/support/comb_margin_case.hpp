// A case that only a comb whose margin covers its estimated weights' error gets right: log-weights
// and a step for which a comb point lies between some particle's estimated r (from
// resample::estimated_exp, off by 2^-31.78 at f = -1/2, its worst) and its true r: systematic's
// points k' + u (find_comb_margin_case), or multinomial-sorted's points K + u_t 2^-32 in the strata
// of r = B C / Q (find_sorted_margin_case). A comb that decided from the estimate with the margin
// B 2^-45 alone (the slope 2 eps dropped, or the margin left out of the point thresholds) would
// count that point on the wrong side; with it, the particle is undecided and takes the exact
// weights. Every weight but the first sits at d = -ln(2) / 2 (f = -1/2: the estimate above the
// true weight), or, for multinomial-sorted's second case, at d = -1.51 ln 2 (f = 0.49: below it);
// the runs start at multiples of 256 particles (a GPU warp's), where the estimate starts from the
// exact C.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "resample/core/estimated_exp.hpp"
#include "resample/core/exact_cdf.hpp"
#include "resample/core/philox.hpp"
#include "resample/core/sorted_points.hpp"
#include "resample/cpu/multinomial_sorted.hpp"
#include "resample/cpu/resample.hpp"
#include "support/test_weights.hpp"

namespace resample::test {

struct comb_margin_case {
  std::vector<double> lw;
  std::uint32_t step = 0;    // systematic's U: Philox (k, shared_index, step)
  std::size_t particle = 0;  // one whose estimate and true r have a point between them
};

constexpr double estimate_above = 0.34657359027997264;  // ln(2) / 2
constexpr double estimate_below = 1.0466522426455174;   // 1.51 ln 2

/// Margin-case weights over n particles; for each particle its true r = scale C / Q and its
/// estimate e from the estimated weights, the runs restarting from the exact r every 256.
struct margin_case_estimates {
  std::vector<double> lw;
  std::vector<long double> r, e;
};

/// The first weight at `lead`, the others at d = -lead: f = -1/2 for lead = ln(2) / 2 (the
/// estimate above the true weight), f = 0.49 for lead = 1.51 ln 2 (below it).
inline margin_case_estimates margin_case_estimates_of(std::size_t n, std::uint64_t scale, double lead) {
  margin_case_estimates m;
  m.lw.assign(n, 0.0);
  m.lw[0] = lead;
  const std::vector<u128> C = exact_cdf_of(exact_weights_of(m.lw));
  const long double Q = static_cast<long double>(C.back()), s = static_cast<long double>(scale);
  const long double per_unit = s * std::ldexp(1.0L, fraction_bits(n)) / Q;  // r per weight
  m.r.resize(n);
  m.e.resize(n);
  long double r_start = 0, W = 0;
  for (std::size_t j = 0; j < n; ++j) {
    if (j % 256 == 0) {
      r_start = j == 0 ? 0.0L : m.r[j - 1];
      W = 0;
    }
    W += estimated_exp(m.lw[j] - m.lw[0]);
    m.r[j] = s * static_cast<long double>(C[j]) / Q;
    m.e[j] = r_start + per_unit * W;
  }
  return m;
}

/// Whether a particle's estimated and true r lie far enough apart that a case there tests the
/// margin's slope: more than 4 times the combs' base margin, scale 2^-45 (scale = N for
/// systematic, B for multinomial-sorted). Nearer, a comb with the slope left out would still hold
/// the point within its base margin, and the case would catch nothing.
inline bool beyond_base_margin(long double e, long double r, std::size_t scale) {
  return std::fabs(e - r) > 4 * std::ldexp(static_cast<long double>(scale), -45);
}

/// Whether `point` lies in the middle half between a and b.
inline bool in_middle_half(long double point, long double a, long double b) {
  const long double lo = std::fmin(a, b), hi = std::fmax(a, b), quarter = (hi - lo) / 4;
  return point > lo + quarter && point < hi - quarter;
}

/// The first step (from 0) for which, for systematic with key k over n particles, a point k' + u
/// lies in the middle half between a particle's estimated r and its true r.
inline comb_margin_case find_comb_margin_case(std::size_t n, key k) {
  const margin_case_estimates m = margin_case_estimates_of(n, n, estimate_above);
  comb_margin_case c;
  c.lw = m.lw;
  for (std::uint32_t step = 0; step < 10000000; ++step) {
    const long double u = std::ldexp(static_cast<long double>(philox_stream(k, shared_index, step).next()), -32);
    for (std::size_t j = 0; j < n; ++j) {
      if (!beyond_base_margin(m.e[j], m.r[j], n)) continue;
      const long double point = std::floor(std::fmax(m.r[j], m.e[j]) - u) + u;  // the last point below both's max
      if (in_middle_half(point, m.r[j], m.e[j]) && point >= 0 && point < static_cast<long double>(n)) {
        c.step = step;
        c.particle = j;
        return c;
      }
    }
  }
  throw std::runtime_error("no step puts a point between an estimate and its r");
}

/// The first step (from 0) for which, for multinomial-sorted with key k over n particles, a point
/// K + u_t 2^-32 of stratum K = floor(r) (ranks [P_K, P_{K+1}), cpu::points_before_strata) lies in
/// the middle half between a particle's estimated r = B C / Q and its true r, with the estimate
/// above r (`above`: a point the estimate alone would count below r; the lower threshold's margin
/// keeps it) or below (a point it would count above; the upper threshold's margin, and the
/// comb's sending a point within the thresholds to the exact products, keep it).
inline comb_margin_case find_sorted_margin_case(std::size_t n, key k, bool above) {
  const sorted_points layout(n);
  const margin_case_estimates m = margin_case_estimates_of(n, layout.strata(), above ? estimate_above : estimate_below);
  comb_margin_case c;
  c.lw = m.lw;
  for (std::uint32_t step = 0; step < 100000; ++step) {
    const std::vector<std::uint32_t> P = cpu::points_before_strata(cpu::serial{}, layout, k, step);
    for (std::size_t j = 0; j < n; ++j) {
      const long double K = std::floor(m.r[j]);
      if (K != std::floor(m.e[j]) || K >= static_cast<long double>(layout.strata())) continue;  // an integer between
      if ((m.e[j] > m.r[j]) != above || !beyond_base_margin(m.e[j], m.r[j], layout.strata())) continue;
      const auto s = static_cast<std::uint64_t>(K);
      for (std::uint64_t t = P[s]; t < P[s + 1]; ++t) {
        const auto u = static_cast<long double>(sorted_points::point_offset(k, step, t));
        const long double point = K + std::ldexp(u, -32);
        if (in_middle_half(point, m.r[j], m.e[j])) {
          c.step = step;
          c.particle = j;
          return c;
        }
      }
    }
  }
  throw std::runtime_error("no step puts a sorted point between an estimate and its r");
}

}  // namespace resample::test
