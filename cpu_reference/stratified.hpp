// Code 4 of Murray, Lee & Jacob (appendix B.2): stratified resampling (Kitagawa, 1996), as
// cumulative offspring.
//
//   u^k ~ U[0, 1) iid for k = 0..N-1;  W = INCLUSIVE-PREFIX-SUM(w)
//   for each i:  r^i = N (W^i / W^{N-1});  k^i = min(N - 1, floor(r^i));  O^i = min(N, floor(r^i + u^{k^i}))
//
// Equivalently, one point k + 1 - u^k in each stratum (k, k + 1], and O^i counts the points at or
// below r^i: E[o^i] = N w^i / W exactly, and Var(o^i) is at most multinomial's (Douc & Cappe,
// 2005). The stratum index is 0-based here (the paper's k^i = floor(r^i) + 1). A zero weight
// leaves r^i, hence O^i, unchanged, so it gets no offspring. Use
// cumulative_offspring_to_ancestors (Code 8) for ancestors.
// r^i is computed as N (W^i / W^{N-1}) rather than (N W^i) / W^{N-1}: the quotient of equal numbers is
// exactly 1, so O^{N-1} = N even for u = 0, where the printed order can round r^{N-1} below N.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "cpu_reference/primitives.hpp"
#include "cpu_reference/uniform.hpp"
#include "resample/core/validate.hpp"

namespace resample::reference {

template <class URBG = default_urbg>
std::vector<std::size_t> stratified_cumulative_offspring(std::span<const double> w, URBG& rng) {
  validate_weights(w);
  const std::size_t n = w.size();
  const double N = static_cast<double>(n);
  std::vector<double> u(n);
  for (double& x : u) x = uniform_closed_open(rng);
  const std::vector<double> W = inclusive_prefix_sum(w);
  std::vector<std::size_t> O(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double r = N * (W[i] / W[n - 1]);  // W/W = 1 exactly, so r^{N-1} = N
    const std::size_t k = std::min(n - 1, static_cast<std::size_t>(std::floor(r)));
    O[i] = std::min(n, static_cast<std::size_t>(std::floor(r + u[k])));
  }
  return O;
}

}  // namespace resample::reference
