// The Metropolis resampler of Murray, Lee & Jacob (main article, section 3.1).
//
//   for each i:  k = i
//                for b = 1..B:  u ~ U(0, 1];  j ~ U{0..N-1};  if u <= w^j / w^k:  k = j
//                a^i = k
//
// Each a^i is B steps of an independent Metropolis chain on {0..N-1} targeting w / W, started at
// i; no sum over the weights is needed, only ratios, so it reads log-weights (ln u <= lw^j - lw^k).
// It is biased for finite B; the bias shrinks geometrically with B, and
//
//   B = ceil( ln(eps) / ln(1 - beta) ),   beta = mean(w) / max(w)
//
// (the article's rule, eps = 0.01 by default) bounds the total variation of each chain from its
// target by eps. beta = 1 (equal weights) gives B = 0; we use at least one step.
//
// One addition to the article's code, for the library's contract that a zero weight is never
// selected: a chain started on a zero weight accepts its first proposal of positive weight
// (w^j / 0 = inf), and if all B proposals hit zero weights it keeps proposing past B until one does
// (at least one weight is positive, so this ends almost surely). The article's code would return
// the zero-weight i there. Chains started on positive weights are exactly the article's.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "cpu_reference/uniform.hpp"
#include "resample/core/validate.hpp"

namespace resample::reference {

/// B = max(1, ceil(ln eps / ln(1 - mean w / max w))), from log-weights. Requires 0 < eps < 1.
inline std::size_t metropolis_steps(std::span<const double> log_w, double eps = 0.01) {
  validate_log_weights(log_w);
  if (!(eps > 0.0 && eps < 1.0)) {
    throw_bad_metropolis_eps(eps);
  }
  const double max_lw = *std::max_element(log_w.begin(), log_w.end());
  double mean_ratio = 0.0;  // mean(w) / max(w)
  for (const double lw : log_w) mean_ratio += std::exp(lw - max_lw);
  mean_ratio /= static_cast<double>(log_w.size());
  const double b = std::ceil(std::log(eps) / std::log1p(-mean_ratio));
  // Guard the cast: b is +inf only if mean_ratio rounds to 0, i.e. never for finite inputs.
  if (!(b < 1e18)) throw invalid_input("Metropolis step count overflows (weights too dispersed)");
  return std::max<std::size_t>(1, static_cast<std::size_t>(b));
}

template <class URBG = default_urbg>
std::vector<std::size_t> metropolis_ancestors(std::span<const double> log_w, std::size_t steps,
                                              URBG& rng) {
  validate_log_weights(log_w);
  if (steps == 0) throw invalid_input("Metropolis needs at least one step (B = 0)");
  const std::size_t n = log_w.size();
  constexpr double zero_weight = -std::numeric_limits<double>::infinity();
  std::vector<std::size_t> a(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t k = i;
    for (std::size_t b = 0; b < steps || log_w[k] == zero_weight; ++b) {
      const double u = uniform_open_closed(rng);
      const std::size_t j = uniform_index(rng, n);
      const bool accept = log_w[j] != zero_weight &&
                          (log_w[k] == zero_weight || std::log(u) <= log_w[j] - log_w[k]);
      if (accept) k = j;
    }
    a[i] = k;
  }
  return a;
}

}  // namespace resample::reference
