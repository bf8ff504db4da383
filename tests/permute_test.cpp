// Codes 6 and 7: the output is a permutation of the input with o^i > 0 => a^i = i.
#include <algorithm>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "cpu_reference/ancestors_to_offspring.hpp"
#include "cpu_reference/multinomial.hpp"
#include "cpu_reference/permute_parallel.hpp"
#include "cpu_reference/permute_serial.hpp"
#include "support/test_weights.hpp"

namespace resample::reference {
namespace {

void expect_permuted(const std::vector<std::size_t>& a, const std::vector<std::size_t>& c) {
  ASSERT_EQ(c.size(), a.size());
  auto sa = a;
  auto sc = c;
  std::sort(sa.begin(), sa.end());
  std::sort(sc.begin(), sc.end());
  EXPECT_EQ(sa, sc) << "not a permutation of the input";
  const auto o = ancestors_to_offspring(a);
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (o[i] > 0) {
      EXPECT_EQ(c[i], i) << "o^" << i << " = " << o[i] << " but c^" << i << " = " << c[i];
    }
  }
}

/// Ancestor vectors of three shapes: a multinomial draw on dispersed weights (few parents, many
/// children each), uniform random indices, and the identity reversed (every slot contested once).
std::vector<std::vector<std::size_t>> ancestor_vectors(std::size_t n) {
  std::vector<std::vector<std::size_t>> out;
  default_urbg rng(static_cast<unsigned>(n) + 3);
  const auto w = test::paper(n, 4.0, 21);
  out.push_back(multinomial_ancestors(std::span<const double>(w.linear), rng));
  std::vector<std::size_t> uniform(n);
  for (auto& x : uniform) x = uniform_index(rng, n);
  out.push_back(uniform);
  std::vector<std::size_t> reversed(n);
  for (std::size_t i = 0; i < n; ++i) reversed[i] = n - 1 - i;
  out.push_back(reversed);
  return out;
}

class PermuteTest : public testing::TestWithParam<std::size_t> {};

TEST_P(PermuteTest, SerialCode6) {
  for (const auto& a : ancestor_vectors(GetParam())) expect_permuted(a, permute_serial(a));
}

TEST_P(PermuteTest, ParallelCode7) {
  for (const auto& a : ancestor_vectors(GetParam())) expect_permuted(a, permute_parallel(a));
}

TEST_P(PermuteTest, PrepermuteClaimsGoToTheLowestIndex) {
  for (const auto& a : ancestor_vectors(GetParam())) {
    const std::size_t n = a.size();
    const auto d = prepermute(a);
    for (std::size_t j = 0; j < n; ++j) {
      const auto first = std::find(a.begin(), a.end(), j);
      const std::size_t expected = first == a.end() ? n : static_cast<std::size_t>(first - a.begin());
      EXPECT_EQ(d[j], expected) << "slot " << j;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, PermuteTest, testing::ValuesIn(test::nonzero_sizes));

TEST(Permute, EmptyInputGivesEmptyOutput) {
  EXPECT_TRUE(permute_serial(std::vector<std::size_t>{}).empty());
  EXPECT_TRUE(permute_parallel(std::vector<std::size_t>{}).empty());
}

// Worked by hand from the pseudocode. a = 1 3 3 0 0: prepermute gives d = 3 0 5 1 5 (5 = free);
// i = 2 loses slot 3 and chases 2 -> free, so d^2 = 2; i = 4 loses slot 0 and chases
// 4 -> free, so d^4 = 4. c = a^d = 0 1 3 3 0.
TEST(Permute, ParallelHandWorkedExample) {
  const std::vector<std::size_t> a = {1, 3, 3, 0, 0};
  EXPECT_EQ(prepermute(a), (std::vector<std::size_t>{3, 0, 5, 1, 5}));
  EXPECT_EQ(permute_parallel(a), (std::vector<std::size_t>{0, 1, 3, 3, 0}));
}

// Code 6 on the same input: i = 0 swaps a^0 = 1 with a^1 = 3 (-> 3 1 3 0 0), then a^0 = 3 with
// a^3 = 0 (-> 0 1 3 3 0); nothing else moves.
TEST(Permute, SerialHandWorkedExample) {
  EXPECT_EQ(permute_serial(std::vector<std::size_t>{1, 3, 3, 0, 0}),
            (std::vector<std::size_t>{0, 1, 3, 3, 0}));
}

}  // namespace
}  // namespace resample::reference
