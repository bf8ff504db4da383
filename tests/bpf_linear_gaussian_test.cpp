// The particle filter against the exact answer: on the linear-Gaussian model the Kalman filter gives
// the likelihood and the filtered means, so the bootstrap and auxiliary filters' estimates are
// tested against them, with tolerances from the spread measured over independent runs.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "resample/bpf/kalman.hpp"
#include "resample/bpf/particle_filter.hpp"
#include "resample/bpf/simulate.hpp"
#include "resample/cpu/executor.hpp"
#include "support/stats.hpp"

namespace {

using resample::bpf::filter_kind;
using resample::bpf::filter_options;
using resample::bpf::kalman_filter;
using resample::bpf::linear_gaussian_model;

constexpr double two_pi = 6.283185307179586;

filter_options options(std::size_t n, std::uint64_t seed, double threshold, filter_kind kind = filter_kind::bootstrap,
                       double jitter = 0.0) {
  filter_options o;
  o.particles = n;
  o.seed = seed;
  o.ess_threshold = threshold;
  o.kind = kind;
  o.jitter = jitter;
  return o;
}

const linear_gaussian_model model({.rho = 0.9, .sigma = 1.0, .tau = 1.0});

TEST(Kalman, OneObservationIsTheStationaryMarginal) {
  const std::vector<double> y = {0.7};
  const double v = 1.0 / (1.0 - 0.81) + 1.0;  // Var y_0 = sigma^2 / (1 - rho^2) + tau^2
  EXPECT_NEAR(kalman_filter(model, y).log_likelihood, -0.5 * (std::log(two_pi * v) + 0.49 / v), 1e-13);
}

TEST(Kalman, TwoObservationsAreTheBivariateNormalDensity) {
  const std::vector<double> y = {0.7, -1.3};
  const double p0 = 1.0 / (1.0 - 0.81);
  const double a = p0 + 1.0, c = 0.9 * p0;  // Var y_t, Cov(y_0, y_1)
  const double det = a * a - c * c;
  const double q = (a * y[0] * y[0] - 2.0 * c * y[0] * y[1] + a * y[1] * y[1]) / det;
  EXPECT_NEAR(kalman_filter(model, y).log_likelihood, -std::log(two_pi) - 0.5 * std::log(det) - 0.5 * q, 1e-12);
  // E[x_1 | y_0, y_1]: the regression of x_1 on (y_0, y_1).
  const double cov_x1_y0 = 0.9 * p0, cov_x1_y1 = p0;
  const double m = ((a * cov_x1_y0 - c * cov_x1_y1) * y[0] + (a * cov_x1_y1 - c * cov_x1_y0) * y[1]) / det;
  EXPECT_NEAR(kalman_filter(model, y).mean[1], m, 1e-12);
}

struct config {
  const char* name;
  filter_kind kind;
  double threshold;
};

class FilterVsKalman : public ::testing::TestWithParam<config> {};

// p^(y) is unbiased for p(y) whatever the resampling rule, if the weights are carried between
// resamplings: the ratio r = p^(y) / p(y) has mean 1. R independent runs give its mean and the
// standard error from their spread; z = (mean r - 1) / SE must be small.
TEST_P(FilterVsKalman, LikelihoodIsUnbiased) {
  const auto data = resample::bpf::simulate(model, 50, 11);
  const double exact = kalman_filter(model, data.observations).log_likelihood;
  resample::cpu::serial ex;
  constexpr int reps = 200;
  std::vector<double> ratio;
  for (int r = 0; r < reps; ++r) {
    const auto opt = options(512, 1000u + static_cast<unsigned>(r), GetParam().threshold, GetParam().kind);
    ratio.push_back(std::exp(resample::bpf::run_filter(model, ex, std::span<const double>(data.observations), opt)
                                 .log_likelihood -
                             exact));
  }
  const auto [mean, se] = resample::test::mean_and_se_of(ratio);
  EXPECT_LT(std::fabs(mean - 1.0), 4.0 * se) << "mean ratio " << mean << ", SE " << se;
  // The test has power: the ratio's relative sd at N = 512 over 50 ticks is below 1, so 4 SE is
  // under 0.3 (a filter that drops the weights carried between resamplings is off by more).
  EXPECT_LT(se * std::sqrt(double{reps}), 1.0);
}

// Filtered means: at each tick, the mean over R runs of (m_pf - m_kalman) must be within
// z SE of 0 (SE from the runs' spread; the O(1/N) bias is far below it), and the filter's
// sd close to Kalman's.
TEST_P(FilterVsKalman, FilteredMeansMatchKalman) {
  const auto data = resample::bpf::simulate(model, 40, 12);
  const auto exact = kalman_filter(model, data.observations);
  resample::cpu::serial ex;
  constexpr int reps = 24;
  const std::size_t ticks = data.observations.size();
  std::vector<double> sum(ticks), sum2(ticks), sd_ratio(ticks);
  for (int r = 0; r < reps; ++r) {
    const auto opt = options(2048, 77u + static_cast<unsigned>(r), GetParam().threshold, GetParam().kind);
    const auto run = resample::bpf::run_filter(model, ex, std::span<const double>(data.observations), opt);
    for (std::size_t t = 0; t < ticks; ++t) {
      const double d = run.ticks[t].mean - exact.mean[t];
      sum[t] += d;
      sum2[t] += d * d;
      sd_ratio[t] += run.ticks[t].sd / std::sqrt(exact.variance[t]) / reps;
    }
  }
  const double z = resample::test::bonferroni_z(1e-3, ticks);
  for (std::size_t t = 0; t < ticks; ++t) {
    const double mean = sum[t] / reps;
    const double se = std::sqrt((sum2[t] / reps - mean * mean) / (reps - 1));
    EXPECT_LT(std::fabs(mean), z * se) << "tick " << t;
    // The Monte Carlo error of one run is a small fraction of the posterior sd at N = 2048.
    EXPECT_LT(se * std::sqrt(double{reps}), 0.15 * std::sqrt(exact.variance[t])) << "tick " << t;
    // A run's sd has relative Monte Carlo error about 1 / sqrt(2 ESS) <= 0.022 (ESS >= N/2 = 1024
    // between resamplings) and a bias O(1 / ESS); over 24 runs the mean ratio's sd is about
    // 0.0045, so 0.03 is over 6 of them.
    EXPECT_NEAR(sd_ratio[t], 1.0, 0.03) << "tick " << t;
  }
}

INSTANTIATE_TEST_SUITE_P(Filters, FilterVsKalman,
                         ::testing::Values(config{"bootstrap_ess", filter_kind::bootstrap, 0.5},
                                           config{"bootstrap_every_tick", filter_kind::bootstrap, 1.0},
                                           config{"auxiliary_ess", filter_kind::auxiliary, 0.5},
                                           config{"auxiliary_every_tick", filter_kind::auxiliary, 1.0}),
                         [](const auto& test) { return std::string(test.param.name); });

// With resampling triggered by the ESS, some ticks resample and some do not; at threshold 1 all do
// (but the first, which has nothing to resample).
TEST(FilterResampling, ThresholdDecidesWhichTicksResample) {
  const auto data = resample::bpf::simulate(model, 60, 13);
  resample::cpu::serial ex;
  const auto y = std::span<const double>(data.observations);
  const auto every = resample::bpf::run_filter(model, ex, y, options(500, 0, 1.0));
  const auto some = resample::bpf::run_filter(model, ex, y, options(500, 0, 0.5));
  const auto never = resample::bpf::run_filter(model, ex, y, options(500, 0, 0.0));
  std::size_t count_every = 0, count_some = 0, count_never = 0;
  for (std::size_t t = 0; t < y.size(); ++t) {
    count_every += every.ticks[t].resampled;
    count_some += some.ticks[t].resampled;
    count_never += never.ticks[t].resampled;
    if (t > 0) {
      EXPECT_EQ(some.ticks[t].resampled, some.ticks[t - 1].ess < 250.0) << "tick " << t;
    }
  }
  EXPECT_EQ(count_every, y.size() - 1);
  EXPECT_GT(count_some, 0u);
  EXPECT_LT(count_some, y.size() - 1);
  EXPECT_EQ(count_never, 0u);
}

// Jitter moves each resampled state by jitter * z, z ~ N(0, 1), before propagation: with the same
// seed, the states after the next propagation differ by rho * jitter * z.
TEST(FilterResampling, JitterAddsGaussianNoiseOfItsScale) {
  const std::vector<double> y = {0.3, -0.4};
  resample::cpu::serial ex;
  constexpr std::size_t n = 20000;
  resample::bpf::particle_filter plain(model, ex, options(n, 0, 1.0));
  resample::bpf::particle_filter jittered(model, ex, options(n, 0, 1.0, filter_kind::bootstrap, 0.25));
  for (double v : y) {
    plain.step(v);
    jittered.step(v);
  }
  double sum = 0, sum2 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double z = (jittered.states()[i] - plain.states()[i]) / (0.9 * 0.25);
    sum += z;
    sum2 += z * z;
  }
  const double mean = sum / n, var = sum2 / n - mean * mean;
  EXPECT_LT(std::fabs(mean), 4.0 / std::sqrt(double{n}));
  EXPECT_LT(std::fabs(var - 1.0), 4.0 * std::sqrt(2.0 / n));  // Var of a sample variance: 2 / n
}

}  // namespace
