// Code 2 of Murray, Lee & Jacob (appendix B.1): multinomial resampling by prefix sum and
// binary search.
//
//   W = INCLUSIVE-PREFIX-SUM(w);  for each i: u^i ~ U(0, W^{N-1}],  a^i = LOWER-BOUND(W, u^i)
//
// so P(a^i = j) = w^j / W^{N-1}, independently over i. O(N log N). The paper draws
// u ~ U[0, W]; we draw from (0, W] so that u = 0 cannot land on a leading zero weight
// (LOWER-BOUND would return it), which keeps the contract that zero weights are never chosen.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "cpu_reference/primitives.hpp"
#include "cpu_reference/uniform.hpp"
#include "resample/core/validate.hpp"

namespace resample::reference {

template <class URBG = default_urbg>
std::vector<std::size_t> multinomial_ancestors(std::span<const double> w, URBG& rng) {
  validate_weights(w);
  const std::vector<double> W = inclusive_prefix_sum(w);
  const double total = W.back();
  const std::size_t n = w.size();
  std::vector<std::size_t> a(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = total * uniform_open_closed(rng);
    // u <= total = W^{N-1}, so the search always finds an index; min() guards nothing else.
    a[i] = std::min(lower_bound(std::span<const double>(W), u), n - 1);
  }
  return a;
}

}  // namespace resample::reference
