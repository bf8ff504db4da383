// Data-generating processes of the filter's models, with Boost.Random (the filter's own draws are
// Philox streams; the DGP uses an independent generator so that data and filter never share draws).
#pragma once

#include <cstdint>
#include <vector>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/seed_seq.hpp>
#include <boost/random/student_t_distribution.hpp>

#include "resample/bpf/linear_gaussian_model.hpp"
#include "resample/bpf/sv_model.hpp"

namespace resample::bpf {

struct simulation {
  std::vector<double> states;        ///< h_t (sv) or x_t (linear-Gaussian), t = 0 .. T-1
  std::vector<double> observations;  ///< y_t
};

namespace detail {
inline boost::random::mt19937 dgp_generator(std::uint64_t seed) {
  boost::random::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32), 0x5d6a1e37u};
  return boost::random::mt19937(seq);
}
template <class URBG>
double noise(URBG& g, double nu) {
  if (nu == 0.0) return boost::random::normal_distribution<double>(0.0, 1.0)(g);
  return boost::random::student_t_distribution<double>(nu)(g);
}
}  // namespace detail

/// T ticks of the SV model, seeded by `seed`.
inline simulation simulate(const sv_model& model, std::size_t ticks, std::uint64_t seed) {
  const auto& p = model.params();
  auto g = detail::dgp_generator(seed);
  simulation s;
  double h = p.mu + model.stationary_sd() * detail::noise(g, 0.0);
  for (std::size_t t = 0; t < ticks; ++t) {
    if (t > 0) h = p.mu + p.rho * (h - p.mu) + p.sigma * detail::noise(g, p.nu_state);
    s.states.push_back(h);
    s.observations.push_back(std::exp(0.5 * h) * detail::noise(g, p.nu_obs));
  }
  return s;
}

/// T ticks of the linear-Gaussian model, seeded by `seed`.
inline simulation simulate(const linear_gaussian_model& model, std::size_t ticks, std::uint64_t seed) {
  const auto& p = model.params();
  auto g = detail::dgp_generator(seed);
  simulation s;
  double x = model.stationary_sd() * detail::noise(g, 0.0);
  for (std::size_t t = 0; t < ticks; ++t) {
    if (t > 0) x = p.rho * x + p.sigma * detail::noise(g, 0.0);
    s.states.push_back(x);
    s.observations.push_back(x + p.tau * detail::noise(g, 0.0));
  }
  return s;
}

}  // namespace resample::bpf
