// Residual resampling (Liu & Chen, 1998); the paper's appendix B.3 mentions it and leaves it out.
//
//   x^i = N w^i / W;  o^i = floor(x^i) + m^i,
//   (m^0..m^{N-1}) ~ Multinomial(R; r / sum r),  r^i = x^i - floor(x^i),  R = N - sum_i floor(x^i)
//
// The residual draw uses Code 2 (prefix sum + LOWER-BOUND) on r. E[o^i] = N w^i / W and
// Var(o^i) is at most multinomial's (Douc & Cappe, 2005). A zero weight has x = r = 0 and gets
// nothing. Rounding in x^i can, for crafted weights, put sum floor(x^i) one above N; then the
// floors with the smallest residuals give one back each, which moves E[o] by O(N eps).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <span>
#include <vector>

#include "cpu_reference/cumulative_offspring_to_ancestors.hpp"
#include "cpu_reference/primitives.hpp"
#include "cpu_reference/uniform.hpp"
#include "resample/core/validate.hpp"

namespace resample::reference {

template <class URBG = default_urbg>
std::vector<std::size_t> residual_offspring(std::span<const double> w, URBG& rng) {
  validate_weights(w);
  const std::size_t n = w.size();
  const double total = sum(w);
  std::vector<std::size_t> o(n);
  std::vector<double> r(n);
  std::size_t assigned = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(n) * w[i] / total;
    const double fl = std::floor(x);
    o[i] = static_cast<std::size_t>(fl);
    r[i] = x - fl;
    assigned += o[i];
  }
  while (assigned > n) {  // rounding only; see the file comment
    std::size_t give = n;
    for (std::size_t i = 0; i < n; ++i) {
      if (o[i] > 0 && (give == n || r[i] < r[give])) give = i;
    }
    --o[give];
    r[give] += 1.0;
    --assigned;
  }
  const std::size_t remaining = n - assigned;
  if (remaining > 0) {
    const std::vector<double> R = inclusive_prefix_sum(std::span<const double>(r));
    for (std::size_t m = 0; m < remaining; ++m) {
      const double u = R.back() * uniform_open_closed(rng);
      ++o[std::min(lower_bound(std::span<const double>(R), u), n - 1)];
    }
  }
  return o;
}

template <class URBG = default_urbg>
std::vector<std::size_t> residual_ancestors(std::span<const double> w, URBG& rng) {
  const std::vector<std::size_t> o = residual_offspring(w, rng);
  return cumulative_offspring_to_ancestors(inclusive_prefix_sum(std::span<const std::size_t>(o)));
}

}  // namespace resample::reference
