// The cuda filter's fast mode (filter_precision::fast: float particles, approximate exp / log) is
// not the CPU's bits, so it is tested as a filter: its likelihood unbiased and its filtered means
// right against Kalman on the linear-Gaussian model, calibrated on the SV matched-DGP suite, and
// agreeing with the exact filter on the SV model within Monte Carlo error, its particles independent
// of the kernels' block count. Plus its refusals.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend_support.hpp"
#include "resample/bpf/cuda_filter.hpp"
#include "resample/bpf/kalman.hpp"
#include "resample/bpf/linear_gaussian_model.hpp"
#include "resample/bpf/simulate.hpp"
#include "resample/bpf/sv_model.hpp"
#include "resample/cpu/executor.hpp"
#include "resample/ptx/filter.hpp"
#include "support/stats.hpp"
#include "support/sv_calibration.hpp"

namespace {

using resample::bpf::filter_kind;
using resample::bpf::filter_options;
using resample::bpf::filter_precision;
using resample::bpf::kalman_filter;
using resample::bpf::linear_gaussian_model;

/// 273 row pairs of 1024 particles, the last of 7, on spans_blocks blocks (filter_options::
/// fast_blocks, which fast_options sets for this N): 39 row pairs a block, nine full spans of 4096
/// and a partial one, the last block's ending inside a row (this_block_range in
/// src/cuda/bpf_filter.cu), on any GPU.
constexpr std::size_t spans_n = 68 * 4096 + 7;
constexpr std::size_t spans_blocks = 7;

filter_options fast_options(std::size_t n, std::uint64_t seed, double threshold = 0.5,
                            filter_kind kind = filter_kind::bootstrap) {
  filter_options o;
  o.particles = n;
  o.seed = seed;
  o.ess_threshold = threshold;
  o.kind = kind;
  o.precision = filter_precision::fast;
  if (n == spans_n) o.fast_blocks = spans_blocks;
  return o;
}

const linear_gaussian_model lg_model({.rho = 0.9, .sigma = 1.0, .tau = 1.0});

struct config {
  const char* name;
  filter_kind kind;
  double threshold;
  bool spans = false;  ///< N = spans_n instead of the tests' own
};

class CudaFastVsKalman : public ::testing::TestWithParam<config> {
 protected:
  void SetUp() override { RESAMPLE_SKIP_WITHOUT_GPU(); }
};

// As the CPU filter's test (bpf_linear_gaussian_test.cpp): the ratio r = p^(y) / p(y) has mean 1
// whatever the resampling rule; R runs give its mean and standard error; |mean - 1| < 4 SE.
TEST_P(CudaFastVsKalman, LikelihoodIsUnbiased) {
  const auto data = resample::bpf::simulate(lg_model, 50, 11);
  const double exact = kalman_filter(lg_model, data.observations).log_likelihood;
  constexpr int reps = 200;
  std::vector<double> ratio;
  for (int r = 0; r < reps; ++r) {
    const auto opt = fast_options(GetParam().spans ? spans_n : 512, 1000u + static_cast<unsigned>(r),
                                  GetParam().threshold, GetParam().kind);
    const auto run = resample::bpf::run_cuda_filter(lg_model, std::span<const double>(data.observations), opt);
    ratio.push_back(std::exp(run.log_likelihood - exact));
  }
  const auto [mean, se] = resample::test::mean_and_se_of(ratio);
  EXPECT_LT(std::fabs(mean - 1.0), 4.0 * se) << "mean ratio " << mean << ", SE " << se;
  EXPECT_LT(se * std::sqrt(double{reps}), 1.0);  // power, as on the CPU
}

// Filtered means and sds against Kalman's at every tick: the mean error and the sd ratio's error
// within z SE (Bonferroni over the ticks, SE from the runs' spread; the estimators' O(1/N) biases
// are far below it), and each run's errors small (power). The CPU test's fixed 3% on the sd ratio
// assumed ESS >= N/2, which resampling at every tick does not keep.
TEST_P(CudaFastVsKalman, FilteredMeansMatchKalman) {
  const auto data = resample::bpf::simulate(lg_model, 40, 12);
  const auto exact = kalman_filter(lg_model, data.observations);
  constexpr int reps = 24;
  const std::size_t ticks = data.observations.size();
  std::vector<double> sum(ticks), sum2(ticks), ratio_sum(ticks), ratio_sum2(ticks);
  for (int r = 0; r < reps; ++r) {
    const auto opt = fast_options(GetParam().spans ? spans_n : 2048, 77u + static_cast<unsigned>(r),
                                  GetParam().threshold, GetParam().kind);
    const auto run = resample::bpf::run_cuda_filter(lg_model, std::span<const double>(data.observations), opt);
    for (std::size_t t = 0; t < ticks; ++t) {
      const double d = run.ticks[t].mean - exact.mean[t];
      sum[t] += d;
      sum2[t] += d * d;
      const double ratio = run.ticks[t].sd / std::sqrt(exact.variance[t]);
      ratio_sum[t] += ratio;
      ratio_sum2[t] += ratio * ratio;
    }
  }
  const double z = resample::test::bonferroni_z(1e-3, ticks);
  for (std::size_t t = 0; t < ticks; ++t) {
    const double mean = sum[t] / reps;
    const double se = std::sqrt((sum2[t] / reps - mean * mean) / (reps - 1));
    EXPECT_LT(std::fabs(mean), z * se) << "tick " << t;
    EXPECT_LT(se * std::sqrt(double{reps}), 0.15 * std::sqrt(exact.variance[t])) << "tick " << t;
    const double ratio = ratio_sum[t] / reps;
    const double ratio_se = std::sqrt((ratio_sum2[t] / reps - ratio * ratio) / (reps - 1));
    EXPECT_LT(std::fabs(ratio - 1.0), z * ratio_se) << "tick " << t << ": sd ratio " << ratio << ", SE " << ratio_se;
    EXPECT_LT(ratio_se * std::sqrt(double{reps}), 0.1) << "tick " << t;  // a run's sd within about 10%
  }
}

INSTANTIATE_TEST_SUITE_P(
    Configs, CudaFastVsKalman,
    ::testing::Values(config{"bootstrap_ess_half", filter_kind::bootstrap, 0.5},
                      config{"bootstrap_every_tick", filter_kind::bootstrap, 1.0},
                      config{"auxiliary_ess_half", filter_kind::auxiliary, 0.5},
                      config{"bootstrap_many_spans", filter_kind::bootstrap, 0.5, true},
                      config{"auxiliary_many_spans", filter_kind::auxiliary, 0.5, true}),
    [](const auto& test) { return std::string(test.param.name); });

class CudaFastSvCalibration : public ::testing::TestWithParam<resample::test::sv_scenario> {
 protected:
  void SetUp() override { RESAMPLE_SKIP_WITHOUT_GPU(); }
};

// The CPU filter's calibration test (bpf_sv_test.cpp) on the same data, N and seed, in fast mode.
TEST_P(CudaFastSvCalibration, PitIsUniformAndIntervalsCover) {
  const auto model = resample::test::model_of(GetParam());
  constexpr std::size_t ticks = 5000;
  const auto data = resample::bpf::simulate(model, ticks, GetParam().seed);
  const auto run = resample::bpf::run_cuda_filter(model, std::span<const double>(data.observations),
                                                  fast_options(1000, 99), std::span<const double>(data.states));
  ASSERT_EQ(run.ticks.size(), ticks);
  resample::test::expect_calibrated(run);
}

INSTANTIATE_TEST_SUITE_P(MatchedDgp, CudaFastSvCalibration, ::testing::ValuesIn(resample::test::sv_scenarios),
                         [](const auto& test) { return std::string(test.param.name); });

// Fast and exact filters estimate the same log-likelihood: over R seeds each (SV, Student-t noise
// both ways, N = 4096, 200 ticks) the means differ by less than 4 SE of the difference. A fast
// density off by 1e-3 per tick would shift the fast mean by 0.2, many SEs.
TEST(CudaFastFilter, AgreesWithTheExactFilterOnTheSvModel) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const auto model = resample::test::model_of(resample::test::sv_scenarios[1]);
  const auto data = resample::bpf::simulate(model, 200, 21);
  const auto y = std::span<const double>(data.observations);
  constexpr int reps = 32;
  std::vector<double> ll[2];  // exact, fast
  for (int r = 0; r < reps; ++r) {
    for (int fast = 0; fast < 2; ++fast) {
      auto opt = fast_options(4096, 500u + static_cast<unsigned>(r));
      if (!fast) opt.precision = filter_precision::exact;
      ll[fast].push_back(resample::bpf::run_cuda_filter(model, y, opt).log_likelihood);
    }
  }
  const auto exact = resample::test::mean_and_se_of(ll[0]), fast = resample::test::mean_and_se_of(ll[1]);
  const double se = std::hypot(exact.se, fast.se);  // of the difference
  EXPECT_LT(std::fabs(fast.mean - exact.mean), 4.0 * se)
      << "exact " << exact.mean << ", fast " << fast.mean << ", SE " << se;
  EXPECT_LT(se, 0.05);  // power: the test resolves a shift of 0.2
}

/// Two fast runs' outputs are the same bits (fast is not the CPU's bits, but it is deterministic:
/// counter-based draws, and the chunk sums in a fixed order).
void expect_same_runs(const resample::bpf::filter_run& a, const resample::bpf::filter_run& b, const std::string& what) {
  ASSERT_EQ(a.ticks.size(), b.ticks.size()) << what;
  EXPECT_EQ(a.log_likelihood, b.log_likelihood) << what;
  for (std::size_t t = 0; t < a.ticks.size(); ++t) {
    EXPECT_EQ(a.ticks[t].mean, b.ticks[t].mean) << what << ", tick " << t;
    EXPECT_EQ(a.ticks[t].sd, b.ticks[t].sd) << what << ", tick " << t;
    EXPECT_EQ(a.ticks[t].ess, b.ticks[t].ess) << what << ", tick " << t;
    EXPECT_TRUE(a.ticks[t].pit == b.ticks[t].pit || (std::isnan(a.ticks[t].pit) && std::isnan(b.ticks[t].pit)))
        << what << ", tick " << t << ": " << a.ticks[t].pit << " and " << b.ticks[t].pit;
    EXPECT_EQ(a.ticks[t].resampled, b.ticks[t].resampled) << what << ", tick " << t;
  }
}

/// Fast runs of both models and both filters (jitter on; N = 1, 257 and 10007: a partial warp, a
/// partial block, not a whole number of chunks; spans_n: blocks of several spans) with the
/// resampler node `node`, twice, or against the other node when `against_other`.
void expect_reproducible(resample::bpf::resampler_node node, bool against_other) {
  using resample::bpf::resampler_node;
  const auto sv = resample::test::model_of(resample::test::sv_scenarios[1]);
  const auto sv_data = resample::bpf::simulate(sv, 40, 5);
  const auto lg_data = resample::bpf::simulate(lg_model, 40, 6);
  const resampler_node second = against_other ? (node == resampler_node::gated ? resampler_node::conditional
                                                                                : resampler_node::gated)
                                              : node;
  for (const auto& [kind, n] : {std::pair{filter_kind::bootstrap, 10007}, std::pair{filter_kind::auxiliary, 10007},
                               std::pair{filter_kind::bootstrap, 1}, std::pair{filter_kind::bootstrap, 257},
                               std::pair{filter_kind::bootstrap, static_cast<int>(spans_n)},
                               std::pair{filter_kind::auxiliary, static_cast<int>(spans_n)}}) {
    auto opt = fast_options(static_cast<std::size_t>(n), 42, 0.7, kind);
    opt.jitter = 0.01;
    const std::string what =
        (kind == filter_kind::auxiliary ? "auxiliary" : "bootstrap") + std::string(", N ") + std::to_string(n);
    const std::size_t ticks = n > 100000 ? 8 : 40;  // the large runs short enough for racecheck
    const auto y_sv = std::span<const double>(sv_data.observations).first(ticks);
    const auto truth = std::span<const double>(sv_data.states).first(ticks);
    const auto y_lg = std::span<const double>(lg_data.observations).first(ticks);
    expect_same_runs(resample::bpf::run_cuda_filter(sv, y_sv, opt, truth, nullptr, node),
                     resample::bpf::run_cuda_filter(sv, y_sv, opt, truth, nullptr, second), "sv " + what);
    expect_same_runs(resample::bpf::run_cuda_filter(lg_model, y_lg, opt, {}, nullptr, node),
                     resample::bpf::run_cuda_filter(lg_model, y_lg, opt, {}, nullptr, second), "lg " + what);
  }
}

// The gated tick (every kernel launched every tick: what racecheck and synccheck can follow) twice.
TEST(CudaFastFilter, GatedRunsAreReproducible) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  expect_reproducible(resample::bpf::resampler_node::gated, false);
}

// The conditional resampler node gives the gated tick's bits. The conditional bootstrap runs go two
// ticks to a graph (40 ticks: the first, 19 pairs, and one alone), the gated ones one.
TEST(CudaFastFilter, ConditionalNodeGivesTheGatedBits) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  expect_reproducible(resample::bpf::resampler_node::conditional, true);
}

// Ticks enqueued one at a time (a graph each) give the bits of the same ticks enqueued at once (two
// to a graph, the first tick's resampler node beside the second's particle kernel), with ticks that
// resample and ticks that do not in both places of a pair. The gated tick stays one to a graph.
TEST(CudaFastFilter, TicksOneAtATimeGiveThePairedBits) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  EXPECT_EQ((resample::bpf::cuda_filter<resample::bpf::sv_model>(resample::test::model_of(resample::test::sv_scenarios[1]),
                                                                 fast_options(257, 31), nullptr,
                                                                 resample::bpf::resampler_node::gated)
                 .ticks_per_graph()),
            1u);
  const auto sv = resample::test::model_of(resample::test::sv_scenarios[1]);
  const auto data = resample::bpf::simulate(sv, 61, 12);
  const auto y = std::span<const double>(data.observations);
  const auto truth = std::span<const double>(data.states);
  for (const std::size_t n : {std::size_t{257}, spans_n}) {
    const auto opt = fast_options(n, 31, 0.6);
    const auto node = resample::bpf::resampler_node::conditional;
    resample::bpf::cuda_filter<resample::bpf::sv_model> g(sv, opt, nullptr, node);
    ASSERT_EQ(g.ticks_per_graph(), 2u);
    g.enqueue(y, truth);
    const auto paired = g.collect();
    resample::bpf::cuda_filter<resample::bpf::sv_model> f(sv, opt, nullptr, node);
    for (std::size_t t = 0; t < y.size(); ++t) f.enqueue(y.subspan(t, 1), truth.subspan(t, 1));
    const auto alone = f.collect();
    const std::string what = "N " + std::to_string(n);
    expect_same_runs(paired, alone, what);
    // Pairs run ticks (1, 2), (3, 4), ...: an even tick's particles were moved in the node beside
    // (resampled) or by the kernel beside it (not), an odd tick's after the previous graph's last node.
    std::size_t beside_resampled = 0, beside_kept = 0, after_resampled = 0, after_kept = 0;
    for (std::size_t t = 1; t < y.size(); ++t) {
      const bool r = paired.ticks[t].resampled != 0;
      ++(t % 2 == 0 ? (r ? beside_resampled : beside_kept) : (r ? after_resampled : after_kept));
    }
    EXPECT_GT(beside_resampled, 0u) << what;
    EXPECT_GT(beside_kept, 0u) << what;
    EXPECT_GT(after_resampled, 0u) << what;
    EXPECT_GT(after_kept, 0u) << what;
  }
}

// The draws are a function of the key, the step and the particle's index, not of how the particles
// are split among the kernels' blocks (filter_options::fast_blocks: a row pair, whose two rows share
// their Philox blocks, is the unit). So the same particles, jittered and resampled alike, give the
// same filtered means and ESS up to the float sums' rounding (a thread's 171 terms at 3 blocks:
// about 1e-6 of the sd), where another seed's means differ by the Monte Carlo error (about 3e-3 of
// the sd at this N, ESS about N / 2): thresholds 1e-4 and 1e-3 of the sd. The ESS within 1e-4
// relative and the log-likelihood within 1e-3 are 100 and 30 times the rounding (1e-6 a tick, over
// 30 ticks); they check agreement only (another seed's log-likelihood differs by about 0.015). Some
// output differs in its last bits, as the sums' order does: the block count took effect.
TEST(CudaFastFilter, ParticlesDoNotDependOnTheBlockCount) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const auto data = resample::bpf::simulate(lg_model, 30, 13);
  const auto y = std::span<const double>(data.observations);
  const std::size_t n = (std::size_t{1} << 18) + 7;  // 257 row pairs: at most 65 blocks by default
  auto opt = fast_options(n, 21);
  opt.jitter = 0.01;
  const auto automatic = resample::bpf::run_cuda_filter(lg_model, y, opt);
  opt.fast_blocks = 3;  // 85 or 86 row pairs each: 22 spans, the last partial
  const auto three = resample::bpf::run_cuda_filter(lg_model, y, opt);
  opt.fast_blocks = 0;
  opt.seed = 22;
  const auto other_seed = resample::bpf::run_cuda_filter(lg_model, y, opt);
  ASSERT_EQ(automatic.ticks.size(), y.size());
  ASSERT_EQ(three.ticks.size(), y.size());
  double same = 0, different = 0;
  std::size_t resampled = 0, bits_differ = 0;
  for (std::size_t t = 0; t < y.size(); ++t) {
    bits_differ += three.ticks[t].mean != automatic.ticks[t].mean || three.ticks[t].ess != automatic.ticks[t].ess;
    const double sd = automatic.ticks[t].sd;
    same = std::max(same, std::fabs(three.ticks[t].mean - automatic.ticks[t].mean) / sd);
    different = std::max(different, std::fabs(other_seed.ticks[t].mean - automatic.ticks[t].mean) / sd);
    EXPECT_EQ(three.ticks[t].resampled, automatic.ticks[t].resampled) << "tick " << t;
    EXPECT_NEAR(three.ticks[t].ess, automatic.ticks[t].ess, 1e-4 * automatic.ticks[t].ess) << "tick " << t;
    resampled += automatic.ticks[t].resampled ? 1 : 0;
  }
  EXPECT_LT(same, 1e-4);
  EXPECT_GT(different, 1e-3);  // power: other particles are told apart
  EXPECT_GT(resampled, 0u);    // the jittered, resampled ticks are among them
  EXPECT_GT(bits_differ, 0u);  // 3 blocks is not the default's split
  EXPECT_NEAR(three.log_likelihood, automatic.log_likelihood, 1e-3);
}

// Observations far in the tails (linear-Gaussian, tau = 1): log-weights near -5e11, whose
// exponents must be formed relative to each running max in float without loss (lw log2 e - m log2 e
// by one fma, tried in session 20, gave NaN from y = 6e4 on). N = spans_n: each thread's running
// max rises from span to span.
// The fast log-likelihood within 1e-4 relative of the exact filter's: the two differ by the particle
// nearest the outlier, about y times a fraction of a state's sd (1e-6 relative here).
TEST(CudaFastFilter, OutlyingObservationsKeepFiniteWeights) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const std::vector<double> y = {0.3, 6e4, -0.2, 1e6, 0.1};
  auto opt = fast_options(spans_n, 8);
  const auto fast = resample::bpf::run_cuda_filter(lg_model, std::span<const double>(y), opt);
  opt.precision = filter_precision::exact;
  const auto exact = resample::bpf::run_cuda_filter(lg_model, std::span<const double>(y), opt);
  ASSERT_EQ(fast.ticks.size(), y.size());
  for (std::size_t t = 0; t < y.size(); ++t) {
    EXPECT_TRUE(std::isfinite(fast.ticks[t].mean) && std::isfinite(fast.ticks[t].sd)) << "tick " << t;
    EXPECT_GE(fast.ticks[t].ess, 1.0 - 1e-6) << "tick " << t;
    EXPECT_LE(fast.ticks[t].ess, static_cast<double>(spans_n) * (1.0 + 1e-6)) << "tick " << t;
  }
  EXPECT_NEAR(fast.log_likelihood, exact.log_likelihood, 1e-4 * std::fabs(exact.log_likelihood));
}

// Refusals: fast mode on the CPU filters and with the PTX backend's kernels; observations beyond
// float's range; all-zero weights with the CPU filter's message.
TEST(CudaFastFilter, RefusesWhatItCannotRun) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const resample::bpf::sv_model model{resample::bpf::sv_parameters{}};
  const auto opt = fast_options(500, 3);
  const std::vector<double> y = {0.1, 0.2, 0.3};
  const auto message = [&](const auto& run) -> std::string {
    try {
      run();
    } catch (const resample::invalid_input& e) {
      return e.what();
    }
    return "";
  };
  const auto y_span = std::span<const double>(y);
  EXPECT_EQ(message([&] { resample::bpf::run_filter(model, resample::cpu::serial{}, y_span, opt); }),
            "precision 'fast' runs on the cuda backend only (the CPU filters are exact)");
  EXPECT_EQ(message([&] {
              resample::bpf::cuda_filter<resample::bpf::sv_model> f(model, opt, nullptr,
                                                                    resample::bpf::resampler_node::conditional,
                                                                    resample::ptx::tick_kernels_for(model));
            }),
            "precision 'fast' runs the cuda backend's own kernels (the ptx backend's are exact only)");
  const std::vector<double> huge = {0.1, 0x1p130, 0.2};
  EXPECT_EQ(message([&] { resample::bpf::run_cuda_filter(model, std::span<const double>(huge), opt); }),
            "observation 1 is 1.3611294676837539e+39, beyond float's range (precision 'fast' keeps observations in "
            "float)");
  const std::vector<double> zero_weights = {0.1, 1e30, 0.2};  // every density underflows
  EXPECT_EQ(message([&] { resample::bpf::run_cuda_filter(model, std::span<const double>(zero_weights), opt); }),
            "tick 1: every particle has zero weight");
  // The same with blocks of several spans (every block's max -inf).
  EXPECT_EQ(message([&] {
              resample::bpf::run_cuda_filter(model, std::span<const double>(zero_weights), fast_options(spans_n, 3));
            }),
            "tick 1: every particle has zero weight");
}

}  // namespace
