// Philox4x32-10 against Random123's published known-answer vectors, and the draws built on it:
// uniforms never 0 or 1, exact uniform integers, normal and Student-t laws (KS tests, fixed keys).
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include <gtest/gtest.h>

#include "resample/core/random.hpp"
#include "support/philox_known_answers.hpp"
#include "support/stats.hpp"

namespace resample {
namespace {

TEST(Philox, KnownAnswerVectors) {
  for (const auto& v : test::philox_known_answers) {
    const auto out = philox4x32_10({{v.ctr[0], v.ctr[1], v.ctr[2], v.ctr[3]}}, {{v.key[0], v.key[1]}});
    for (int w = 0; w < 4; ++w) EXPECT_EQ(out.v[w], v.out[w]) << "word " << w;
  }
}

// The stream's layout: counter = (index low, index high, step, block), 4 words per block in order.
TEST(Philox, StreamLayout) {
  const key k{0xa4093822, 0x299f31d0};
  const std::uint64_t index = 0x85a308d3243f6a88ULL;
  philox_stream s(k, index, 0x13198a2e);
  for (std::uint32_t block = 0; block < 3; ++block) {
    const auto expected = philox4x32_10({{0x243f6a88, 0x85a308d3, 0x13198a2e, block}}, {{k.seed, k.stream}});
    for (int w = 0; w < 4; ++w) EXPECT_EQ(s.next(), expected.v[w]);
  }
  EXPECT_EQ(philox_stream(k, index, 0x13198a2e).next(), philox_stream(k, index, 0x13198a2e).next());
  EXPECT_NE(philox_stream(k, index, 1).next(), philox_stream(k, index, 2).next());
}

TEST(Uniform, OpenIntervalEndsAndExactness) {
  EXPECT_EQ(uniform_open_32(0), std::ldexp(1.0, -33));
  EXPECT_EQ(uniform_open_32(0xffffffffu), 1.0 - std::ldexp(1.0, -33));
  EXPECT_EQ(uniform_open_53(0), std::ldexp(1.0, -53));
  EXPECT_EQ(uniform_open_53(~std::uint64_t{0}), 1.0 - std::ldexp(1.0, -53));
  EXPECT_LT(uniform_open_53(~std::uint64_t{0}), 1.0);
}

/// Pearson's chi-square over k equally likely bins; returns the z-score of chi^2 against k - 1 dof.
double chi_square_z(const std::vector<std::uint64_t>& counts, double draws) {
  const double k = static_cast<double>(counts.size());
  double chi2 = 0;
  for (const auto c : counts) chi2 += (static_cast<double>(c) - draws / k) * (static_cast<double>(c) - draws / k) / (draws / k);
  return (chi2 - (k - 1)) / std::sqrt(2 * (k - 1));
}

TEST(Uniform, BelowIsUniformAndInRange) {
  for (const std::uint32_t n : {1u, 2u, 3u, 7u, 1000u}) {
    std::vector<std::uint64_t> counts(n, 0);
    const std::uint64_t draws = 200000;
    philox_stream s({1, 2}, n, 0);
    for (std::uint64_t d = 0; d < draws; ++d) {
      const auto j = uniform_below(s, n);
      ASSERT_LT(j, n);
      ++counts[j];
    }
    if (n > 1) {
      EXPECT_LT(std::abs(chi_square_z(counts, static_cast<double>(draws))), 5.0) << "n = " << n;
    }
  }
  // A range just above a power of two rejects nearly half the products: the loop must still be exact.
  philox_stream s({3, 4}, 0, 0);
  const std::uint32_t big = (1u << 31) + 1;
  std::uint64_t high = 0;
  for (int d = 0; d < 100000; ++d) high += uniform_below(s, big) >= (1u << 30);
  EXPECT_NEAR(static_cast<double>(high) / 1e5, 1.0 - std::ldexp(1.0, 30) / big, 5 * std::sqrt(0.25 / 1e5));
  // 128-bit ranges: in range, and the top bit set about half the time for a range of 2^100.
  const u128 range = static_cast<u128>(1) << 100;
  std::uint64_t top = 0;
  for (int d = 0; d < 100000; ++d) {
    const u128 v = uniform_below(s, range);
    ASSERT_LT(v, range);
    top += static_cast<std::uint64_t>(v >> 99);
  }
  EXPECT_NEAR(static_cast<double>(top) / 1e5, 0.5, 5 * std::sqrt(0.25 / 1e5));
}

/// Kolmogorov-Smirnov statistic sqrt(n) D of the sample against the CDF F.
template <class Cdf>
double ks_statistic(std::vector<double> xs, Cdf F) {
  std::sort(xs.begin(), xs.end());
  const double n = static_cast<double>(xs.size());
  double d = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double f = F(xs[i]);
    d = std::max({d, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
  }
  return std::sqrt(n) * d;
}

// sqrt(n) D exceeds 1.95 with probability 0.001 (Kolmogorov's limit law).
constexpr double ks_critical_001 = 1.95;

TEST(Normal, KolmogorovSmirnovAndMoments) {
  philox_stream s({5, 6}, 0, 0);
  std::vector<double> xs(100000);
  for (double& x : xs) x = standard_normal(s);
  EXPECT_LT(ks_statistic(xs, [](double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }), ks_critical_001);
}

TEST(StudentT, KolmogorovSmirnovForClosedFormCdfs) {
  philox_stream s({7, 8}, 0, 0);
  std::vector<double> xs(100000);
  for (double& x : xs) x = student_t(s, 1.0);  // Cauchy
  EXPECT_LT(ks_statistic(xs, [](double x) { return 0.5 + std::atan(x) / std::numbers::pi; }), ks_critical_001);
  for (double& x : xs) x = student_t(s, 2.0);
  EXPECT_LT(ks_statistic(xs, [](double x) { return 0.5 + x / (2 * std::sqrt(2 + x * x)); }), ks_critical_001);
}

}  // namespace
}  // namespace resample
