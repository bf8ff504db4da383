// The benchmark weights of Murray, Lee & Jacob (section 4): w^i = phi(x^i + y), x^i ~ N(0, 1)
// iid, phi the standard normal density. y sets the dispersion: y = 0 gives mild weights, y = 4
// weights spread over about 20 orders of magnitude, as after an informative observation.
#pragma once

#include <cmath>
#include <cstddef>
#include <numbers>
#include <vector>

#include <boost/random/normal_distribution.hpp>

#include "cpu_reference/uniform.hpp"

namespace resample::reference {

/// Log-weights ln phi(x^i + y) = -(x^i + y)^2 / 2 - ln(2 pi) / 2, i = 0..n-1.
template <class URBG = default_urbg>
std::vector<double> paper_log_weights(std::size_t n, double y, URBG& rng) {
  boost::random::normal_distribution<double> normal(0.0, 1.0);
  const double log_norm = 0.5 * std::log(2.0 * std::numbers::pi);
  std::vector<double> lw(n);
  for (double& v : lw) {
    const double z = normal(rng) + y;
    v = -0.5 * z * z - log_norm;
  }
  return lw;
}

}  // namespace resample::reference
