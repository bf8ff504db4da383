// The SV filter on data from its own model (the matched-DGP suite of the seed project, nine
// scenarios, support/sv_calibration.hpp): the filtered law must be calibrated, i.e. the PIT of the
// true state uniform and the 90% interval covering 90% of the ticks; the error must fall as N grows.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>
#include <gtest/gtest.h>

#include "resample/bpf/calibration.hpp"
#include "resample/bpf/particle_filter.hpp"
#include "resample/bpf/simulate.hpp"
#include "resample/bpf/sv_model.hpp"
#include "resample/cpu/executor.hpp"
#include "support/sv_calibration.hpp"

namespace {

using resample::bpf::sv_model;
using resample::bpf::sv_parameters;

using scenario = resample::test::sv_scenario;
using resample::test::model_of;
constexpr const auto& scenarios = resample::test::sv_scenarios;

resample::bpf::filter_options options(std::size_t n, std::uint64_t seed) {
  resample::bpf::filter_options o;
  o.particles = n;
  o.seed = seed;
  return o;
}

using resample::bpf::autocorrelation_time;
using resample::bpf::ks_distance;

// The two statistics the calibration test stands on, on inputs with known answers.
TEST(Calibration, KsDistanceAndAutocorrelationTime) {
  EXPECT_DOUBLE_EQ(ks_distance({0.5}), 0.5);
  std::vector<double> grid;
  for (int i = 0; i < 100; ++i) grid.push_back((i + 0.5) / 100.0);
  EXPECT_NEAR(ks_distance(grid), 0.005, 1e-12);
  EXPECT_NEAR(ks_distance(std::vector<double>(10, 0.0)), 1.0, 1e-12);
  // AR(1) with coefficient phi: tau = (1 + phi) / (1 - phi); 19 for phi = 0.9, 1 for iid. The
  // estimate's sd over 200000 points is a few percent of tau.
  boost::random::mt19937 g(5);
  boost::random::normal_distribution<double> z;
  std::vector<double> iid, ar;
  double x = 0;
  for (int t = 0; t < 200000; ++t) {
    iid.push_back(z(g));
    x = 0.9 * x + z(g);
    ar.push_back(x);
  }
  EXPECT_NEAR(autocorrelation_time(iid), 1.0, 0.1);
  EXPECT_NEAR(autocorrelation_time(ar), 19.0, 2.0);
}

class SvCalibration : public ::testing::TestWithParam<scenario> {};

TEST_P(SvCalibration, PitIsUniformAndIntervalsCover) {
  const auto model = model_of(GetParam());
  constexpr std::size_t ticks = 5000;
  const auto data = resample::bpf::simulate(model, ticks, GetParam().seed);
  resample::cpu::parallel ex(2, 512);
  const auto run = resample::bpf::run_filter(model, ex, std::span<const double>(data.observations), options(1000, 99),
                                             std::span<const double>(data.states));
  ASSERT_EQ(run.ticks.size(), ticks);
  resample::test::expect_calibrated(run);
}

INSTANTIATE_TEST_SUITE_P(MatchedDgp, SvCalibration, ::testing::ValuesIn(scenarios),
                         [](const auto& test) { return std::string(test.param.name); });

// The filter's error against a 32x larger filter falls like 1/sqrt(N): each 4x more particles
// must cut it by at least 1.4 (the expectation is 2; the larger filter's own error adds 1-3%).
TEST(SvFilter, ErrorFallsAsParticlesGrow) {
  const auto model = model_of(scenarios[0]);
  const auto data = resample::bpf::simulate(model, 300, 7);
  resample::cpu::parallel ex(2, 4096);
  const auto y = std::span<const double>(data.observations);
  const auto reference = resample::bpf::run_filter(model, ex, y, options(1 << 17, 1));
  double previous = 0;
  for (const std::size_t n : {256u, 1024u, 4096u}) {
    const auto run = resample::bpf::run_filter(model, ex, y, options(n, 2));
    double ss = 0;
    for (std::size_t t = 0; t < y.size(); ++t) {
      const double e = run.ticks[t].mean - reference.ticks[t].mean;
      ss += e * e;
    }
    const double rmse = std::sqrt(ss / static_cast<double>(y.size()));
    if (previous > 0) {
      EXPECT_GT(previous / rmse, 1.4) << "N = " << n << ": RMSE " << rmse << " after " << previous;
    }
    previous = rmse;
  }
}

// cpu and cpu-parallel give the same bits for every output of every tick: the resampling is exact
// and the double sums run over fixed chunks.
TEST(SvFilter, SerialAndParallelGiveTheSameBits) {
  const auto model = model_of(scenarios[1]);
  const auto data = resample::bpf::simulate(model, 25, 8);
  const auto y = std::span<const double>(data.observations);
  const auto truth = std::span<const double>(data.states);
  resample::cpu::serial one;
  resample::cpu::parallel three(3, 64);
  for (const auto kind : {resample::bpf::filter_kind::bootstrap, resample::bpf::filter_kind::auxiliary}) {
    for (const auto s : {resample::scheme::systematic, resample::scheme::residual, resample::scheme::metropolis}) {
      auto opt = options(10007, 5);
      opt.kind = kind;
      opt.resampler = s;
      opt.jitter = 0.01;
      const auto a = resample::bpf::run_filter(model, one, y, opt, truth);
      const auto b = resample::bpf::run_filter(model, three, y, opt, truth);
      EXPECT_EQ(a.log_likelihood, b.log_likelihood);
      for (std::size_t t = 0; t < y.size(); ++t) {
        EXPECT_EQ(a.ticks[t].log_likelihood_increment, b.ticks[t].log_likelihood_increment) << t;
        EXPECT_EQ(a.ticks[t].mean, b.ticks[t].mean) << t;
        EXPECT_EQ(a.ticks[t].sd, b.ticks[t].sd) << t;
        EXPECT_EQ(a.ticks[t].ess, b.ticks[t].ess) << t;
        EXPECT_EQ(a.ticks[t].pit, b.ticks[t].pit) << t;
        EXPECT_EQ(a.ticks[t].resampled, b.ticks[t].resampled) << t;
      }
    }
  }
}

}  // namespace
