// Small statistics for the tests: normal quantiles and Bonferroni thresholds.
#pragma once

#include <cmath>
#include <cstddef>
#include <numeric>
#include <vector>

namespace resample::test {

/// Phi^{-1}(p) for p in (0, 1), by bisection on Phi(x) = erfc(-x / sqrt 2) / 2 (to 1e-12).
inline double normal_quantile(double p) {
  double lo = -40.0;
  double hi = 40.0;
  for (int k = 0; k < 200; ++k) {
    const double mid = 0.5 * (lo + hi);
    if (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

/// A sample's mean and the standard error of that mean (its sd over sqrt n; n >= 2).
struct mean_and_se {
  double mean, se;
};
inline mean_and_se mean_and_se_of(const std::vector<double>& x) {
  const auto n = static_cast<double>(x.size());
  const double mean = std::accumulate(x.begin(), x.end(), 0.0) / n;
  double ss = 0;
  for (double v : x) ss += (v - mean) * (v - mean);
  return {mean, std::sqrt(ss / (n - 1) / n)};
}

/// The |z| threshold that m two-sided z-tests exceed together with probability <= alpha.
inline double bonferroni_z(double alpha, std::size_t m) {
  return normal_quantile(1.0 - alpha / (2.0 * static_cast<double>(m)));
}

}  // namespace resample::test
