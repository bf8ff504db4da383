// A case that only a comb whose margin covers its estimated weights' error gets right: log-weights
// and a systematic step for which a comb point lies between some particle's estimated r (from
// resample::estimated_exp, off by 2^-31.78 at f = -1/2, its worst) and its true r. A comb that
// decided from the estimate with the margin N 2^-45 alone (the slope 2 eps dropped) would count that
// point on the wrong side; with the slope, the particle is undecided and takes the exact weights.
// Every weight but the first sits at d = -ln(2) / 2; the runs start at multiples of 256 particles
// (a GPU warp's), where the estimate starts from the exact C.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "resample/core/estimated_exp.hpp"
#include "resample/core/exact_cdf.hpp"
#include "resample/core/philox.hpp"
#include "support/test_weights.hpp"

namespace resample::test {

struct comb_margin_case {
  std::vector<double> lw;
  std::uint32_t step = 0;    // systematic's U: Philox (k, shared_index, step)
  std::size_t particle = 0;  // one whose estimate and true r have a point between them
};

/// The first step (from 0) for which, for systematic with key k over n particles, a point k' + u
/// lies in the middle half between a particle's estimated r and its true r.
inline comb_margin_case find_comb_margin_case(std::size_t n, key k) {
  comb_margin_case c;
  c.lw.assign(n, 0.0);
  c.lw[0] = 0.34657359027997264;  // ln(2) / 2: the others at d = -ln(2) / 2, f = -1/2
  const std::vector<u128> C = exact_cdf_of(exact_weights_of(c.lw));
  const long double Q = static_cast<long double>(C.back());
  const long double per_unit = static_cast<long double>(n) * std::ldexp(1.0L, fraction_bits(n)) / Q;  // r per weight
  std::vector<long double> r(n), e(n);
  long double r_start = 0, W = 0;
  for (std::size_t m = 0; m < n; ++m) {
    if (m % 256 == 0) {
      r_start = m == 0 ? 0.0L : r[m - 1];
      W = 0;
    }
    W += estimated_exp(c.lw[m] - c.lw[0]);
    r[m] = static_cast<long double>(n) * static_cast<long double>(C[m]) / Q;
    e[m] = r_start + per_unit * W;
  }
  for (std::uint32_t step = 0; step < 10000000; ++step) {
    const long double u = std::ldexp(static_cast<long double>(philox_stream(k, shared_index, step).next()), -32);
    for (std::size_t m = 0; m < n; ++m) {
      const long double lo = std::fmin(r[m], e[m]), hi = std::fmax(r[m], e[m]), quarter = (hi - lo) / 4;
      const long double point = std::floor(hi - u) + u;  // the last point below hi
      if (point > lo + quarter && point < hi - quarter && point >= 0 && point < static_cast<long double>(n)) {
        c.step = step;
        c.particle = m;
        return c;
      }
    }
  }
  throw std::runtime_error("no step puts a point between an estimate and its r");
}

}  // namespace resample::test
