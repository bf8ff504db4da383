// comb_run (the comb over a thread's run of particles, one exact C per run) must give exact_comb's
// answer for every particle: on real weight vectors, on equal weights (every r an integer: the
// stratified shortcut and the exact fallback), with zeros, with one heavy particle, and on
// synthetic runs at N = 2^32 - 1.
#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "resample/core/comb_run.hpp"
#include "resample/core/random.hpp"
#include "resample/cpu/executor.hpp"
#include "resample/cpu/multinomial_sorted.hpp"
#include "support/counting_points.hpp"
#include "support/test_weights.hpp"

namespace resample {
namespace {

constexpr int items = 8;
constexpr key stratified_key{31, 32};
constexpr std::uint32_t stratified_step = 5;

/// Checks every run of `items` particles of the weights w (w[i] in [0, 1], the largest 1) against
/// exact_comb, for systematic with each U in Us and for stratified, and against
/// sorted_points_below for multinomial-sorted; adds to *block_walks (when given) the runs whose
/// small scratch took the block-by-block count.
void expect_runs_match(const std::vector<double>& w, const std::vector<std::uint32_t>& Us, const std::string& what,
                       std::uint64_t* block_walks = nullptr) {
  const std::uint64_t n = w.size();
  const int F = fraction_bits(n);
  const std::vector<u128> C = test::exact_cdf_of(w);
  const exact_comb comb(C.back(), n);
  const sorted_points layout(n);
  const auto P = cpu::points_before_strata(cpu::serial{}, layout, stratified_key, stratified_step);
  const auto strata = [&](std::uint64_t K) { return stratum_points{P[K], P[K + 1] - P[K]}; };
  const exact_comb sorted_comb(C.back(), layout.strata());
  std::uint64_t checked = 0;
  for (std::size_t first = 0; first < n; first += items) {
    double run_w[items];
    for (int m = 0; m < items; ++m) run_w[m] = first + m < n ? w[first + m] : 0.0;
    const u128 before = first == 0 ? 0 : C[first - 1];
    const comb_run<items> run(comb, F, before, run_w);
    for (const std::uint32_t U : Us) {
      run.systematic(U, [&](int m, std::uint64_t O) {
        if (first + m >= n) return;
        ASSERT_EQ(O, comb.systematic(C[first + m], U)) << what << ": systematic, particle " << first + m << " U " << U;
        ++checked;
      });
    }
    run.stratified(stratified_key, stratified_step, [&](int m, std::uint64_t O) {
      if (first + m >= n) return;
      ASSERT_EQ(O, comb.stratified(C[first + m], stratified_key, stratified_step))
          << what << ": stratified, particle " << first + m;
    });
    const comb_run<items> sorted_run(sorted_comb, F, before, run_w);
    // Both ways of counting the points: through a scratch that holds the run's span, and, where
    // four words cannot, block by block.
    test::counting_points<32> scratch;
    test::counting_points<4> small_scratch;
    for (const bool small : {false, true}) {
      const auto check = [&](int m, std::uint64_t O) {
        if (first + m >= n) return;
        ASSERT_EQ(O, sorted_points_below(sorted_comb, layout, C[first + m], stratified_key, stratified_step, strata))
            << what << ": multinomial-sorted, particle " << first + m << (small ? ", block by block" : "");
      };
      if (small) sorted_run.multinomial_sorted(stratified_key, stratified_step, layout, strata, small_scratch, check);
      else sorted_run.multinomial_sorted(stratified_key, stratified_step, layout, strata, scratch, check);
    }
    if (block_walks) *block_walks += test::walked_blocks(scratch, small_scratch);
  }
  EXPECT_EQ(checked, n * Us.size()) << what << ": every particle was checked";
}

const std::vector<std::uint32_t> some_Us{0u, 1u, 0x80000000u, 0x9e3779b9u, 0xFFFFFFFFu};

TEST(CombRun, MatchesExactCombOnPaperWeights) {
  std::uint64_t block_walks = 0;
  for (const std::size_t n : {1, 7, 8, 9, 1000, 4099, 100003}) {
    for (const double y : {0.0, 2.0, 4.0}) {
      expect_runs_match(test::exact_weights_of(test::log_weights(n, y, 17)), some_Us,
                        "n = " + std::to_string(n) + " y = " + std::to_string(y), &block_walks);
    }
  }
  EXPECT_GT(block_walks, 0u) << "the block-by-block count never ran";
}

TEST(CombRun, MatchesExactCombWithZerosAndEqualWeights) {
  for (const std::size_t n : {8, 33, 1000, 65536}) {
    expect_runs_match(test::exact_weights_of(test::log_weights(n, 1.0, 5, true)), some_Us, "zeros, n = " + std::to_string(n));
    expect_runs_match(std::vector<double>(n, 1.0), some_Us, "equal, n = " + std::to_string(n));
    std::vector<double> heavy(n, 1e-30);
    heavy[n / 3] = 1.0;
    expect_runs_match(heavy, some_Us, "heavy, n = " + std::to_string(n));
    std::vector<double> leading_zeros(n, 0.5);
    for (std::size_t i = 0; i < n / 2; ++i) leading_zeros[i] = 0.0;
    leading_zeros[n - 1] = 1.0;
    expect_runs_match(leading_zeros, some_Us, "leading zeros, n = " + std::to_string(n));
  }
}

// N = 2^32 - 1 without the vector: Q as if every weight were 1, a run starting at a random
// particle k with weights 1 (every r an integer) or random ones below 1.
TEST(CombRun, MatchesExactCombAtTheLargestN) {
  const std::uint64_t n = 0xFFFFFFFFull;
  const int F = fraction_bits(n);
  const u128 Q = static_cast<u128>(n) << F;
  const exact_comb comb(Q, n);
  philox_stream rng({41, 42}, 0, 0);
  for (int trial = 0; trial < 3000; ++trial) {
    const std::uint64_t k = uniform_below(rng, n - items);
    double w[items];
    for (double& x : w) x = trial % 2 ? 1.0 : uniform_open(rng);
    const u128 before = static_cast<u128>(k) << F;
    const std::uint32_t U = trial % 3 ? rng.next() : 0u;
    u128 C = before;
    const comb_run<items> run(comb, F, before, w);
    std::uint64_t expected[items];
    for (int m = 0; m < items; ++m) expected[m] = comb.systematic(C += quantise(w[m], F), U);
    run.systematic(U, [&](int m, std::uint64_t O) { ASSERT_EQ(O, expected[m]) << "systematic, k = " << k << " m = " << m; });
    C = before;
    for (int m = 0; m < items; ++m) expected[m] = comb.stratified(C += quantise(w[m], F), stratified_key, trial);
    run.stratified(stratified_key, trial,
                   [&](int m, std::uint64_t O) { ASSERT_EQ(O, expected[m]) << "stratified, k = " << k << " m = " << m; });
  }
}

// Multinomial-sorted at N = 2^32 - 1 (B = 2^31 strata) with made-up stratum counts K mod 4 (the
// comb's answer is a function of them, whatever they are): runs at random particles, weights 1 or
// random; every third run's first r put on a stratum's first point, or one unit of C past it.
TEST(CombRun, MultinomialSortedMatchesTheExactCountAtTheLargestN) {
  const std::uint64_t n = 0xFFFFFFFFull;
  const int F = fraction_bits(n);
  const u128 Q = static_cast<u128>(n) << F;
  const sorted_points layout(n);
  const exact_comb comb(Q, layout.strata());
  const auto strata = [](std::uint64_t K) {
    constexpr std::uint64_t partial[4] = {0, 0, 1, 3};  // 0 + 1 + ... below K within its group of 4
    return stratum_points{6 * (K / 4) + partial[K % 4], K % 4};
  };
  philox_stream rng({47, 48}, 0, 0);
  int near_point = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    double w[items];
    for (double& x : w) x = trial % 2 ? 1.0 : uniform_open(rng);
    u128 before = static_cast<u128>(uniform_below(rng, n - items)) << F;
    if (trial % 3 == 0) {  // C_0 within one unit of the C at which r_0 is stratum K's first point
      const std::uint64_t K = uniform_below(rng, layout.strata() - 1);
      if (K % 4 == 0) continue;  // no points
      const std::uint32_t u = sorted_points::point_offset({71, 72}, 9, strata(K).before);
      // r = B C / Q = C 2^31 / (n 2^F): the C of point K + u 2^-32 is (K 2^32 + u) n 2^(F - 63).
      const u128 at = (static_cast<u128>((K << 32) | u) * n) << (F - 63);
      before = at - (static_cast<u128>(1) << F) + static_cast<u128>(static_cast<std::int64_t>(trial % 2 ? 1 : 0));
      w[0] = 1.0;
      ++near_point;
    }
    const comb_run<items> run(comb, F, before, w);
    std::uint64_t expected[items];
    u128 C = before;
    for (int m = 0; m < items; ++m) expected[m] = sorted_points_below(comb, layout, C += quantise(w[m], F), {71, 72}, 9, strata);
    detail::local_points<32> scratch;
    run.multinomial_sorted({71, 72}, 9, layout, strata, scratch,
                           [&](int m, std::uint64_t O) { ASSERT_EQ(O, expected[m]) << "trial " << trial << " m = " << m; });
  }
  EXPECT_GT(near_point, 500);
}

// The stratified shortcut near an integer J takes O = J only when point J - 1 lies below r and
// point J above it with room to spare. Here r lies 2^-15 from J (inside the shortcut's window at
// N = 2^32 - 1, margin about 2^-13) on the side where a point within 2^-15 of J changes O: J - 1
// + u_{J-1} >= r when r = J - 2^-15 and u_{J-1} >= 1 - 2^-15, and J + u_J < r when r = J + 2^-15
// and u_J < 2^-15. Such strata are searched for, so both fallbacks run.
TEST(CombRun, StratifiedShortcutFallsBackWhenAPointIsNearR) {
  const std::uint64_t n = 0xFFFFFFFFull;
  const int F = fraction_bits(n);
  const exact_comb comb(static_cast<u128>(n) << F, n);
  const u128 delta = u128{1} << (F - 15);
  philox_stream rng({43, 44}, 0, 0);
  for (const bool r_below_J : {true, false}) {
    for (int found = 0; found < 8;) {
      const std::uint64_t J = 1 + uniform_below(rng, n - items - 1);
      const std::uint32_t U = philox_stream(stratified_key, r_below_J ? J - 1 : J, stratified_step).next();
      if (r_below_J ? U < 0xFFFF0000u : U >= 0x10000u) continue;
      ++found;
      const double w[items] = {1, 1, 1, 1, 1, 1, 1, 1};
      const u128 before = (static_cast<u128>(J - 1) << F) + (r_below_J ? -delta : delta);  // r_0 = J -+ 2^-15
      const comb_run<items> run(comb, F, before, w);
      std::uint64_t expected[items];
      u128 C = before;
      for (int m = 0; m < items; ++m) expected[m] = comb.stratified(C += quantise(w[m], F), stratified_key, stratified_step);
      EXPECT_EQ(expected[0], r_below_J ? J - 1 : J + 1) << "the point near r decides";
      run.stratified(stratified_key, stratified_step,
                     [&](int m, std::uint64_t O) { ASSERT_EQ(O, expected[m]) << "J = " << J << " m = " << m; });
    }
  }
}

// Stratum K is certain but its point K + u_K lies one unit of C from r (or on it): the estimate
// cannot tell the side, the exact comparison must.
TEST(CombRun, StratifiedPointWithinOneUnitOfR) {
  const std::uint64_t n = 0xFFFFFFFFull;
  const int F = fraction_bits(n);
  const exact_comb comb(static_cast<u128>(n) << F, n);  // r = C / 2^96
  philox_stream rng({45, 46}, 0, 0);
  int below = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const std::uint64_t K = 1 + uniform_below(rng, n - items - 1);
    const std::uint32_t U = philox_stream(stratified_key, K, stratified_step).next();
    const u128 point = static_cast<u128>((K << 32) | U) << (F - 32);  // C at which r = K + u_K
    for (const int d : {-1, 0, 1}) {
      const double w[items] = {1, 1, 1, 1, 1, 1, 1, 1};
      const u128 before = point - (u128{1} << F) + static_cast<u128>(static_cast<std::int64_t>(d));  // C_0 = point + d
      const comb_run<items> run(comb, F, before, w);
      u128 C = before;
      std::uint64_t expected[items];
      for (int m = 0; m < items; ++m) expected[m] = comb.stratified(C += quantise(w[m], F), stratified_key, stratified_step);
      below += expected[0] == K + 1;
      run.stratified(stratified_key, stratified_step,
                     [&](int m, std::uint64_t O) { ASSERT_EQ(O, expected[m]) << "K = " << K << " d = " << d << " m = " << m; });
    }
  }
  EXPECT_EQ(below, 3000) << "point K lies below r only for d = +1";
}

}  // namespace
}  // namespace resample
