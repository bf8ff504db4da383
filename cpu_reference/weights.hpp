// A validated weight vector held in both forms the references use.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "resample/core/validate.hpp"

namespace resample::reference {

/// Weights as linear values and as logs, for schemes that work on either (appendix E):
/// multinomial, stratified, systematic and residual read `linear`; Metropolis and rejection,
/// which only need ratios w_j / w_k, read `log`. Built from log-weights, the linear form is
/// w_i = exp(lw_i - max_j lw_j) so that the largest weight is 1 and nothing underflows needlessly.
struct weights {
  std::vector<double> linear;
  std::vector<double> log;

  [[nodiscard]] std::size_t size() const { return linear.size(); }

  /// Validates (see validate_weights) and keeps w as given; log w_i = log(w_i), -inf for zeros.
  static weights from_linear(std::span<const double> w) {
    validate_weights(w);
    weights out;
    out.linear.assign(w.begin(), w.end());
    out.log.resize(w.size());
    std::transform(w.begin(), w.end(), out.log.begin(), [](double x) { return std::log(x); });
    return out;
  }

  /// Validates (see validate_log_weights), keeps lw as given and sets w_i = exp(lw_i - max lw).
  static weights from_log(std::span<const double> lw) {
    validate_log_weights(lw);
    weights out;
    out.log.assign(lw.begin(), lw.end());
    const double max_lw = *std::max_element(lw.begin(), lw.end());
    out.linear.resize(lw.size());
    std::transform(lw.begin(), lw.end(), out.linear.begin(),
                   [max_lw](double x) { return std::exp(x - max_lw); });
    return out;
  }
};

}  // namespace resample::reference
