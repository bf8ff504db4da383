// Unbiasedness, E[o^i] = N w^i / W, of every unbiased scheme, by z-scores of the mean offspring
// over R draws, with fixed seeds.
//
// The z-score of particle i uses Var(o^i) <= N p_i (1 - p_i), p_i = w^i / W, the multinomial
// variance, which bounds the variance of every scheme tested here: for multinomial it is exact;
// for stratified and residual it is Douc & Cappe (2005) with f the indicator of i; for systematic
// and SSP o^i takes floor(e_i) or ceil(e_i), so Var = f(1 - f) with f = frac(e_i), which is below
// e_i (1 - p_i) when e_i < 1 and below 1/4 <= e_i (1 - p_i) otherwise (p_i <= 1/2 here); for
// rejection the a^i are independent, so o^k is a sum of independent Bernoullis with mean e_k, whose
// variance is at most the binomial's. The z-scores are therefore conservative, never anti-
// conservative. Only particles expecting >= 20 offspring over all R draws are tested (the normal
// approximation needs events); the threshold is Bonferroni over them at family-wise alpha = 1e-3.
//
// The same check is shown to reject Metropolis with B = 1, which is biased: the test can fail.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cpu_reference/ancestors_to_offspring.hpp"
#include "cpu_reference/schemes.hpp"
#include "resample/core/offspring_metrics.hpp"
#include "support/stats.hpp"
#include "support/unbiasedness.hpp"
#include "support/test_weights.hpp"

namespace resample::reference {
namespace {

constexpr std::size_t n_particles = 128;
constexpr std::size_t n_draws = 10000;

offspring_metrics run_draws(scheme s, const weights& w, unsigned seed, const options& opt = {}) {
  default_urbg rng(seed);
  offspring_metrics m(expected_offspring(w.linear));
  for (std::size_t r = 0; r < n_draws; ++r) m.add(ancestors_to_offspring(ancestors(s, w, rng, opt)));
  return m;
}

struct unbiased_case {
  scheme s;
  std::string weights_name;
};

std::vector<unbiased_case> all_cases() {
  std::vector<unbiased_case> out;
  for (const scheme s : all_schemes) {
    if (!is_unbiased(s)) continue;
    for (const auto& set : test::statistical_sets(4, 0)) out.push_back({s, set.name});
  }
  return out;
}

class UnbiasedTest : public testing::TestWithParam<unbiased_case> {};

TEST_P(UnbiasedTest, MeanOffspringMatchesNwOverW) {
  const auto& [s, weights_name] = GetParam();
  for (const auto& [set_name, w] : test::statistical_sets(n_particles, 1000)) {
    if (set_name != weights_name) continue;
    const auto m = run_draws(s, w, 2024);
    const auto z = test::z_scores(m);
    ASSERT_GE(z.tested, n_particles / 3) << "too few particles tested to mean anything";
    EXPECT_LT(z.max_abs_z, z.threshold)
        << name(s) << " on " << set_name << ": particle " << z.worst << " has mean offspring "
        << m.mean(z.worst) << " against " << m.expected(z.worst) << " (|z| = " << z.max_abs_z
        << ", " << z.tested << " particles tested)";
  }
}

INSTANTIATE_TEST_SUITE_P(Schemes, UnbiasedTest, testing::ValuesIn(all_cases()),
                         [](const testing::TestParamInfo<unbiased_case>& param) {
                           std::string n(name(param.param.s));
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n + "_" + param.param.weights_name;
                         });

// The check has power: Metropolis with a single step mostly returns a^i = i, far from unbiased.
TEST(UnbiasedCheck, RejectsMetropolisWithOneStep) {
  const auto w = test::paper(n_particles, 2.0, 1001);
  options opt;
  opt.metropolis_steps = 1;
  const auto z = test::z_scores(run_draws(scheme::metropolis, w, 2024, opt));
  EXPECT_GT(z.max_abs_z, 3.0 * z.threshold);
}

}  // namespace
}  // namespace resample::reference
