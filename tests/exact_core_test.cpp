// The exact CDF and the production CPU schemes built on it: quantisation, structural properties
// checked in exact integer arithmetic, unbiasedness by z-scores, and the float CDF's bias at
// N = 2^22 that the exact CDF does not have.
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "backend_support.hpp"
#include "cpu_reference/ancestors_to_offspring.hpp"
#include "cpu_reference/paper_weights.hpp"
#include "support/test_weights.hpp"
#include "support/unbiasedness.hpp"

namespace resample {
namespace {

TEST(ExactCdf, FractionBitsKeepTheSumBelow2To128) {
  EXPECT_EQ(fraction_bits(1), 96);
  EXPECT_EQ(fraction_bits(std::uint64_t{1} << 30), 96);
  EXPECT_EQ(fraction_bits(0xFFFFFFFFull), 96);
  for (int bits = 1; bits < 64; ++bits) {
    const std::uint64_t n = (std::uint64_t{1} << bits) - 1;  // the largest N of this width
    EXPECT_LE(fraction_bits(n) + bits, 128) << "N = 2^" << bits << " - 1";
  }
}

// floor(w 2^F) from w's significand and exponent: the definition quantise computes with flops.
u128 quantise_by_bits(double w, int fraction) {
  std::uint64_t b;
  std::memcpy(&b, &w, sizeof b);
  const int e = static_cast<int>((b >> 52) & 0x7ff);
  const std::uint64_t m = (b & 0x000fffffffffffffULL) | (e ? (1ULL << 52) : 0);
  const int shift = (e ? e : 1) - 1075 + fraction;
  if (shift >= 0) return static_cast<u128>(m) << shift;
  return -shift >= 64 ? 0 : static_cast<u128>(m >> -shift);
}

TEST(ExactCdf, QuantiseMatchesTheSignificandDefinition) {
  philox_stream rng({51, 52}, 0, 0);
  for (const int F : {64, 65, 80, 95, 96}) {
    for (int trial = 0; trial < 200000; ++trial) {
      // Uniform bit patterns of [0, 1]: every exponent (subnormals included) equally often.
      const std::uint64_t bits = rng.next64() % 0x3FF0000000000001ULL;
      double w;
      std::memcpy(&w, &bits, sizeof w);
      ASSERT_EQ(quantise(w, F), quantise_by_bits(w, F)) << "w = " << w << " F = " << F;
      const double half_w = w * 0.5;
      ASSERT_EQ(quantise(half_w, F), quantise_by_bits(half_w, F)) << "w = " << half_w << " F = " << F;
    }
  }
}

TEST(ExactCdf, QuantiseIsExactFloor) {
  EXPECT_EQ(quantise(1.0, 96), static_cast<u128>(1) << 96);
  EXPECT_EQ(quantise(0.5, 96), static_cast<u128>(1) << 95);
  EXPECT_EQ(quantise(0.0, 96), 0u);
  EXPECT_EQ(quantise(std::ldexp(1.0, -96), 96), 1u);
  EXPECT_EQ(quantise(std::ldexp(1.0, -97), 96), 0u);
  EXPECT_EQ(quantise(std::numeric_limits<double>::denorm_min(), 96), 0u);
  const double w = 0.1;  // 0x3FB999999999999A = 0x1999999999999A * 2^-56
  EXPECT_EQ(quantise(w, 96), static_cast<u128>(0x1999999999999AULL) << 40);
  EXPECT_EQ(quantise(w, 64), static_cast<u128>(0x1999999999999AULL) << 8);
  EXPECT_EQ(quantise(w, 66), static_cast<u128>(0x1999999999999AULL) << 10);
  EXPECT_EQ(quantised_weight(-std::numeric_limits<double>::infinity(), 0.0, 96), 0u);
  EXPECT_EQ(quantised_weight(3.5f, 3.5f, 90), static_cast<u128>(1) << 90);
}

// The tile pass's form (the exp through its underflow, the high words summed as doubles) must give
// quantised_weights' weights and sum bit for bit: runs of eight float log-weights relative to
// maxima that put them anywhere from 0 down past the exp's range, with -inf, the max itself and
// every fraction the exact CDF uses.
TEST(ExactCdf, SplitSumGivesQuantisedWeightsBits) {
  philox_stream rng({53, 54}, 0, 0);
  constexpr float inf = std::numeric_limits<float>::infinity();
  for (const int F : {64, 65, 80, 95, 96}) {
    for (int trial = 0; trial < 100000; ++trial) {
      float lw[8];
      const double spread = trial % 3 == 0 ? 800.0 : trial % 3 == 1 ? 60.0 : 2.0;
      for (float& x : lw) x = static_cast<float>(-spread * uniform_open(rng));
      if (trial % 5 == 0) lw[trial % 8] = -inf;
      if (trial % 7 == 0) lw[(trial / 7) % 8] = 0.0f;
      double w[8], w_split[8];
      const u128 sum = quantised_weights(lw, 0.0, F, w);
      const u128 split = quantised_weights_split(lw, 0.0, F, w_split);
      ASSERT_EQ(split, sum) << "F = " << F << " trial " << trial;
      for (int m = 0; m < 8; ++m) ASSERT_EQ(std::memcmp(&w[m], &w_split[m], sizeof(double)), 0) << "lw = " << lw[m];
    }
  }
  const float all_zero[8] = {-inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf};
  double w[8];
  EXPECT_EQ(quantised_weights_split(all_zero, 0.0, 96, w), 0u);
  const float all_one[8] = {};
  EXPECT_EQ(quantised_weights_split(all_one, 0.0, 96, w), static_cast<u128>(8) << 96);
}

/// e_i = N q_i / Q as floor and "has a remainder", exactly in 128 bits (N q_i < 2^128).
struct exact_expectation {
  std::vector<std::uint64_t> floor;
  std::vector<bool> fractional;
};

exact_expectation exact_expected_offspring(std::span<const double> lw) {
  const auto s = cpu::summarise(cpu::serial{}, lw);
  exact_expectation e;
  for (const double x : lw) {
    const u128 nq = static_cast<u128>(lw.size()) * quantised_weight(x, s.max_log_w, s.fraction);
    e.floor.push_back(static_cast<std::uint64_t>(nq / s.total));
    e.fractional.push_back(nq % s.total != 0);
  }
  return e;
}

class ExactSchemeTest : public testing::TestWithParam<std::size_t> {};

TEST_P(ExactSchemeTest, StructureInExactArithmetic) {
  const std::size_t n = GetParam();
  for (const auto& [set_name, w] : test::statistical_sets(n, 77)) {
    const std::span<const double> lw(w.log);
    const auto e = exact_expected_offspring(lw);
    for (const scheme s : production_schemes) {
      for (std::uint32_t step = 0; step < 3; ++step) {
        std::vector<std::size_t> a(n);
        cpu::ancestors(cpu::serial{}, s, lw, key{5, 6}, step, std::span<std::size_t>(a));
        for (const auto j : a) ASSERT_GT(w.linear.at(j), 0.0) << test::scheme_id(s) << " chose a zero weight";
        const auto o = reference::ancestors_to_offspring(a);
        ASSERT_EQ(std::accumulate(o.begin(), o.end(), std::size_t{0}), n);
        for (std::size_t i = 0; i < n; ++i) {
          if (s == scheme::systematic || s == scheme::ssp) {  // floor or ceil of N q_i / Q, exactly
            ASSERT_TRUE(o[i] == e.floor[i] || (e.fractional[i] && o[i] == e.floor[i] + 1))
                << set_name << " i = " << i << ": o = " << o[i] << ", floor(e) = " << e.floor[i];
          }
          if (s == scheme::residual) {  // at least floor(N q_i / Q)
            ASSERT_GE(o[i], e.floor[i]);
          }
          if (s == scheme::stratified) {  // |o - e| < 2
            ASSERT_LE(o[i], e.floor[i] + 2);
            ASSERT_GE(o[i] + 2, e.floor[i] + (e.fractional[i] ? 1 : 0));
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, ExactSchemeTest, testing::ValuesIn(test::nonzero_sizes));

class ExactUnbiasedTest : public testing::TestWithParam<scheme> {};

// Each draw uses a new step of the same key: draws at different steps are independent.
TEST_P(ExactUnbiasedTest, MeanOffspringMatchesNwOverW) {
  constexpr std::size_t n = 128;
  constexpr std::uint32_t draws = 10000;
  for (const auto& [set_name, w] : test::statistical_sets(n, 1000)) {
    offspring_metrics m(expected_offspring(w.linear));
    std::vector<std::size_t> a(n);
    for (std::uint32_t step = 0; step < draws; ++step) {
      cpu::ancestors(cpu::serial{}, GetParam(), std::span<const double>(w.log), key{2024, 0}, step, std::span<std::size_t>(a));
      m.add(reference::ancestors_to_offspring(a));
    }
    const auto z = test::z_scores(m);
    EXPECT_LT(z.max_abs_z, z.threshold) << test::scheme_id(GetParam()) << " on " << set_name << ": particle " << z.worst
                                        << " mean " << m.mean(z.worst) << " against " << m.expected(z.worst);
  }
}

INSTANTIATE_TEST_SUITE_P(Schemes, ExactUnbiasedTest,
                         testing::Values(scheme::multinomial, scheme::multinomial_sorted, scheme::stratified,
                                         scheme::systematic, scheme::residual, scheme::ssp, scheme::rejection),
                         [](const testing::TestParamInfo<scheme>& p) { return test::scheme_id(p.param); });

// Megopolis is biased for finite B like Metropolis; with B = 1 the same check rejects it.
TEST(ExactUnbiased, CheckRejectsMegopolisWithOneStep) {
  const auto w = test::paper(128, 2.0, 1001);
  offspring_metrics m(expected_offspring(w.linear));
  options opt;
  opt.metropolis_steps = 1;
  std::vector<std::size_t> a(128);
  for (std::uint32_t step = 0; step < 10000; ++step) {
    cpu::ancestors(cpu::serial{}, scheme::megopolis, std::span<const double>(w.log), key{1, 0}, step, std::span<std::size_t>(a), opt);
    m.add(reference::ancestors_to_offspring(a));
  }
  const auto z = test::z_scores(m);
  EXPECT_GT(z.max_abs_z, 3.0 * z.threshold);
}

// At N = 2^22 the float32 prefix sum of the paper's weights drifts: the cumulative offspring it
// targets, r_i = N W_i / W, are off from the exact N C_i / Q by many particles, which is a bias in
// E[O^i] (E over u of floor(r_i + u) is r_i). The exact CDF's r_i are exact by construction, and
// its draws always lie within one of them.
TEST(FloatPolicy, BiasAtFourMillionParticles) {
  constexpr std::size_t n = std::size_t{1} << 22;
  reference::default_urbg rng(4);
  const auto lw = reference::paper_log_weights(n, 2.0, rng);
  const std::span<const double> view(lw);
  const auto s = cpu::summarise(cpu::serial{}, view);
  const auto W = cpu::float_prefix_sums<float>(cpu::serial{}, view, s.max_log_w);
  u128 C = 0;
  double worst_float = 0;
  for (std::size_t i = 0; i < n; ++i) {
    C += quantised_weight(lw[i], s.max_log_w, s.fraction);
    const double exact_r = static_cast<double>(n) * (to_double(C) / to_double(s.total));
    const double float_r = static_cast<double>(n) * (static_cast<double>(W[i]) / static_cast<double>(W[n - 1]));
    worst_float = std::max(worst_float, std::abs(float_r - exact_r));
  }
  EXPECT_GT(worst_float, 10.0) << "float32 CDF: largest |E[O^i] - N C_i / Q| = " << worst_float;
  RecordProperty("float32_max_cumulative_bias", std::to_string(worst_float));

  std::vector<std::int32_t> a(n);
  cpu::ancestors(cpu::serial{}, scheme::systematic, view, key{1, 2}, 3, std::span<std::int32_t>(a));
  std::vector<std::int32_t> o(n);
  cpu::ancestors_to_offspring(cpu::serial{}, std::span<const std::int32_t>(a), std::span<std::int32_t>(o));
  const auto e = exact_expected_offspring(view);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(static_cast<std::uint64_t>(o[i]) == e.floor[i] ||
                (e.fractional[i] && static_cast<std::uint64_t>(o[i]) == e.floor[i] + 1));
  }
}

}  // namespace
}  // namespace resample

namespace resample {
namespace {

// log sum exp from the exact sum against a direct long-double sum. They differ only by roundings of
// relative size ~1e-16 (quantisation, exp, the conversions); 1e-13 leaves room without hiding a
// wrong F ln 2 term, which would be off by more than 1e-10.
TEST(ExactCdf, LogSumExpMatchesDirectSum) {
  reference::default_urbg rng(12);
  for (const double y : {0.0, 4.0}) {
    const auto lw = reference::paper_log_weights(5000, y, rng);
    long double direct = 0;
    const double max = *std::max_element(lw.begin(), lw.end());
    for (const double x : lw) direct += std::exp(static_cast<long double>(x) - max);
    const double expected = max + static_cast<double>(std::log(direct));
    const double got = cpu::log_sum_exp(cpu::serial{}, std::span<const double>(lw));
    EXPECT_NEAR(got, expected, 1e-13 * std::abs(expected) + 1e-13) << "y = " << y;
  }
}

// The ESS against a direct long-double (sum w)^2 / sum w^2, on dispersed weights and on equal ones
// (ESS = N). A missing 2^-F (an earlier version returned 2^F N) or w in place of w^2 fails by far.
TEST(ExactCdf, EffectiveSampleSizeMatchesDirectSums) {
  reference::default_urbg rng(13);
  for (const double y : {0.0, 2.0, 4.0}) {
    const auto lw = reference::paper_log_weights(3000, y, rng);
    long double s1 = 0, s2 = 0;
    const double max = *std::max_element(lw.begin(), lw.end());
    for (const double x : lw) {
      const long double w = std::exp(static_cast<long double>(x) - max);
      s1 += w;
      s2 += w * w;
    }
    const double expected = static_cast<double>(s1 * s1 / s2);
    EXPECT_NEAR(cpu::effective_sample_size(cpu::serial{}, std::span<const double>(lw)), expected, 1e-12 * expected)
        << "y = " << y;
  }
  const std::vector<double> equal(777, -3.5);
  EXPECT_NEAR(cpu::effective_sample_size(cpu::serial{}, std::span<const double>(equal)), 777.0, 1e-9);
  const std::vector<double> one_alive = {-std::numeric_limits<double>::infinity(), 2.0, -std::numeric_limits<double>::infinity()};
  EXPECT_EQ(cpu::effective_sample_size(cpu::serial{}, std::span<const double>(one_alive)), 1.0);
}

}  // namespace
}  // namespace resample

namespace resample {
namespace {

// exact_comb's fast double path must give the exact answer, also right at the boundaries. With
// Q = N 2^40, r = N C / Q = C / 2^40 exactly, so C = (k 2^32 + U) 2^8 + delta puts r at
// k + U / 2^32 + delta 2^-40: point k lies below r iff delta > 0.
TEST(ExactComb, SystematicAtBoundaries) {
  philox_stream rng({21, 22}, 0, 0);
  for (const std::uint64_t n : {1ull, 7ull, 1000ull, 1ull << 20, 0xFFFFFFFFull}) {
    const u128 Q = static_cast<u128>(n) << 40;
    const exact_comb comb(Q, n);
    for (int trial = 0; trial < 2000; ++trial) {
      const std::uint64_t k = uniform_below(rng, n);
      const std::uint32_t U = rng.next();
      for (const int delta : {-1, 0, 1}) {
        const u128 base = static_cast<u128>((k << 32) | U) << 8;
        if (delta < 0 && base == 0) continue;
        const u128 C = delta < 0 ? base - 1 : base + static_cast<u128>(delta);
        if (C > Q) continue;
        ASSERT_EQ(comb.systematic(C, U), k + (delta > 0 ? 1 : 0)) << "n = " << n << " k = " << k << " U = " << U;
      }
    }
  }
}

// Stratified against its definition in exact integers: K = max{K : K Q <= N C}, plus one when
// stratum K's point is below r.
TEST(ExactComb, StratifiedMatchesExactDefinition) {
  philox_stream rng({23, 24}, 0, 0);
  for (const std::uint64_t n : {1ull, 7ull, 1000ull, 1ull << 20, 0xFFFFFFFFull}) {
    const u128 Q = static_cast<u128>(n) << 40;
    const exact_comb comb(Q, n);
    for (int trial = 0; trial < 2000; ++trial) {
      const std::uint64_t k = uniform_below(rng, n);
      // Near a stratum boundary (k) or near stratum k's own point.
      const std::uint32_t U_k = philox_stream({9, 9}, k, 4).next();
      const u128 anchors[] = {static_cast<u128>(k) << 40, static_cast<u128>((k << 32) | U_k) << 8};
      for (const u128 anchor : anchors) {
        for (const int delta : {-1, 0, 1}) {
          if (delta < 0 && anchor == 0) continue;
          const u128 C = delta < 0 ? anchor - 1 : anchor + static_cast<u128>(delta);
          if (C > Q) continue;
          std::uint64_t K = 0;
          for (std::uint64_t step = std::uint64_t{1} << 32; step > 0; step >>= 1) {  // largest K with K Q <= N C
            if (K + step <= n && mul_wide(Q, K + step) <= mul_wide(C, n)) K += step;
          }
          const std::uint64_t expected =
              K >= n ? n : K + (detail::point_below(K, philox_stream({9, 9}, K, 4).next(), Q, n, C) ? 1 : 0);
          ASSERT_EQ(comb.stratified(C, {9, 9}, 4), expected) << "n = " << n << " C near stratum " << k;
        }
      }
    }
  }
}

}  // namespace
}  // namespace resample
