// The stochastic-volatility model (DESIGN §6), on host and device:
//
//   h_0 ~ N(mu, sigma^2 / (1 - rho^2)),   h_t = mu + rho (h_{t-1} - mu) + sigma eps_t,
//   y_t = exp(h_t / 2) eta_t,
//
// with eps and eta each standard Gaussian (nu = 0) or standard Student-t with nu > 2 degrees of
// freedom (not rescaled to unit variance). The first observation weights h_0 itself. h_0 is drawn
// from the Gaussian stationary law even with Student-t state noise, as in `particles` and the seed
// project (for nu_state > 0 that is the law of an AR(1) with Gaussian noise of the same scale).
//
// Every draw and density is built from the deterministic exp/log and explicit fmas, so a particle's
// path is the same bits on every backend given the same Philox stream.
#pragma once

#include <cmath>

#include "resample/bpf/parameter_checks.hpp"
#include "resample/core/config.hpp"
#include "resample/core/deterministic_math.hpp"
#include "resample/core/random.hpp"

namespace resample::bpf {

struct sv_parameters {
  double mu = -1.02;      ///< mean log-variance
  double rho = 0.9702;    ///< persistence, |rho| < 1
  double sigma = 0.178;   ///< scale of the state noise, > 0
  double nu_state = 0.0;  ///< state noise: 0 = Gaussian, else Student-t degrees of freedom (> 2)
  double nu_obs = 0.0;    ///< observation noise: 0 = Gaussian, else Student-t degrees of freedom (> 2)
};

class sv_model {
 public:

  /// Checks the parameters (invalid_input naming the first bad one) and computes the constants.
  explicit sv_model(const sv_parameters& p) : p_(p) {
    detail::check_finite("mu", p.mu);
    detail::check_autoregression(p.rho);
    detail::check_positive("sigma", p.sigma);
    detail::check_degrees_of_freedom("nu_state", p.nu_state);
    detail::check_degrees_of_freedom("nu_obs", p.nu_obs);
    stationary_sd_ = p.sigma / std::sqrt(1.0 - p.rho * p.rho);
    // log of the noise density's normalising constant; computed once on the host, so libm's last
    // bits here are shared by every backend.
    constexpr double pi = 3.14159265358979323846;
    log_norm_ = p.nu_obs == 0.0 ? -0.5 * std::log(2.0 * pi)
                                : std::lgamma(0.5 * (p.nu_obs + 1.0)) - std::lgamma(0.5 * p.nu_obs) -
                                      0.5 * std::log(p.nu_obs * pi);
  }

  [[nodiscard]] const sv_parameters& params() const { return p_; }
  [[nodiscard]] double stationary_sd() const { return stationary_sd_; }
  /// log of the observation density's normalising constant (for kernels outside C++: the PTX one).
  [[nodiscard]] double log_norm() const { return log_norm_; }

  RESAMPLE_HOST_DEVICE double initial(philox_stream& s) const { return initial(polar_try(s)); }
  /// The draw from its accepted polar try (polar_try(s) gives the same as initial(s)).
  RESAMPLE_HOST_DEVICE double initial(const polar_point& p) const {
    return resample::detail::fused(stationary_sd_, standard_normal(p), p_.mu);
  }

  /// E[h_t | h_{t-1}]: the auxiliary filter's point prediction.
  RESAMPLE_HOST_DEVICE double predicted_mean(double h) const { return resample::detail::fused(p_.rho, h - p_.mu, p_.mu); }

  RESAMPLE_HOST_DEVICE double propagate(double h, philox_stream& s) const { return propagate(h, polar_try(s)); }
  /// The move from its accepted polar try (polar_try(s) gives the same as propagate(h, s)).
  RESAMPLE_HOST_DEVICE double propagate(double h, const polar_point& p) const {
    const double eps = p_.nu_state == 0.0 ? standard_normal(p) : student_t(p, p_.nu_state);
    return resample::detail::fused(p_.sigma, eps, predicted_mean(h));
  }

  /// log g(y | h), the density of y = exp(h / 2) eta at y.
  RESAMPLE_HOST_DEVICE double log_likelihood(double y, double h) const {
    // z = (y / exp(h/2))^2; y = 0 gives 0 even where exp(-h) overflows.
    const double z = y == 0.0 ? 0.0 : y * y * deterministic_exp(-h);
    const double base = log_norm_ - 0.5 * h;  // 0.5 h is exact, so fusing it cannot change bits
    if (p_.nu_obs == 0.0) return resample::detail::fused(-0.5, z, base);
    // The product is fused explicitly: a compiler may not fuse it on one backend and not another.
    return resample::detail::fused(-0.5 * (p_.nu_obs + 1.0), deterministic_log(1.0 + z / p_.nu_obs), base);
  }

  /// The auxiliary filter's first-stage weight: g at the predicted state.
  RESAMPLE_HOST_DEVICE double log_first_stage(double y, double h_prev) const {
    return log_likelihood(y, predicted_mean(h_prev));
  }

 private:
  sv_parameters p_;
  double stationary_sd_ = 0;
  double log_norm_ = 0;
};

}  // namespace resample::bpf
