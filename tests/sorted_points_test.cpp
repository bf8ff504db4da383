// Multinomial-sorted's sorted points (core/sorted_points.hpp): the layout; the law of the points
// (Pearson chi-square tests whose thresholds come from the statistic's own mean and variance);
// and the scheme's ancestors against their definition, the points materialised, sorted and each
// merged against the exact CDF by 192-bit comparisons, on serial and parallel executors.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "resample/core/sorted_points.hpp"
#include "resample/cpu/executor.hpp"
#include "resample/cpu/multinomial_sorted.hpp"
#include "support/stats.hpp"
#include "support/test_weights.hpp"

namespace resample {
namespace {

constexpr key test_key{71, 72};

TEST(SortedPoints, Layout) {
  const sorted_points one(1);
  EXPECT_EQ(one.strata(), 1u);
  EXPECT_EQ(one.super_bins(), 1u);
  const sorted_points small(2048);
  EXPECT_EQ(small.strata(), 2048u);
  EXPECT_EQ(small.super_bins(), 1u);
  const sorted_points power(std::uint64_t{1} << 24);
  EXPECT_EQ(power.strata(), std::uint64_t{1} << 24);
  EXPECT_EQ(power.super_bins(), 1u << 13);
  EXPECT_EQ(power.width(), 2048u);
  const sorted_points above(std::uint64_t{1} << 24 | 1);
  EXPECT_EQ(above.strata(), std::uint64_t{1} << 25);
  EXPECT_EQ(above.width(), 4096u);
  const sorted_points largest(0xFFFFFFFFull);
  EXPECT_EQ(largest.strata(), std::uint64_t{1} << 31);  // B N 2^32 must stay below 2^64
  EXPECT_EQ(largest.super_bins(), 1u << 13);
  EXPECT_EQ(largest.width(), std::uint64_t{1} << 18);
}

/// Pearson's X^2 of counts against equal cell probabilities, and how far it lies from its mean
/// k - 1 in units of its standard deviation sqrt(2 (k - 1) (N - 1) / N) (exact for a multinomial).
double chi_square_z(const std::vector<std::uint64_t>& counts) {
  double n = 0;
  for (const auto c : counts) n += static_cast<double>(c);
  const double k = static_cast<double>(counts.size());
  const double expected = n / k;
  double x2 = 0;
  for (const auto c : counts) x2 += (static_cast<double>(c) - expected) * (static_cast<double>(c) - expected) / expected;
  return (x2 - (k - 1)) / std::sqrt(2 * (k - 1) * (n - 1) / n);
}

// N balls uniform over B strata: super-bin counts (level 1), positions within a super-bin (level
// 2, pooled over super-bins) and the points' offsets (top 8 bits) each pass a chi-square test; the
// counts sum to N. Six tests at 5 sd: a false alarm has probability below 1e-5.
TEST(SortedPoints, CountsAndOffsetsAreUniform) {
  const std::uint64_t n = (std::uint64_t{1} << 20) + 12345;
  const sorted_points layout(n);
  ASSERT_EQ(layout.super_bins(), 1u << 10);
  for (const std::uint32_t step : {0u, 1u}) {
    const auto P = cpu::points_before_strata(cpu::serial{}, layout, test_key, step);
    ASSERT_EQ(P.size(), layout.strata() + 1);
    ASSERT_EQ(P.front(), 0u);
    ASSERT_EQ(P.back(), n);
    std::vector<std::uint64_t> super(layout.super_bins(), 0), position(layout.width(), 0), offset(256, 0);
    for (std::uint64_t K = 0; K < layout.strata(); ++K) {
      ASSERT_LE(P[K], P[K + 1]);
      const std::uint64_t c = P[K + 1] - P[K];
      super[K / layout.width()] += c;
      position[K % layout.width()] += c;
      for (std::uint64_t t = P[K]; t < P[K + 1]; ++t) ++offset[sorted_points::point_offset(test_key, step, t) >> 24];
    }
    EXPECT_LT(std::fabs(chi_square_z(super)), 5.0) << "super-bins, step " << step;
    EXPECT_LT(std::fabs(chi_square_z(position)), 5.0) << "strata within super-bins, step " << step;
    EXPECT_LT(std::fabs(chi_square_z(offset)), 5.0) << "offsets, step " << step;
  }
}

// The definition, materialised: every point K 2^32 + u_t, sorted; point j's ancestor is the first i
// with (K 2^32 + u) Q < B 2^32 C_i. The scheme must write exactly these ancestors.
std::vector<std::int64_t> merged_by_definition(const std::vector<double>& lw, std::uint32_t step) {
  const std::uint64_t n = lw.size();
  const double max = *std::max_element(lw.begin(), lw.end());
  const int F = fraction_bits(n);
  std::vector<u128> C(n);
  u128 Q = 0;
  for (std::size_t i = 0; i < n; ++i) C[i] = Q += quantised_weight(lw[i], max, F);
  const sorted_points layout(n);
  const auto P = cpu::points_before_strata(cpu::serial{}, layout, test_key, step);
  std::vector<std::uint64_t> points;
  for (std::uint64_t K = 0; K < layout.strata(); ++K) {
    for (std::uint64_t t = P[K]; t < P[K + 1]; ++t) points.push_back(K << 32 | sorted_points::point_offset(test_key, step, t));
  }
  std::sort(points.begin(), points.end());
  EXPECT_EQ(points.size(), n);
  std::vector<std::int64_t> a;
  for (const std::uint64_t p : points) {
    const auto below = [&](const u128& c) { return detail::point_below(p >> 32, static_cast<std::uint32_t>(p), Q, layout.strata(), c); };
    a.push_back(std::partition_point(C.begin(), C.end(), [&](const u128& c) { return !below(c); }) - C.begin());
  }
  return a;
}

void expect_definition(const std::vector<double>& lw, const std::string& what) {
  for (const std::uint32_t step : {0u, 3u}) {
    const auto expected = merged_by_definition(lw, step);
    std::vector<std::int64_t> serial(lw.size()), parallel(lw.size());
    cpu::multinomial_sorted_ancestors(cpu::serial{}, std::span<const double>(lw), test_key, step, std::span(serial));
    const cpu::parallel ex(3, 64);
    cpu::multinomial_sorted_ancestors(ex, std::span<const double>(lw), test_key, step, std::span(parallel));
    EXPECT_EQ(serial, expected) << what << ", step " << step;
    EXPECT_EQ(parallel, expected) << what << ", step " << step << ", 3 threads";
  }
}

TEST(SortedPoints, AncestorsAreTheSortedPointsMergedAgainstTheCdf) {
  for (const std::size_t n : {1, 2, 3, 5, 8, 1000, 4096, 4099, 70001}) {
    for (const double y : {0.0, 2.0}) {
      expect_definition(test::log_weights<double>(n, y, 23), "n = " + std::to_string(n) + ", y = " + std::to_string(y));
    }
    expect_definition(test::log_weights<double>(n, 1.0, 29, true), "zeros, n = " + std::to_string(n));
    expect_definition(std::vector<double>(n, -1.5), "equal, n = " + std::to_string(n));
  }
}

}  // namespace
}  // namespace resample
