// Properties every draw must have, whatever the random numbers: N ancestors in [0, N), offspring
// summing to N, zero weights never chosen; and the per-scheme bounds on o^i - N w^i / W.
#include <cmath>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cpu_reference/ancestors_to_offspring.hpp"
#include "cpu_reference/schemes.hpp"
#include "resample/core/offspring_metrics.hpp"
#include "support/test_weights.hpp"

namespace resample::reference {
namespace {

constexpr int draws_per_case = 5;

struct structural_case {
  scheme s;
  std::size_t n;
};

std::string case_name(const testing::TestParamInfo<structural_case>& info) {
  std::string name(reference::name(info.param.s));
  std::replace(name.begin(), name.end(), '-', '_');
  return name + "_N" + std::to_string(info.param.n);
}

std::vector<structural_case> all_cases() {
  std::vector<structural_case> out;
  for (const scheme s : all_schemes) {
    for (const std::size_t n : test::nonzero_sizes) out.push_back({s, n});
  }
  return out;
}

class StructuralTest : public testing::TestWithParam<structural_case> {};

TEST_P(StructuralTest, AncestorsInRangeOffspringSumToNZerosNeverChosen) {
  const auto [s, n] = GetParam();
  default_urbg rng(static_cast<unsigned>(n) * 7 + static_cast<unsigned>(s));
  for (const auto& [set_name, w] : test::statistical_sets(n, 100)) {
    for (int d = 0; d < draws_per_case; ++d) {
      const auto a = ancestors(s, w, rng);
      ASSERT_EQ(a.size(), n) << set_name;
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_LT(a[i], n) << set_name << " index " << i;
        ASSERT_GT(w.linear[a[i]], 0.0) << set_name << ": zero weight " << a[i] << " chosen at " << i;
      }
      const auto o = ancestors_to_offspring(a);
      EXPECT_EQ(std::accumulate(o.begin(), o.end(), std::size_t{0}), n) << set_name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Schemes, StructuralTest, testing::ValuesIn(all_cases()), case_name);

/// The offspring of one draw of `s`, with the expected e_i = N w_i / W beside them.
struct draw_result {
  std::vector<std::size_t> o;
  std::vector<double> e;
};

draw_result draw_offspring(scheme s, const weights& w, default_urbg& rng) {
  return {ancestors_to_offspring(ancestors(s, w, rng)), expected_offspring(w.linear)};
}

class SchemeBoundsTest : public testing::TestWithParam<std::size_t> {};

// Systematic: o^i is floor or ceil of e_i. Exact on dyadic weights, where e_i and the r^i of Code 5
// are exact; on other weights up to the rounding of r^i, which we allow as 1e-9.
TEST_P(SchemeBoundsTest, SystematicGivesFloorOrCeil) {
  const std::size_t n = GetParam();
  default_urbg rng(31);
  for (int d = 0; d < 20; ++d) {
    const auto [o, e] = draw_offspring(scheme::systematic, test::dyadic(n, 40 + d), rng);
    for (std::size_t i = 0; i < n; ++i) {
      const auto oi = static_cast<double>(o[i]);
      ASSERT_TRUE(oi == std::floor(e[i]) || oi == std::ceil(e[i])) << "o = " << o[i] << ", e = " << e[i];
    }
  }
  for (const auto& [set_name, w] : test::statistical_sets(n, 200)) {
    const auto [o, e] = draw_offspring(scheme::systematic, w, rng);
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_GE(static_cast<double>(o[i]), std::floor(e[i] - 1e-9)) << set_name << " " << i;
      EXPECT_LE(static_cast<double>(o[i]), std::ceil(e[i] + 1e-9)) << set_name << " " << i;
    }
  }
}

// Stratified: each o^i counts the strata points in an interval of length e_i, so |o^i - e_i| < 2.
// Residual: o^i >= floor(e_i), the deterministic part.
TEST_P(SchemeBoundsTest, StratifiedWithinTwoResidualAtLeastFloor) {
  const std::size_t n = GetParam();
  default_urbg rng(32);
  for (const auto& [set_name, w] : test::statistical_sets(n, 300)) {
    for (int d = 0; d < draws_per_case; ++d) {
      const auto strat = draw_offspring(scheme::stratified, w, rng);
      const auto resid = draw_offspring(scheme::residual, w, rng);
      for (std::size_t i = 0; i < n; ++i) {
        EXPECT_LT(std::abs(static_cast<double>(strat.o[i]) - strat.e[i]), 2.0) << set_name << " " << i;
        EXPECT_GE(static_cast<double>(resid.o[i]), std::floor(resid.e[i] - 1e-9)) << set_name << " " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, SchemeBoundsTest, testing::ValuesIn(test::nonzero_sizes));

// Equal weights: systematic and residual must give every particle exactly one offspring.
TEST(SchemeBounds, EqualWeightsGiveOneEachForSystematicAndResidual) {
  const auto w = weights::from_linear(std::vector<double>(33, 0.25));
  default_urbg rng(5);
  for (const scheme s : {scheme::systematic, scheme::residual}) {
    const auto o = ancestors_to_offspring(ancestors(s, w, rng));
    EXPECT_EQ(o, std::vector<std::size_t>(33, 1)) << name(s);
  }
}

// A single positive weight among zeros takes every offspring, in every scheme.
TEST(SchemeBounds, OnePositiveWeightTakesAll) {
  std::vector<double> lw(17, -std::numeric_limits<double>::infinity());
  lw[9] = -3.0;
  const auto w = weights::from_log(lw);
  default_urbg rng(6);
  for (const scheme s : all_schemes) {
    EXPECT_EQ(ancestors(s, w, rng), std::vector<std::size_t>(17, 9)) << name(s);
  }
}

// Rejection with a loose bound still gives valid draws (it only costs more proposals).
TEST(SchemeBounds, RejectionWithLooseBound) {
  const auto w = test::paper(100, 2.0, 8);
  default_urbg rng(7);
  options opt;
  opt.rejection_log_bound = *std::max_element(w.log.begin(), w.log.end()) + 1.0;
  const auto a = ancestors(scheme::rejection, w, rng, opt);
  for (const auto j : a) EXPECT_LT(j, 100u);
}

}  // namespace
}  // namespace resample::reference

namespace resample::reference {
namespace {

/// A generator whose every output is 0, so every uniform u ~ U[0, 1) is exactly 0.
struct zero_urbg {
  using result_type = std::uint32_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return 0xffffffffu; }
  result_type operator()() { return 0; }
};

// With u = 0 the last cumulative offspring must still be N: (N W) / W can round below N, which
// lost a particle before r^i was computed as N (W^i / W).
TEST(Regression, CombsReachNWithZeroUniform) {
  const std::vector<double> w = {0.67544905689145973, 0, 0};
  zero_urbg rng;
  EXPECT_EQ(systematic_cumulative_offspring(std::span<const double>(w), rng).back(), 3u);
  EXPECT_EQ(stratified_cumulative_offspring(std::span<const double>(w), rng).back(), 3u);
}

// Weights near the top of the double range: the reference functions refuse a sum that overflows,
// and weights::from_linear scales them so that every scheme works.
TEST(Regression, HugeLinearWeights) {
  const std::vector<double> raw = {1e308, 1e308, 1e308, 1};
  default_urbg rng(3);
  EXPECT_THROW(multinomial_ancestors(std::span<const double>(raw), rng), invalid_input);
  const auto w = weights::from_linear(raw);
  for (const scheme s : all_schemes) {
    std::size_t picked_tiny = 0;
    for (int d = 0; d < 50; ++d) {
      for (const auto j : ancestors(s, w, rng)) picked_tiny += j == 3;
    }
    EXPECT_EQ(picked_tiny, 0u) << name(s);  // its probability is 1e-308 per draw
  }
}

}  // namespace
}  // namespace resample::reference
