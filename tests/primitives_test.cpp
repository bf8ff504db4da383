// Code 1: the primitives, on every test size, against the standard library.
#include <algorithm>
#include <numeric>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "cpu_reference/primitives.hpp"
#include "support/test_weights.hpp"

namespace resample::reference {
namespace {

class PrimitivesTest : public testing::TestWithParam<std::size_t> {
 protected:
  /// Integers in [0, 1000) as doubles: their sums are exact, so comparisons can be exact.
  static std::vector<double> integer_weights(std::size_t n) {
    default_urbg rng(static_cast<unsigned>(n) + 11);
    std::vector<double> w(n);
    for (double& x : w) x = static_cast<double>(rng() % 1000);
    return w;
  }
};

TEST_P(PrimitivesTest, InclusivePrefixSumMatchesPartialSum) {
  const auto w = integer_weights(GetParam());
  std::vector<double> expected(w.size());
  std::partial_sum(w.begin(), w.end(), expected.begin());
  EXPECT_EQ(inclusive_prefix_sum(std::span<const double>(w)), expected);
}

TEST_P(PrimitivesTest, ExclusivePrefixSumIsInclusiveShiftedRight) {
  const auto w = integer_weights(GetParam());
  const auto inclusive = inclusive_prefix_sum(std::span<const double>(w));
  const auto exclusive = exclusive_prefix_sum(std::span<const double>(w));
  ASSERT_EQ(exclusive.size(), w.size());
  for (std::size_t i = 0; i < w.size(); ++i) {
    EXPECT_EQ(exclusive[i], i == 0 ? 0.0 : inclusive[i - 1]) << "at " << i;
  }
}

TEST_P(PrimitivesTest, AdjacentDifferenceInvertsInclusivePrefixSum) {
  const auto w = integer_weights(GetParam());
  const auto W = inclusive_prefix_sum(std::span<const double>(w));
  EXPECT_EQ(adjacent_difference(std::span<const double>(W)), w);
  // And on counts, the O <-> o conversion of appendix D.
  std::vector<std::size_t> o(w.size());
  std::transform(w.begin(), w.end(), o.begin(), [](double x) { return static_cast<std::size_t>(x); });
  const auto O = inclusive_prefix_sum(std::span<const std::size_t>(o));
  EXPECT_EQ(adjacent_difference(std::span<const std::size_t>(O)), o);
}

TEST_P(PrimitivesTest, SumMatchesAccumulate) {
  const auto w = integer_weights(GetParam());
  EXPECT_EQ(sum(std::span<const double>(w)), std::accumulate(w.begin(), w.end(), 0.0));
}

TEST_P(PrimitivesTest, LowerBoundMatchesStdLowerBound) {
  const auto w = integer_weights(GetParam());
  const auto W = inclusive_prefix_sum(std::span<const double>(w));
  std::vector<double> probes = {-1.0, 0.0, 0.5};
  for (const double x : W) {  // each element, just below and just above it
    probes.push_back(x);
    probes.push_back(x - 0.5);
    probes.push_back(x + 0.5);
  }
  for (const double u : probes) {
    const auto expected = static_cast<std::size_t>(std::lower_bound(W.begin(), W.end(), u) - W.begin());
    EXPECT_EQ(lower_bound(std::span<const double>(W), u), expected) << "u = " << u;
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, PrimitivesTest, testing::ValuesIn(test::sizes));

TEST(Primitives, HandWorkedExample) {
  const std::vector<double> w = {2, 0, 3, 1};
  EXPECT_EQ(inclusive_prefix_sum(std::span<const double>(w)), (std::vector<double>{2, 2, 5, 6}));
  EXPECT_EQ(exclusive_prefix_sum(std::span<const double>(w)), (std::vector<double>{0, 2, 2, 5}));
  const std::vector<double> W = {2, 2, 5, 6};
  EXPECT_EQ(lower_bound(std::span<const double>(W), 2.0), 0u);  // the lowest of equal keys
  EXPECT_EQ(lower_bound(std::span<const double>(W), 2.5), 2u);
  EXPECT_EQ(lower_bound(std::span<const double>(W), 7.0), 4u);  // past the end
}

}  // namespace
}  // namespace resample::reference
