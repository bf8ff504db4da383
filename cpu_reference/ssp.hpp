// SSP resampling (Srinivasan sampling process; Gerber, Chopin & Whiteley, "Negative association,
// ordering and convergence of resampling methods", Ann. Statist. 2019), serial, in double.
//
//   e_i = N w_i / W,  o_i = floor(e_i),  xi_i = e_i - o_i
//   resolve the fractions in index order, two at a time: the carried particle p (fraction a) meets
//   the next i with fraction b > 0:
//     a + b < 1:  with probability a / (a + b): xi_p = a + b, xi_i = 0;  else xi_i = a + b, xi_p = 0
//     a + b >= 1: with probability (1 - b) / (2 - a - b): xi_p = 1, xi_i = a + b - 1;  else the reverse
//   a fraction that reaches 1 is one more offspring; the survivor is carried on.
//
// Every step keeps E[xi], so E[o_i] = e_i; every o_i is floor(e_i) or ceil(e_i), like systematic,
// but the o_i are negatively associated. Not in the paper; the production backends' twin is
// include/resample/cpu/ssp.hpp, which does the same in exact integers.
#pragma once

#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "cpu_reference/cumulative_offspring_to_ancestors.hpp"
#include "cpu_reference/primitives.hpp"
#include "cpu_reference/uniform.hpp"
#include "resample/core/validate.hpp"

namespace resample::reference {

template <class URBG = default_urbg>
std::vector<std::size_t> ssp_offspring(std::span<const double> w, URBG& rng) {
  validate_weights(w);
  const std::size_t n = w.size();
  const double total = sum(w);
  std::vector<std::size_t> o(n);
  std::vector<double> xi(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double e = static_cast<double>(n) * (w[i] / total);
    o[i] = static_cast<std::size_t>(std::floor(e));
    xi[i] = e - std::floor(e);
  }
  std::size_t p = n;  // the carried particle; n: none
  for (std::size_t i = 0; i < n; ++i) {
    if (xi[i] <= 0.0) continue;
    if (p == n) {
      p = i;
      continue;
    }
    const double a = xi[p];
    const double b = xi[i];
    const double u = uniform_closed_open(rng);
    if (a + b < 1.0) {
      if (u < a / (a + b)) {
        xi[p] = a + b;
      } else {
        xi[i] = a + b;
        p = i;
      }
    } else if (u < (1.0 - b) / (2.0 - a - b)) {
      ++o[p];
      xi[i] = a + b - 1.0;
      p = xi[i] > 0.0 ? i : n;
    } else {
      ++o[i];
      xi[p] = a + b - 1.0;
      if (xi[p] <= 0.0) p = n;
    }
  }
  // Rounding can leave the last carried fraction a hair from 0 or 1 instead of exactly on it.
  if (p != n && xi[p] >= 0.5) ++o[p];
  return o;
}

template <class URBG = default_urbg>
std::vector<std::size_t> ssp_ancestors(std::span<const double> w, URBG& rng) {
  const std::vector<std::size_t> o = ssp_offspring(w, rng);
  return cumulative_offspring_to_ancestors(inclusive_prefix_sum(std::span<const std::size_t>(o)));
}

}  // namespace resample::reference
