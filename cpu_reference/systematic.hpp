// Code 5 of Murray, Lee & Jacob (appendix B.3): systematic resampling, as cumulative offspring.
//
//   u ~ U[0, 1);  W = INCLUSIVE-PREFIX-SUM(w)
//   for each i:  r^i = N (W^i / W^{N-1});  O^i = min(N, floor(r^i + u))
//
// Code 4 with one uniform shared by all strata: the points k + 1 - u, k = 0..N-1, so
// o^i = O^i - O^{i-1} is floor or ceil of N w^i / W, and E[o^i] = N w^i / W. A zero weight leaves
// O unchanged and gets no offspring. Use cumulative_offspring_to_ancestors (Code 8) for ancestors.
// r^i is computed as N (W^i / W^{N-1}) so that r^{N-1} = N exactly (see stratified.hpp).
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
std::vector<std::size_t> systematic_cumulative_offspring(std::span<const double> w, URBG& rng) {
  validate_weights(w);
  const std::size_t n = w.size();
  const double N = static_cast<double>(n);
  const double u = uniform_closed_open(rng);
  const std::vector<double> W = inclusive_prefix_sum(w);
  std::vector<std::size_t> O(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double r = N * (W[i] / W[n - 1]);  // W/W = 1 exactly, so r^{N-1} = N
    O[i] = std::min(n, static_cast<std::size_t>(std::floor(r + u)));
  }
  return O;
}

}  // namespace resample::reference
