// Codes 8 and 9 and the O -> a -> o -> O round trip, on every test size.
#include <algorithm>
#include <numeric>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "cpu_reference/ancestors_to_offspring.hpp"
#include "cpu_reference/cumulative_offspring_to_ancestors.hpp"
#include "cpu_reference/primitives.hpp"
#include "cpu_reference/uniform.hpp"
#include "support/test_weights.hpp"

namespace resample::reference {
namespace {

/// Offspring counts summing to n with many zeros and some large counts: n balls in random bins,
/// the bins chosen from a third of the particles.
std::vector<std::size_t> random_offspring(std::size_t n, unsigned seed) {
  default_urbg rng(seed);
  std::vector<std::size_t> o(n, 0);
  for (std::size_t k = 0; k < n; ++k) ++o[uniform_index(rng, std::max<std::size_t>(1, n / 3))];
  return o;
}

class ConversionsTest : public testing::TestWithParam<std::size_t> {};

TEST_P(ConversionsTest, RoundTripCumulativeToAncestorsToOffspring) {
  const std::size_t n = GetParam();
  const auto o = random_offspring(n, 5);
  const auto O = inclusive_prefix_sum(std::span<const std::size_t>(o));
  const auto a = cumulative_offspring_to_ancestors(O);
  ASSERT_EQ(a.size(), n);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));  // Code 8 writes ancestors in index order
  const auto o_back = ancestors_to_offspring(a);
  EXPECT_EQ(o_back, o);
  EXPECT_EQ(inclusive_prefix_sum(std::span<const std::size_t>(o_back)), O);
}

TEST_P(ConversionsTest, OffspringOfRandomAncestorsSumToN) {
  const std::size_t n = GetParam();
  default_urbg rng(9);
  std::vector<std::size_t> a(n);
  for (auto& x : a) x = uniform_index(rng, n == 0 ? 1 : n);
  const auto o = ancestors_to_offspring(a);
  EXPECT_EQ(std::accumulate(o.begin(), o.end(), std::size_t{0}), n);
  for (std::size_t j = 0; j < n; ++j) {
    EXPECT_EQ(o[j], static_cast<std::size_t>(std::count(a.begin(), a.end(), j)));
  }
  // a -> o -> O -> a gives the sorted a.
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(cumulative_offspring_to_ancestors(inclusive_prefix_sum(std::span<const std::size_t>(o))), sorted);
}

INSTANTIATE_TEST_SUITE_P(Sizes, ConversionsTest, testing::ValuesIn(test::sizes));

TEST(Conversions, HandWorkedExample) {
  const std::vector<std::size_t> O = {0, 3, 3, 4};  // o = 0 3 0 1
  EXPECT_EQ(cumulative_offspring_to_ancestors(O), (std::vector<std::size_t>{1, 1, 1, 3}));
  EXPECT_EQ(ancestors_to_offspring(std::vector<std::size_t>{3, 1, 1, 1}),
            (std::vector<std::size_t>{0, 3, 0, 1}));
}

}  // namespace
}  // namespace resample::reference
