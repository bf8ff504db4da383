// comb_estimate (the comb from weights known to a relative error, core/comb_estimate.hpp) must
// give exact_comb's answer for every particle it decides, whatever the errors within its bound:
// runs of 8 particles grouped as the GPU's warps (32 runs from one exact C), the estimated
// weights w (1 + delta) with delta at +eps, at -eps, alternating, or uniform in [-eps, eps], for
// eps = 2^-31 (the GPU's estimated_exp, a polynomial) and 2^-21 (its ex2.approx before). It
// must also decide nearly all of them (else the GPU's exact fallback would run everywhere and the
// correctness check would be empty), and a margin that ignores the weights' error must be caught
// deciding wrongly, which shows that these weights reach the margin.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "resample/core/comb_estimate.hpp"
#include "resample/core/estimated_exp.hpp"
#include "resample/core/random.hpp"
#include "resample/core/sorted_points.hpp"
#include "resample/cpu/executor.hpp"
#include "resample/cpu/multinomial_sorted.hpp"
#include "support/counting_points.hpp"
#include "support/test_weights.hpp"

namespace resample {
namespace {

constexpr int items = 8;
constexpr int runs_per_start = 32;  // a warp
constexpr double gpu_eps = estimated_exp_error;  // 2^-31, the GPU combs' (core/estimated_exp.hpp)
constexpr double wide_eps = 4.76837158203125e-07;  // 2^-21
constexpr key stratified_key{31, 32};
constexpr std::uint32_t stratified_step = 5;

enum class drift { up, down, alternating, random };

double perturbed(double w, drift d, std::size_t i, philox_stream& rng, double eps) {
  switch (d) {
    case drift::up: return w * (1 + eps);
    case drift::down: return w * (1 - eps);
    case drift::alternating: return w * (i % 2 ? 1 + eps : 1 - eps);
    case drift::random: return w * (1 + eps * (2 * uniform_open(rng) - 1));
  }
  return w;
}

struct tally {
  std::uint64_t decided = 0, undecided = 0, wrong = 0;
  std::uint64_t paths_differ = 0;  // multinomial-sorted's two ways of counting points disagree
  std::uint64_t block_walks = 0;   // runs whose small scratch took the block-by-block walk
  // Sum over particles of 2 margin per comparison (the margin of the particle's run): systematic
  // makes one, stratified two, multinomial-sorted one plus one per point of its stratum (N / B <= 1
  // on average).
  double expected_undecided = 0;
  // Stratified alone: its undecided particles, and 6 margin each as their expected count on weights
  // whose r sit on integers (equal weights; zeros, r = 0 or N), where the two points beside the
  // integer decide (stratified_from_estimate: each within 3 margin of its end with chance 3 margin).
  std::uint64_t undecided_stratified = 0;
  double expected_undecided_stratified = 0;
};

/// Runs every particle of w through comb_estimate (systematic with U, stratified, and
/// multinomial-sorted on its B strata), warps of 256 particles starting at their exact C, with
/// estimated weights perturbed by `d` at relative `error` and the margin computed for `assumed`
/// relative error; counts what it decides and what it gets wrong.
tally run_all(const std::vector<double>& w, std::uint32_t U, drift d, double error, double assumed) {
  const std::uint64_t n = w.size();
  const int F = fraction_bits(n);
  const std::vector<u128> C = test::exact_cdf_of(w);
  const exact_comb comb(C.back(), n);
  const sorted_points layout(n);
  const exact_comb sorted_comb(C.back(), layout.strata());
  const auto P = cpu::points_before_strata(cpu::serial{}, layout, stratified_key, stratified_step);
  const auto strata = [&](std::uint64_t K) { return stratum_points{P[K], P[K + 1] - P[K]}; };
  philox_stream rng({51, 52}, 0, 0);
  tally t;
  const double margin_floor = static_cast<double>(n) * 2.842170943040401e-14;
  const double sorted_margin_floor = static_cast<double>(layout.strata()) * 2.842170943040401e-14;
  for (std::size_t start = 0; start < n; start += items * runs_per_start) {
    const u128 C_start = start == 0 ? 0 : C[start - 1];
    double W_before = 0;
    for (std::size_t first = start; first < std::min<std::size_t>(n, start + items * runs_per_start); first += items) {
      double v[items];
      for (int m = 0; m < items; ++m) v[m] = first + m < n ? perturbed(w[first + m], d, first + m, rng, error) : 0.0;
      const double base = comb.estimate(C_start);
      const comb_estimate<items> systematic(comb, F, base - U * 2.3283064365386963e-10, W_before, v, assumed);
      const comb_estimate<items> stratified(comb, F, base, W_before, v, assumed);
      const comb_estimate<items> sorted(sorted_comb, F, sorted_comb.estimate(C_start), W_before, v, assumed);
      std::uint64_t O_sys[items], O_str[items], O_sorted[items];
      const unsigned undecided_sys = systematic.systematic(O_sys);
      const unsigned undecided_str = stratified.stratified(stratified_key, stratified_step, O_str);
      test::counting_points<32> scratch;
      const unsigned undecided_sorted =
          sorted.multinomial_sorted(stratified_key, stratified_step, strata, scratch, O_sorted);
      // The block-by-block count (a span longer than the scratch) decides the same particles alike.
      test::counting_points<4> small_scratch;
      std::uint64_t O_blocks[items];
      const unsigned undecided_blocks =
          sorted.multinomial_sorted(stratified_key, stratified_step, strata, small_scratch, O_blocks);
      t.block_walks += test::walked_blocks(scratch, small_scratch);
      t.paths_differ += undecided_blocks != undecided_sorted;
      for (int m = 0; m < items; ++m) t.paths_differ += !(undecided_sorted >> m & 1u) && O_blocks[m] != O_sorted[m];
      double W_end = W_before;  // the margin is the run's last particle's, for all of them
      for (int m = 0; m < items; ++m) W_end += v[m];
      const double margin = margin_floor + 2 * assumed * comb.per_weight(F) * W_end;
      const double sorted_margin = sorted_margin_floor + 2 * assumed * sorted_comb.per_weight(F) * W_end;
      for (int m = 0; m < items; ++m) {
        if (first + m >= n) continue;
        const std::size_t i = first + m;
        t.expected_undecided += 6 * margin + 4 * sorted_margin;
        t.expected_undecided_stratified += 6 * margin;
        if (undecided_sys >> m & 1u) {
          ++t.undecided;
        } else {
          ++t.decided;
          t.wrong += O_sys[m] != comb.systematic(C[i], U);
        }
        if (undecided_str >> m & 1u) {
          ++t.undecided;
          ++t.undecided_stratified;
        } else {
          ++t.decided;
          t.wrong += O_str[m] != comb.stratified(C[i], stratified_key, stratified_step);
        }
        if (undecided_sorted >> m & 1u) {
          ++t.undecided;
        } else {
          ++t.decided;
          t.wrong += O_sorted[m] != sorted_points_below(sorted_comb, layout, C[i], stratified_key, stratified_step,
                                                        strata);
        }
      }
      W_before = W_end;
    }
  }
  return t;
}

/// Adds to *block_walks (when given) the runs that took the block-by-block count: only there did
/// paths_differ compare two different ways.
void expect_exact(const std::vector<double>& w, const std::string& what, bool mostly_decided,
                  std::uint64_t* block_walks = nullptr) {
  for (const double eps : {gpu_eps, wide_eps}) {
    for (const drift d : {drift::up, drift::down, drift::alternating, drift::random}) {
      for (const std::uint32_t U : {0u, 0x80000000u, 0x9e3779b9u, 0xFFFFFFFFu}) {
        const tally t = run_all(w, U, d, eps, eps);
        if (block_walks) *block_walks += t.block_walks;
        ASSERT_EQ(t.wrong, 0u) << what << ", drift " << static_cast<int>(d) << ", U " << U << ", eps " << eps;
        ASSERT_EQ(t.paths_differ, 0u) << what << ", drift " << static_cast<int>(d) << ", U " << U << ", eps " << eps;
        ASSERT_EQ(t.decided + t.undecided, 3 * w.size());
        // An undecided particle has an integer (or a point) within the margin of its estimate: each
        // comparison's chance is 2 margin for a uniform fractional part (tally). Allow 3x that plus
        // 20 for the small counts.
        if (mostly_decided) {
          EXPECT_LE(static_cast<double>(t.undecided), 3 * t.expected_undecided + 20)
              << what << ", drift " << static_cast<int>(d) << ", eps " << eps;
        }
        // Stratified decides nearly all, even where every r sits on an integer (the points beside it).
        EXPECT_LE(static_cast<double>(t.undecided_stratified), 3 * t.expected_undecided_stratified + 20)
            << what << " (stratified), drift " << static_cast<int>(d) << ", eps " << eps;
      }
    }
  }
}

// The GPU's estimated weights keep the error the margins assume: |estimated_exp(d) / e^d - 1| <=
// 2^-31 over [-87, 0] (against expl; the worst seen is 2^-31.78, where f is near -1/2), and 0
// below -87. A polynomial one degree short (2^-27) fails it.
TEST(CombEstimate, EstimatedExpWithinItsBound) {
  std::vector<double> ds = {0.0, -0.0, -87.0, -1e-300, -0.34657359027997264, -0.6931471805599453};
  for (int i = 0; i <= 2000000; ++i) ds.push_back(-87.0 * i / 2000000.0);
  philox_stream rng({61, 62}, 0, 0);
  for (int i = 0; i < 1000000; ++i) ds.push_back(-87.0 * uniform_open(rng));
  long double worst = 0;
  for (const double d : ds) {
    const long double e = std::exp(static_cast<long double>(d));
    const long double relative = std::fabs(static_cast<long double>(estimated_exp(d)) / e - 1);
    ASSERT_LE(relative, estimated_exp_error) << "d = " << d;
    worst = std::max(worst, relative);
  }
  EXPECT_GT(worst, estimated_exp_error / 4) << "the bound is not approached: a test that cannot fail?";
  for (const double d : {std::nextafter(-87.0, -100.0), -100.0, -745.2, -std::numeric_limits<double>::infinity()}) {
    EXPECT_EQ(estimated_exp(d), 0.0) << "d = " << d;
  }
}

TEST(CombEstimate, DecidesExactlyOnPaperWeights) {
  std::uint64_t block_walks = 0;
  for (const std::size_t n : {1, 9, 256, 257, 4099, 100003}) {
    for (const double y : {0.0, 2.0, 4.0}) {
      expect_exact(test::exact_weights_of(test::log_weights(n, y, 23)), "n = " + std::to_string(n) + " y = " + std::to_string(y),
                   true, &block_walks);
    }
  }
  EXPECT_GT(block_walks, 0u) << "the block-by-block count never ran";
}

TEST(CombEstimate, DecidesExactlyWithZerosHeavyAndEqualWeights) {
  for (const std::size_t n : {8, 33, 1000, 65536}) {
    expect_exact(test::exact_weights_of(test::log_weights(n, 1.0, 5, true)), "zeros, n = " + std::to_string(n), true);
    std::vector<double> heavy(n, 1e-30);
    heavy[n / 3] = 1.0;
    expect_exact(heavy, "heavy, n = " + std::to_string(n), false);
    // Every r an integer: nothing may be decided wrongly, and little can be decided at all but
    // stratified (the points beside each integer decide it).
    expect_exact(std::vector<double>(n, 1.0), "equal, n = " + std::to_string(n), false);
  }
}

// The same weights, off by 2^-21, with a margin that assumes exact weights (2^-40, the least the
// class accepts): some particle is then decided wrongly, so the runs above do reach the margin's
// edge, and a margin that forgot the weights' error would fail them. (At 2^-31 the expected number
// of wrong decisions in these runs is below one: too few to show it.)
TEST(CombEstimate, AMarginBlindToTheWeightErrorDecidesWrongly) {
  const auto w = test::exact_weights_of(test::log_weights(100003, 2.0, 23));
  std::uint64_t wrong = 0;
  for (const drift d : {drift::up, drift::down}) {
    wrong += run_all(w, 0x9e3779b9u, d, wide_eps, 9.094947017729282e-13).wrong;
  }
  EXPECT_GT(wrong, 0u);
}

}  // namespace
}  // namespace resample
