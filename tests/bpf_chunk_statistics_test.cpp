// The filter's chunked statistics (chunk_statistics.hpp) against direct long-double sums, at the
// sizes where chunks and lanes begin and end; and its refusals with the first offending index.
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "resample/bpf/chunk_statistics.hpp"

namespace {

namespace d = resample::bpf::detail;

d::tick_statistics chunked(const std::vector<double>& lw, const std::vector<double>& x, double shift, double truth) {
  std::vector<d::chunk_summary> chunks((lw.size() + d::chunk - 1) / d::chunk);
  for (std::size_t c = 0; c < chunks.size(); ++c) chunks[c] = d::summarise_chunk(lw, x, c, shift, truth);
  return d::combine_chunks(chunks, shift, truth == truth);
}

TEST(ChunkStatistics, MatchLongDoubleSums) {
  std::mt19937_64 gen(5);
  std::normal_distribution<double> normal;
  for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{255}, std::size_t{257}, std::size_t{4095},
                              std::size_t{4097}, std::size_t{3 * 4096 + 5}, std::size_t{256 * 4096 + 1}}) {
    std::vector<double> lw(n), x(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = -4.0 + 0.7 * normal(gen);
      // log-weights spread over ~30 nats (chunks with very different maxima), a few zero weights,
      // and one heavy particle late in the series.
      lw[i] = 12.0 * normal(gen) - 700.0;
      if (i % 97 == 3 && n > 1) lw[i] = -std::numeric_limits<double>::infinity();
    }
    if (n > 5000) lw[n - 5000] = -640.0;
    const double truth = -4.1, shift = -3.9;
    long double M = -INFINITY;
    for (const double v : lw) M = std::max<long double>(M, v);
    long double sw = 0, sw2 = 0, swx = 0, swxx = 0, swdd = 0, below = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const long double w = std::exp(static_cast<long double>(lw[i]) - M);
      sw += w;
      sw2 += w * w;
      swx += w * x[i];
      swxx += w * x[i] * x[i];
      swdd += w * (x[i] - shift) * (x[i] - shift);
      if (x[i] <= truth) below += w;
    }
    const long double mean = swx / sw;
    const auto t = chunked(lw, x, shift, truth);
    ASSERT_EQ(t.first_bad, d::no_index);
    ASSERT_FALSE(t.all_zero);
    EXPECT_EQ(t.max, static_cast<double>(M)) << "N = " << n;
    // The header's bound on every sum's relative error, r = (36 + N / 2^20) u (positive terms).
    // log-sum-exp: r, plus the roundings of log and of M + log (an ulp of the result each); ESS
    // (S^2 / S2): 3 r; mean and PIT (ratios of two sums): 2 r of E|d| <= sqrt(E d^2) or of 1, plus
    // the rounding of shift + r; var: e = 3 r E d^2 (its two sums and (E d)^2 <= E d^2), hence
    // |sd - sd'| <= min(sqrt e, e / sd) <= 2 e / (sd + sqrt e).
    const double u = 0x1p-53, r = (36.0 + static_cast<double>(n) / 0x1p20) * u;
    const double lse = static_cast<double>(M + std::log(sw)), ess = static_cast<double>(sw * sw / sw2);
    const double d2 = static_cast<double>(swdd / sw);
    EXPECT_NEAR(t.log_sum_exp, lse, r + 2 * u * std::fabs(lse)) << "N = " << n;
    EXPECT_NEAR(t.ess, ess, 3 * r * ess) << "N = " << n;
    EXPECT_NEAR(t.mean, static_cast<double>(mean), 2 * r * std::sqrt(d2) + u * std::fabs(static_cast<double>(mean)))
        << "N = " << n;
    const double sd = std::sqrt(static_cast<double>(swxx / sw - mean * mean)), e = 3 * r * d2;
    EXPECT_NEAR(t.sd, sd, 2 * e / (sd + std::sqrt(e))) << "N = " << n;
    EXPECT_NEAR(t.pit, static_cast<double>(below / sw), 2 * r) << "N = " << n;
  }
}

// The filter's log sum exp of N equal weights (after resampling), derived without a pass, is what
// the chunked sums give for N zero log-weights (every sum exact: S_w = N).
TEST(ChunkStatistics, LogSumExpOfEqualWeightsIsTheChunkedSum) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{1000}, std::size_t{65537}}) {
    const std::vector<double> zeros(n, 0.0);
    EXPECT_EQ(d::log_sum_exp_of_equal(n), chunked(zeros, zeros, 0.0, std::numeric_limits<double>::quiet_NaN()).log_sum_exp)
        << "N = " << n;
  }
}

// Without a truth the PIT is NaN; a truth below every state gives 0.
TEST(ChunkStatistics, PitOnlyWithATruth) {
  const std::vector<double> lw = {0.0, -1.0, -2.0}, x = {1.0, 2.0, 3.0};
  EXPECT_TRUE(std::isnan(chunked(lw, x, 0.0, std::numeric_limits<double>::quiet_NaN()).pit));
  EXPECT_EQ(chunked(lw, x, 0.0, 0.5).pit, 0.0);
  EXPECT_EQ(chunked(lw, x, 0.0, 3.0).pit, 1.0);
}

// The first NaN or +inf by index, whichever chunk it is in (chunks are scanned in any order by the
// GPU; the answer is the smallest index); all -inf is "every weight zero".
TEST(ChunkStatistics, RefusesWithTheFirstOffendingIndex) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  std::vector<double> lw(20000, -1.0), x(20000, 0.0);
  lw[15000] = nan;
  lw[9000] = inf;
  lw[9001] = nan;
  EXPECT_EQ(chunked(lw, x, 0.0, nan).first_bad, 9000u);
  lw[9000] = -inf;
  EXPECT_EQ(chunked(lw, x, 0.0, nan).first_bad, 9001u);
  std::vector<double> zero(5000, -inf);
  const auto t = chunked(zero, std::vector<double>(5000, 0.0), 0.0, nan);
  EXPECT_EQ(t.first_bad, d::no_index);
  EXPECT_TRUE(t.all_zero);
}

}  // namespace
