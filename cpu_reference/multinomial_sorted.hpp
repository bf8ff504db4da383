// Code 3 of Murray, Lee & Jacob (appendix B.1): serial, single-pass multinomial resampling by
// sorted uniforms (Bentley & Saxe, 1979).
//
//   W = EXCLUSIVE-PREFIX-SUM(w), W_tot = W^{N-1} + w^{N-1}
//   lnMax = 0; j = N - 1
//   for i = N, ..., 1:  lnMax += ln(u) / i with u ~ U(0, 1];  v = W_tot exp(lnMax)
//                       while v < W^j: j -= 1;   a^{i-1} = j
//
// exp(lnMax) runs through the order statistics of N uniforms from the largest down, so the
// ancestors come out sorted descending and a is distributed as Code 2's, sorted. O(N).
//
// Two deviations from the printed pseudocode, both for the zero-weight contract: u is drawn from
// (0, 1] so ln(u) is finite; and the scan also steps past j with w^j = 0, because rounding can give
// v = W_tot exactly, which with trailing zero weights would otherwise stop on a zero weight. With
// exclusive sums, a run of equal W^j means zero weights, and the loop stops on the last of a run,
// the one with positive weight, in every other case.
#pragma once

#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "cpu_reference/primitives.hpp"
#include "cpu_reference/uniform.hpp"
#include "resample/core/validate.hpp"

namespace resample::reference {

template <class URBG = default_urbg>
std::vector<std::size_t> multinomial_sorted_ancestors(std::span<const double> w, URBG& rng) {
  validate_weights(w);
  const std::size_t n = w.size();
  const std::vector<double> W = exclusive_prefix_sum(w);
  const double total = W[n - 1] + w[n - 1];
  double ln_max = 0.0;
  std::size_t j = n - 1;
  std::vector<std::size_t> a(n);
  for (std::size_t i = n; i >= 1; --i) {
    ln_max += std::log(uniform_open_closed(rng)) / static_cast<double>(i);
    const double v = total * std::exp(ln_max);
    // The scan stops at the first positive weight k at the latest (W^k = 0 <= v, w^k > 0), so
    // j > 0 is only a guard.
    while (j > 0 && (v < W[j] || w[j] == 0.0)) --j;
    a[i - 1] = j;
  }
  return a;
}

}  // namespace resample::reference
