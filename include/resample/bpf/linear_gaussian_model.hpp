// The linear-Gaussian model, the filter's correctness yardstick (its likelihood is known exactly,
// by the Kalman filter in kalman.hpp), on host and device:
//
//   x_0 ~ N(0, sigma^2 / (1 - rho^2)),   x_t = rho x_{t-1} + sigma e_t,   y_t = x_t + tau n_t,
//
// e, n standard Gaussian. The first observation weights x_0 itself.
#pragma once

#include <cmath>

#include "resample/bpf/parameter_checks.hpp"
#include "resample/core/config.hpp"
#include "resample/core/random.hpp"

namespace resample::bpf {

struct linear_gaussian_parameters {
  double rho = 0.9;    ///< |rho| < 1
  double sigma = 1.0;  ///< state noise sd, > 0
  double tau = 1.0;    ///< observation noise sd, > 0
};

class linear_gaussian_model {
 public:

  explicit linear_gaussian_model(const linear_gaussian_parameters& p) : p_(p) {
    detail::check_autoregression(p.rho);
    detail::check_positive("sigma", p.sigma);
    detail::check_positive("tau", p.tau);
    stationary_sd_ = p.sigma / std::sqrt(1.0 - p.rho * p.rho);
    constexpr double pi = 3.14159265358979323846;
    log_norm_ = -0.5 * std::log(2.0 * pi * p.tau * p.tau);
    const double predictive_var = p.sigma * p.sigma + p.tau * p.tau;
    predictive_log_norm_ = -0.5 * std::log(2.0 * pi * predictive_var);
    inv_predictive_var_ = 1.0 / predictive_var;
    inv_tau2_ = 1.0 / (p.tau * p.tau);
  }

  [[nodiscard]] const linear_gaussian_parameters& params() const { return p_; }
  [[nodiscard]] double stationary_sd() const { return stationary_sd_; }
  // The host-computed constants of the densities, for kernels outside C++ (the PTX one).
  [[nodiscard]] double log_norm() const { return log_norm_; }
  [[nodiscard]] double predictive_log_norm() const { return predictive_log_norm_; }
  [[nodiscard]] double inv_predictive_var() const { return inv_predictive_var_; }
  [[nodiscard]] double inv_tau2() const { return inv_tau2_; }

  RESAMPLE_HOST_DEVICE double initial(philox_stream& s) const { return initial(polar_try(s)); }
  RESAMPLE_HOST_DEVICE double propagate(double x, philox_stream& s) const { return propagate(x, polar_try(s)); }
  /// The draw and the move from their accepted polar try (polar_try(s) gives the same as above).
  RESAMPLE_HOST_DEVICE double initial(const polar_point& p) const { return stationary_sd_ * standard_normal(p); }
  RESAMPLE_HOST_DEVICE double propagate(double x, const polar_point& p) const {
    return resample::detail::fused(p_.sigma, standard_normal(p), p_.rho * x);
  }
  RESAMPLE_HOST_DEVICE double log_likelihood(double y, double x) const {
    const double d = y - x;
    return resample::detail::fused(-0.5 * d, d * inv_tau2_, log_norm_);
  }
  /// The exact predictive density p(y_t | x_{t-1}) = N(y; rho x, sigma^2 + tau^2): with it the
  /// auxiliary filter's first stage is fully adapted in the weights.
  RESAMPLE_HOST_DEVICE double log_first_stage(double y, double x_prev) const {
    const double d = resample::detail::fused(-p_.rho, x_prev, y);  // y - rho x, one rounding on every backend
    return resample::detail::fused(-0.5 * d, d * inv_predictive_var_, predictive_log_norm_);
  }

 private:
  linear_gaussian_parameters p_;
  double stationary_sd_ = 0, log_norm_ = 0, predictive_log_norm_ = 0, inv_predictive_var_ = 0, inv_tau2_ = 0;
};

}  // namespace resample::bpf
