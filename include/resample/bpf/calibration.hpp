// Statistics for judging a filter's calibration from the PITs of true states, u_t = F_t(x_t):
// uniform if the filter is calibrated. Successive u_t are dependent (the filter's error persists),
// so tests judge them on n / tau effective ticks, tau the integrated autocorrelation time.
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <vector>

namespace resample::bpf {

/// The Kolmogorov-Smirnov distance sup_u |F_n(u) - u| of a sample of PITs.
inline double ks_distance(std::vector<double> u) {
  std::sort(u.begin(), u.end());
  const double n = static_cast<double>(u.size());
  double d = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    d = std::max({d, static_cast<double>(i + 1) / n - u[i], u[i] - static_cast<double>(i) / n});
  }
  return d;
}

/// Integrated autocorrelation time 1 + 2 sum_k rho_k of a series, summed over Geyer's initial
/// positive sequence of pairs (rho_{2m} + rho_{2m+1} > 0); at least 1.
inline double autocorrelation_time(const std::vector<double>& x) {
  const std::size_t n = x.size();
  if (n < 4) return 1.0;
  const double mean = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(n);
  auto autocov = [&](std::size_t lag) {
    double s = 0;
    for (std::size_t t = 0; t + lag < n; ++t) s += (x[t] - mean) * (x[t + lag] - mean);
    return s / static_cast<double>(n);
  };
  const double var = autocov(0);
  if (!(var > 0)) return 1.0;
  double tau = -1.0;  // -rho_0, since the pairs below count rho_0 twice
  for (std::size_t m = 0; 2 * m + 1 < n / 2; ++m) {
    const double pair = (autocov(2 * m) + autocov(2 * m + 1)) / var;
    if (pair <= 0) break;
    tau += 2.0 * pair;
  }
  return std::max(tau, 1.0);
}

}  // namespace resample::bpf
