// The SV filter's matched-DGP suite (the seed project's nine scenarios) and its calibration check,
// shared by the CPU filter's test (bpf_sv_test.cpp) and the cuda filter's fast mode
// (gpu/bpf_cuda_fast_test.cpp).
//
// PITs of successive ticks are dependent (the filter's error persists), so the KS statistic and the
// coverage are judged on the effective number of independent ticks, n / tau, with tau the integrated
// autocorrelation time measured on the series itself (Geyer's initial positive sequence). For a
// Gaussian-copula-like dependence the indicators 1{u_t <= c} are less correlated than u_t, so using
// u_t's tau for every level c is conservative.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "resample/bpf/calibration.hpp"
#include "resample/bpf/particle_filter.hpp"
#include "resample/bpf/sv_model.hpp"

namespace resample::test {

struct sv_scenario {
  const char* name;
  double rho, sigma, mu, nu_state, nu_obs;
  std::uint64_t seed;  ///< of the simulated data: mu only rescales y, so equal seeds would give equal PITs
};

// rho, sigma_z, mu, state noise / observation noise (0 = Gaussian, 5 = t5).
inline constexpr sv_scenario sv_scenarios[] = {
    {"base_gauss_t5", 0.97, 0.15, -4.5, 0, 5, 1},  {"base_t5_t5", 0.97, 0.15, -4.5, 5, 5, 2},
    {"persistent", 0.995, 0.15, -4.5, 0, 5, 3},    {"volatile_state", 0.97, 0.30, -4.5, 0, 5, 4},
    {"low_level", 0.97, 0.15, -6.0, 0, 5, 5},      {"high_level", 0.97, 0.15, -2.0, 0, 5, 6},
    {"low_persistence", 0.90, 0.15, -4.5, 0, 5, 7}, {"gauss_gauss", 0.97, 0.15, -4.5, 0, 0, 8},
    {"wild_t5_t5", 0.85, 0.50, -4.5, 5, 5, 9}};

inline bpf::sv_model model_of(const sv_scenario& s) {
  return bpf::sv_model({.mu = s.mu, .rho = s.rho, .sigma = s.sigma, .nu_state = s.nu_state, .nu_obs = s.nu_obs});
}

/// A run on the model's own data is calibrated: the PIT of the true state uniform (KS on the
/// effective number of ticks) and the central 90% interval covering 90% of the ticks.
inline void expect_calibrated(const bpf::filter_run& run) {
  std::vector<double> pit, inside;
  for (const auto& t : run.ticks) {
    pit.push_back(t.pit);
    inside.push_back(t.pit >= 0.05 && t.pit <= 0.95 ? 1.0 : 0.0);
  }
  const auto ticks = static_cast<double>(pit.size());
  // KS: sqrt(n_eff) D against the Kolmogorov law's 0.1% point, 1.949.
  const double tau = bpf::autocorrelation_time(pit);
  const double n_eff = ticks / tau;
  const double d = bpf::ks_distance(pit);
  EXPECT_LT(d * std::sqrt(n_eff), 1.949) << "D " << d << ", tau " << tau;
  // Coverage of the central 90% interval: binomial sd with the indicator's own n_eff, 4 sd.
  const double coverage = std::accumulate(inside.begin(), inside.end(), 0.0) / ticks;
  const double n_cov = ticks / bpf::autocorrelation_time(inside);
  EXPECT_NEAR(coverage, 0.90, 4.0 * std::sqrt(0.09 / n_cov)) << "tau of the indicator " << ticks / n_cov;
  // And the PIT is informative: not all in the middle (a filter far too wide would put it there).
  EXPECT_GT(*std::max_element(pit.begin(), pit.end()), 0.97);
  EXPECT_LT(*std::min_element(pit.begin(), pit.end()), 0.03);
}

}  // namespace resample::test
