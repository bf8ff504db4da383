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
/// which only need ratios w_j / w_k, read `log`. Either way the largest linear weight is 1
/// (w_i = exp(lw_i - max_j lw_j), or w_i / max_j w_j), so sums cannot overflow.
struct weights {
  std::vector<double> linear;
  std::vector<double> log;

  [[nodiscard]] std::size_t size() const { return linear.size(); }

  /// Validates the values (see validate_weight_values), then scales w so that the largest weight is
  /// 1, as from_log does, so that no sum overflows; log w_i = log(w_i / max w), -inf for zeros.
  static weights from_linear(std::span<const double> w) {
    validate_weight_values(w);
    const double max_w = *std::max_element(w.begin(), w.end());
    weights out;
    out.linear.resize(w.size());
    std::transform(w.begin(), w.end(), out.linear.begin(), [max_w](double x) { return x / max_w; });
    out.log.resize(w.size());
    std::transform(out.linear.begin(), out.linear.end(), out.log.begin(), [](double x) { return std::log(x); });
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
