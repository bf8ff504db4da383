// The paper's accuracy metrics for a resampler, accumulated over R independent draws of the
// offspring vector o (Murray, Lee & Jacob, section 4):
//
//   bias^2    = sum_i (mean_r o_i - e_i)^2           e_i = N w_i / W, the target E[o_i]
//   trace var = sum_i var_r(o_i)                     (sample variance, divisor R - 1)
//   MSE / N   = mean_r sum_i (o_i - e_i)^2 / N
//
// bias^2 as computed also holds the noise of the mean, about trace var / R; compare with that.
#pragma once

#include <cstddef>
#include <span>
#include <stdexcept>
#include <vector>

namespace resample {

class offspring_metrics {
 public:
  explicit offspring_metrics(std::vector<double> expected)
      : expected_(std::move(expected)), sum_(expected_.size(), 0.0), sum_sq_(expected_.size(), 0.0) {}

  /// Adds one draw; o must have one entry per particle.
  void add(std::span<const std::size_t> o) {
    if (o.size() != expected_.size()) throw std::invalid_argument("offspring_metrics: size mismatch");
    double squared_error = 0.0;
    for (std::size_t i = 0; i < o.size(); ++i) {
      const double x = static_cast<double>(o[i]);
      sum_[i] += x;
      sum_sq_[i] += x * x;
      squared_error += (x - expected_[i]) * (x - expected_[i]);
    }
    squared_error_ += squared_error;
    ++reps_;
  }

  [[nodiscard]] std::size_t size() const { return expected_.size(); }
  [[nodiscard]] std::size_t reps() const { return reps_; }
  [[nodiscard]] double expected(std::size_t i) const { return expected_[i]; }
  [[nodiscard]] double mean(std::size_t i) const { return sum_[i] / static_cast<double>(reps_); }

  /// Sample variance of o_i (divisor R - 1); needs R >= 2.
  [[nodiscard]] double variance(std::size_t i) const {
    const double r = static_cast<double>(reps_);
    const double v = (sum_sq_[i] - sum_[i] * sum_[i] / r) / (r - 1.0);
    return v > 0.0 ? v : 0.0;  // cancellation can leave -0 or -tiny for a constant o_i
  }

  [[nodiscard]] double bias_squared() const {
    double total = 0.0;
    for (std::size_t i = 0; i < size(); ++i) total += (mean(i) - expected_[i]) * (mean(i) - expected_[i]);
    return total;
  }

  [[nodiscard]] double variance_trace() const {
    double total = 0.0;
    for (std::size_t i = 0; i < size(); ++i) total += variance(i);
    return total;
  }

  [[nodiscard]] double mse_per_particle() const {
    return squared_error_ / static_cast<double>(reps_) / static_cast<double>(size());
  }

 private:
  std::vector<double> expected_;
  std::vector<double> sum_;
  std::vector<double> sum_sq_;
  double squared_error_ = 0.0;
  std::size_t reps_ = 0;
};

/// e_i = N w_i / W, the expected offspring of an unbiased resampler, from linear weights.
inline std::vector<double> expected_offspring(std::span<const double> w) {
  double total = 0.0;
  for (const double x : w) total += x;
  std::vector<double> e(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) e[i] = static_cast<double>(w.size()) * w[i] / total;
  return e;
}

}  // namespace resample
