// The rejection resampler of Murray, Lee & Jacob (main article, section 3.2).
//
//   for each i:  j = i;  u ~ U(0, 1]
//                while u > w^j / w_bound:  j ~ U{0..N-1};  u ~ U(0, 1]
//                a^i = j
//
// w_bound >= max_j w^j is required. Every proposal after the first is uniform and accepted with
// probability w^j / w_bound, so
//   P(a^i = k) = [i = k] w^i / w_bound + (1 - w^i / w_bound) w^k / W,
// and summing over i gives E[o^k] = N w^k / W: unbiased, although starting at j = i (rather than
// at a uniform j) makes the a^i not identically distributed. The expected number of proposals per
// particle is at most w_bound / mean(w). Works on log-weights (ln u <= lw^j - ln w_bound); a zero
// weight is never accepted because u > 0.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "cpu_reference/uniform.hpp"
#include "resample/core/validate.hpp"

namespace resample::reference {

/// Throws unless log_bound is finite and >= every log-weight (naming the first that exceeds it).
inline void validate_rejection_bound(std::span<const double> log_w, double log_bound) {
  if (!std::isfinite(log_bound)) {
    throw_rejection_bound_not_finite(log_bound);
  }
  for (std::size_t i = 0; i < log_w.size(); ++i) {
    if (log_w[i] > log_bound) {
      throw_rejection_bound_below(log_bound, log_w[i], i);
    }
  }
}

template <class URBG = default_urbg>
std::vector<std::size_t> rejection_ancestors(std::span<const double> log_w, double log_bound,
                                             URBG& rng) {
  validate_log_weights(log_w);
  validate_rejection_bound(log_w, log_bound);
  const std::size_t n = log_w.size();
  std::vector<std::size_t> a(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t j = i;
    double u = uniform_open_closed(rng);
    while (std::log(u) > log_w[j] - log_bound) {
      j = uniform_index(rng, n);
      u = uniform_open_closed(rng);
    }
    a[i] = j;
  }
  return a;
}

/// With the tightest bound, the largest log-weight.
template <class URBG = default_urbg>
std::vector<std::size_t> rejection_ancestors(std::span<const double> log_w, URBG& rng) {
  validate_log_weights(log_w);
  return rejection_ancestors(log_w, *std::max_element(log_w.begin(), log_w.end()), rng);
}

}  // namespace resample::reference
