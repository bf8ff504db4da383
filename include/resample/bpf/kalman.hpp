// The exact filter of the linear-Gaussian model (linear_gaussian_model.hpp): the Kalman filter,
// with the first observation weighting x_0 itself, as the particle filter does. It is the yardstick
// the particle filter's likelihood and filtered means are tested against.
#pragma once

#include <cmath>
#include <span>
#include <vector>

#include "resample/bpf/linear_gaussian_model.hpp"

namespace resample::bpf {

struct kalman_result {
  double log_likelihood = 0;      ///< log p(y_0, ..., y_{T-1})
  std::vector<double> mean;       ///< E[x_t | y_0..y_t]
  std::vector<double> variance;   ///< Var[x_t | y_0..y_t]
  std::vector<double> increment;  ///< log p(y_t | y_0..y_{t-1})
};

inline kalman_result kalman_filter(const linear_gaussian_model& model, std::span<const double> y) {
  const auto& p = model.params();
  constexpr double two_pi = 6.283185307179586;
  kalman_result r;
  double m = 0.0;                                      // predicted mean of x_t
  double v = model.stationary_sd() * model.stationary_sd();  // predicted variance
  for (std::size_t t = 0; t < y.size(); ++t) {
    if (t > 0) {
      m = p.rho * m;
      v = p.rho * p.rho * v + p.sigma * p.sigma;
    }
    const double s = v + p.tau * p.tau;  // Var[y_t | y_0..y_{t-1}]
    const double e = y[t] - m;
    const double inc = -0.5 * (std::log(two_pi * s) + e * e / s);
    const double gain = v / s;
    m += gain * e;
    v *= 1.0 - gain;
    r.increment.push_back(inc);
    r.log_likelihood += inc;
    r.mean.push_back(m);
    r.variance.push_back(v);
  }
  return r;
}

}  // namespace resample::bpf
