// Parameter checks shared by the filter's models: each names the parameter and the value refused.
#pragma once

#include <cmath>
#include <string>

#include "resample/core/error.hpp"
#include "resample/core/validate.hpp"

namespace resample::bpf::detail {

[[noreturn]] inline void refuse(const char* name, double value, const char* rule) {
  throw invalid_input(std::string(name) + " = " + resample::detail::format_value(value) + " is invalid: " + rule);
}

inline void check_finite(const char* name, double value) {
  if (!std::isfinite(value)) refuse(name, value, "it must be finite");
}
/// |rho| < 1: the state is stationary, so h_0 has a law to start from.
inline void check_autoregression(double rho) {
  if (!(std::fabs(rho) < 1.0)) refuse("rho", rho, "the model needs |rho| < 1 (a stationary state)");
}
inline void check_positive(const char* name, double value) {
  if (!(value > 0.0) || !std::isfinite(value)) refuse(name, value, "it must be finite and > 0");
}
/// nu = 0 means Gaussian; a Student-t needs nu > 2 (finite variance).
inline void check_degrees_of_freedom(const char* name, double nu) {
  if (!(nu == 0.0 || (nu > 2.0 && std::isfinite(nu)))) {
    refuse(name, nu, "it must be 0 (Gaussian noise) or a finite number > 2 (Student-t)");
  }
}

}  // namespace resample::bpf::detail
