// Bad input to the serial references: every entry point must refuse it with
// resample::invalid_input, naming the problem in what() and the FIRST offending index in index(),
// and must accept -inf log-weights (and zero linear weights) without ever selecting them
// (DESIGN.md section 3: "Bad input never produces ancestors silently").
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <exception>
#include <functional>
#include <limits>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "cpu_reference/reference.hpp"
#include "resample/core/error.hpp"

namespace {

namespace ref = resample::reference;

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

/// Passes when `call` throws resample::invalid_input whose what() contains `needle` and whose
/// index() equals `index` (nullopt where the problem has no position, e.g. N = 0). An
/// AssertionResult rather than EXPECT_* inside, so that a failure points at the calling line.
template <class Call>
testing::AssertionResult throws_invalid(Call&& call, std::string_view needle,
                                        std::optional<std::size_t> index) {
  try {
    call();
  } catch (const resample::invalid_input& e) {
    const std::string what = e.what();
    if (what.find(needle) == std::string::npos) {
      return testing::AssertionFailure() << "what() is \"" << what << "\", which lacks \"" << needle << "\"";
    }
    if (e.index() != index) {
      return testing::AssertionFailure() << "what() is \"" << what << "\"; index() is "
                                         << (e.index() ? std::to_string(*e.index()) : "nullopt")
                                         << ", expected " << (index ? std::to_string(*index) : "nullopt");
    }
    return testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return testing::AssertionFailure() << "threw another exception type: " << e.what();
  }
  return testing::AssertionFailure() << "did not throw (expected \"" << needle << "\")";
}

/// n weights of assorted positive sizes, so that a bad value is the only thing wrong.
std::vector<double> good_linear(std::size_t n) {
  std::vector<double> w(n);
  for (std::size_t i = 0; i < n; ++i) w[i] = 0.25 + static_cast<double>((i * 7) % 5);
  return w;
}

std::vector<double> good_log(std::size_t n) {
  std::vector<double> lw(n);
  for (std::size_t i = 0; i < n; ++i) lw[i] = -static_cast<double>((i * 7) % 5) / 2.0;
  return lw;
}

/// `base` with value `first` at index 3 and `second` at index 7: index() must say 3, not 7.
std::vector<double> with_bad(std::vector<double> base, double first, double second) {
  base.at(3) = first;
  base.at(7) = second;
  return base;
}

/// One entry point under test. `draw` returns the ancestors it implies (empty for entry points
/// that only validate or count, which the never-selected checks then skip).
struct entry {
  std::string name;
  std::function<std::vector<std::size_t>(std::span<const double>, ref::default_urbg&)> draw;
};

std::string entry_name(const testing::TestParamInfo<entry>& info) {
  return info.param.name;
}

// Failure messages then name the entry point instead of dumping the struct's bytes.
void PrintTo(const entry& e, std::ostream* os) {
  *os << e.name;
}

/// Code 8 on an offspring vector: lets offspring-producing entry points report ancestors.
std::vector<std::size_t> offspring_to_ancestors(const std::vector<std::size_t>& o) {
  return ref::cumulative_offspring_to_ancestors(ref::inclusive_prefix_sum(std::span<const std::size_t>(o)));
}

std::vector<entry> linear_entries() {
  return {
      {"multinomial_ancestors",
       [](std::span<const double> w, ref::default_urbg& rng) { return ref::multinomial_ancestors(w, rng); }},
      {"multinomial_sorted_ancestors",
       [](std::span<const double> w, ref::default_urbg& rng) {
         return ref::multinomial_sorted_ancestors(w, rng);
       }},
      {"stratified_cumulative_offspring",
       [](std::span<const double> w, ref::default_urbg& rng) {
         return ref::cumulative_offspring_to_ancestors(ref::stratified_cumulative_offspring(w, rng));
       }},
      {"systematic_cumulative_offspring",
       [](std::span<const double> w, ref::default_urbg& rng) {
         return ref::cumulative_offspring_to_ancestors(ref::systematic_cumulative_offspring(w, rng));
       }},
      {"residual_offspring",
       [](std::span<const double> w, ref::default_urbg& rng) {
         return offspring_to_ancestors(ref::residual_offspring(w, rng));
       }},
      {"residual_ancestors",
       [](std::span<const double> w, ref::default_urbg& rng) { return ref::residual_ancestors(w, rng); }},
      {"weights_from_linear",
       [](std::span<const double> w, ref::default_urbg&) {
         (void)ref::weights::from_linear(w);
         return std::vector<std::size_t>{};
       }},
  };
}

/// A valid but not tight rejection bound: one above the largest finite log-weight, so that only the
/// weights themselves can be at fault, yet proposals are still accepted often enough to finish.
double loose_log_bound(std::span<const double> lw) {
  double bound = -inf;
  for (const double x : lw) {
    if (std::isfinite(x)) bound = std::max(bound, x + 1.0);
  }
  return std::isfinite(bound) ? bound : 0.0;  // no finite weight: the weights are refused first
}

std::vector<entry> log_entries() {
  return {
      {"metropolis_ancestors",
       [](std::span<const double> lw, ref::default_urbg& rng) {
         return ref::metropolis_ancestors(lw, 5, rng);
       }},
      {"metropolis_steps",
       [](std::span<const double> lw, ref::default_urbg&) {
         (void)ref::metropolis_steps(lw);
         return std::vector<std::size_t>{};
       }},
      {"rejection_ancestors",
       [](std::span<const double> lw, ref::default_urbg& rng) { return ref::rejection_ancestors(lw, rng); }},
      {"rejection_ancestors_bounded",
       [](std::span<const double> lw, ref::default_urbg& rng) {
         return ref::rejection_ancestors(lw, loose_log_bound(lw), rng);
       }},
      {"weights_from_log",
       [](std::span<const double> lw, ref::default_urbg&) {
         (void)ref::weights::from_log(lw);
         return std::vector<std::size_t>{};
       }},
  };
}

/// Runs `e` on `w` and returns a callable for throws_invalid.
auto call(const entry& e, const std::vector<double>& w) {
  return [&e, &w] {
    ref::default_urbg rng(1);
    (void)e.draw(std::span<const double>(w), rng);
  };
}

/// Draws `reps` times and fails if any ancestor lands on an index in `zeros`.
void expect_never_selected(const entry& e, const std::vector<double>& w,
                           const std::vector<std::size_t>& zeros, int reps = 200) {
  ref::default_urbg rng(7);
  for (int r = 0; r < reps; ++r) {
    const std::vector<std::size_t> a = e.draw(std::span<const double>(w), rng);
    for (std::size_t i = 0; i < a.size(); ++i) {
      ASSERT_LT(a[i], w.size()) << "draw " << r << ", index " << i;
      for (const std::size_t z : zeros) {
        ASSERT_NE(a[i], z) << "zero weight at index " << z << " selected in draw " << r << " at " << i;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Linear weights: multinomial, multinomial-sorted, stratified, systematic, residual, from_linear.

class LinearBadInput : public testing::TestWithParam<entry> {};

TEST_P(LinearBadInput, NaNNamesFirstIndex) {
  const auto w = with_bad(good_linear(10), nan, nan);
  EXPECT_TRUE(throws_invalid(call(GetParam(), w), "weight at index 3 is NaN", 3));
}

TEST_P(LinearBadInput, PlusInfNamesFirstIndex) {
  const auto w = with_bad(good_linear(10), inf, nan);
  EXPECT_TRUE(throws_invalid(call(GetParam(), w), "weight at index 3 is +inf", 3));
}

TEST_P(LinearBadInput, MinusInfNamesFirstIndex) {
  // -inf is only legal as a log-weight; as a linear weight it is an error, not a zero.
  const auto w = with_bad(good_linear(10), -inf, -1.0);
  EXPECT_TRUE(throws_invalid(call(GetParam(), w), "weight at index 3 is -inf", 3));
}

TEST_P(LinearBadInput, NegativeNamesFirstIndex) {
  const auto w = with_bad(good_linear(10), -0.5, inf);
  EXPECT_TRUE(throws_invalid(call(GetParam(), w), "weight at index 3 is negative", 3));
}

TEST_P(LinearBadInput, TinyNegativeIsStillNegative) {
  // The smallest subnormal below zero must not slip through as "about zero".
  const auto w = with_bad(good_linear(10), -std::numeric_limits<double>::denorm_min(), 1.0);
  EXPECT_TRUE(throws_invalid(call(GetParam(), w), "index 3 is negative", 3));
}

TEST_P(LinearBadInput, BadValueAtFirstAndLastIndex) {
  // The ends of the vector are where off-by-one scans miss.
  auto first = good_linear(10);
  first[0] = nan;
  EXPECT_TRUE(throws_invalid(call(GetParam(), first), "weight at index 0 is NaN", 0));
  auto last = good_linear(10);
  last[9] = -2.0;
  EXPECT_TRUE(throws_invalid(call(GetParam(), last), "weight at index 9 is negative", 9));
}

TEST_P(LinearBadInput, EmptyInput) {
  const std::vector<double> w;
  EXPECT_TRUE(throws_invalid(call(GetParam(), w), "N = 0", std::nullopt));
}

TEST_P(LinearBadInput, AllWeightsZero) {
  EXPECT_TRUE(
      throws_invalid(call(GetParam(), std::vector<double>(10, 0.0)), "all weights are zero", std::nullopt));
  EXPECT_TRUE(
      throws_invalid(call(GetParam(), std::vector<double>{0.0}), "all weights are zero", std::nullopt));
  // -0.0 is a zero too, so a vector of them is no more acceptable.
  EXPECT_TRUE(throws_invalid(call(GetParam(), std::vector<double>{-0.0, 0.0, -0.0}), "all weights are zero",
                             std::nullopt));
}

TEST_P(LinearBadInput, ZeroWeightsAreLegalAndNeverSelected) {
  // Leading, scattered, trailing and negative zeros; the positive weights vary in size.
  const std::vector<double> w = {0.0, 1.0, 3.0, 0.0, 0.5, -0.0, 2.0, 0.0, 7.0, 0.0};
  EXPECT_NO_THROW(call(GetParam(), w)());
  expect_never_selected(GetParam(), w, {0, 3, 5, 7, 9});
}

TEST_P(LinearBadInput, SinglePositiveWeightTakesEverything) {
  const std::vector<double> w = {0.0, 0.0, 0.0, 0.0, 4.0, 0.0};
  expect_never_selected(GetParam(), w, {0, 1, 2, 3, 5}, 20);
}

INSTANTIATE_TEST_SUITE_P(Reference, LinearBadInput, testing::ValuesIn(linear_entries()), entry_name);

// ---------------------------------------------------------------------------------------------
// Log-weights: Metropolis (and its step rule), rejection (tight and bounded), from_log.

class LogBadInput : public testing::TestWithParam<entry> {};

TEST_P(LogBadInput, NaNNamesFirstIndex) {
  const auto lw = with_bad(good_log(10), nan, inf);
  EXPECT_TRUE(throws_invalid(call(GetParam(), lw), "log-weight at index 3 is NaN", 3));
}

TEST_P(LogBadInput, PlusInfNamesFirstIndex) {
  const auto lw = with_bad(good_log(10), inf, nan);
  EXPECT_TRUE(throws_invalid(call(GetParam(), lw), "log-weight at index 3 is +inf", 3));
}

TEST_P(LogBadInput, BadValueAtFirstAndLastIndex) {
  auto first = good_log(10);
  first[0] = inf;
  EXPECT_TRUE(throws_invalid(call(GetParam(), first), "log-weight at index 0 is +inf", 0));
  auto last = good_log(10);
  last[9] = nan;
  EXPECT_TRUE(throws_invalid(call(GetParam(), last), "log-weight at index 9 is NaN", 9));
}

TEST_P(LogBadInput, NaNAfterMinusInfStillNamed) {
  // A legal -inf before the bad value must not stop or shift the scan.
  const auto lw = with_bad(good_log(10), -inf, nan);
  EXPECT_TRUE(throws_invalid(call(GetParam(), lw), "log-weight at index 7 is NaN", 7));
}

TEST_P(LogBadInput, EmptyInput) {
  const std::vector<double> lw;
  EXPECT_TRUE(throws_invalid(call(GetParam(), lw), "N = 0", std::nullopt));
}

TEST_P(LogBadInput, AllLogWeightsMinusInf) {
  EXPECT_TRUE(throws_invalid(call(GetParam(), std::vector<double>(10, -inf)), "all log-weights are -inf",
                             std::nullopt));
  EXPECT_TRUE(
      throws_invalid(call(GetParam(), std::vector<double>{-inf}), "all log-weights are -inf", std::nullopt));
}

TEST_P(LogBadInput, MinusInfIsLegalAndNeverSelected) {
  const std::vector<double> lw = {-inf, 0.0, -2.0, -inf, 1.5, -inf, -0.5, -30.0, -inf};
  EXPECT_NO_THROW(call(GetParam(), lw)());
  expect_never_selected(GetParam(), lw, {0, 3, 5, 8});
}

TEST_P(LogBadInput, NegativeAndLargeFiniteLogWeightsAreLegal) {
  // Log-weights may be any finite number; only NaN and +inf are refused.
  const std::vector<double> lw = {-700.0, -1e6, 50.0, -0.0, 80.0, -inf};
  EXPECT_NO_THROW(call(GetParam(), lw)());
}

INSTANTIATE_TEST_SUITE_P(Reference, LogBadInput, testing::ValuesIn(log_entries()), entry_name);

TEST(WeightsFromLog, MinusInfBecomesExactZero) {
  const std::vector<double> lw = {-inf, 0.0, -1.0, -inf};
  const ref::weights w = ref::weights::from_log(lw);
  EXPECT_EQ(w.linear[0], 0.0);
  EXPECT_EQ(w.linear[3], 0.0);
  EXPECT_GT(w.linear[2], 0.0);
}

// ---------------------------------------------------------------------------------------------
// Rejection's bound.

TEST(RejectionBound, BelowTrueMaximumNamesFirstLogWeightAbove) {
  const std::vector<double> lw = {0.0, 1.0, 2.0, 5.0, 0.5, 7.0, -inf, 1.0};
  ref::default_urbg rng(1);
  // Index 3 (5.0) is the first above 3.0; index 5 (7.0) is the true maximum, and also above it.
  EXPECT_TRUE(throws_invalid([&] { (void)ref::rejection_ancestors(std::span<const double>(lw), 3.0, rng); },
                             "at index 3", 3));
  EXPECT_TRUE(throws_invalid([&] { (void)ref::rejection_ancestors(std::span<const double>(lw), 3.0, rng); },
                             "rejection bound", 3));
  EXPECT_TRUE(
      throws_invalid([&] { ref::validate_rejection_bound(lw, 3.0); }, "is below the log-weight 5", 3));
}

TEST(RejectionBound, JustBelowMaximumIsRefused) {
  const std::vector<double> lw = {0.0, -1.0, 2.0};
  ref::default_urbg rng(1);
  const double bound = std::nextafter(2.0, 0.0);
  EXPECT_TRUE(throws_invalid([&] { (void)ref::rejection_ancestors(std::span<const double>(lw), bound, rng); },
                             "at index 2", 2));
}

TEST(RejectionBound, EqualToMaximumIsLegal) {
  const std::vector<double> lw = {0.0, -1.0, 2.0, -inf};
  ref::default_urbg rng(1);
  EXPECT_NO_THROW((void)ref::rejection_ancestors(std::span<const double>(lw), 2.0, rng));
}

TEST(RejectionBound, NonFiniteBoundIsRefused) {
  const std::vector<double> lw = {0.0, -1.0, 2.0};
  for (const double bound : {inf, -inf, nan}) {
    ref::default_urbg rng(1);
    EXPECT_TRUE(
        throws_invalid([&] { (void)ref::rejection_ancestors(std::span<const double>(lw), bound, rng); },
                       "rejection bound must be finite", std::nullopt))
        << "bound " << bound;
  }
}

TEST(RejectionBound, DispatchHonoursBoundOption) {
  // The scheme dispatch the CLI uses must check the bound too, not only the direct call.
  const ref::weights w = ref::weights::from_log(std::vector<double>{0.0, 4.0, 1.0, 6.0});
  ref::options opt;
  opt.rejection_log_bound = 5.0;
  ref::default_urbg rng(1);
  EXPECT_TRUE(
      throws_invalid([&] { (void)ref::ancestors(ref::scheme::rejection, w, rng, opt); }, "at index 3", 3));
}

// ---------------------------------------------------------------------------------------------
// Metropolis's eps.

TEST(MetropolisEps, OutsideOpenUnitIntervalIsRefused) {
  const std::vector<double> lw = {0.0, -1.0, -2.0, -inf};
  for (const double eps : {0.0, 1.0, -0.5, 1.5, -0.0, nan, inf, -inf}) {
    EXPECT_TRUE(
        throws_invalid([&] { (void)ref::metropolis_steps(lw, eps); }, "eps must lie in (0, 1)", std::nullopt))
        << "eps " << eps;
  }
}

TEST(MetropolisEps, InsideOpenUnitIntervalIsLegal) {
  const std::vector<double> lw = {0.0, -1.0, -2.0, -inf};
  for (const double eps : {1e-12, 0.01, 0.5, std::nextafter(1.0, 0.0)}) {
    EXPECT_GE(ref::metropolis_steps(lw, eps), 1u) << "eps " << eps;
  }
}

TEST(MetropolisEps, DispatchHonoursEpsOption) {
  const ref::weights w = ref::weights::from_log(std::vector<double>{0.0, -1.0});
  ref::options opt;
  opt.metropolis_eps = 1.0;
  ref::default_urbg rng(1);
  EXPECT_TRUE(throws_invalid([&] { (void)ref::ancestors(ref::scheme::metropolis, w, rng, opt); },
                             "eps must lie in (0, 1)", std::nullopt));
}

// ---------------------------------------------------------------------------------------------
// Code 8: cumulative offspring -> ancestors.

TEST(CumulativeOffspringToAncestors, DecreaseNamesFirstIndex) {
  // Decreases at index 3 (3 -> 2) and again at index 7 (5 -> 4).
  const std::vector<std::size_t> O = {1, 2, 3, 2, 3, 4, 5, 4, 9, 10};
  EXPECT_TRUE(throws_invalid([&] { (void)ref::cumulative_offspring_to_ancestors(O); },
                             "cumulative offspring decrease at index 3", 3));
}

TEST(CumulativeOffspringToAncestors, DecreaseAtIndexOne) {
  const std::vector<std::size_t> O = {2, 1, 3};
  EXPECT_TRUE(
      throws_invalid([&] { (void)ref::cumulative_offspring_to_ancestors(O); }, "decrease at index 1", 1));
}

TEST(CumulativeOffspringToAncestors, EndBelowN) {
  const std::vector<std::size_t> O = {1, 2, 3, 3};
  EXPECT_TRUE(throws_invalid([&] { (void)ref::cumulative_offspring_to_ancestors(O); },
                             "cumulative offspring end at 3, not at N = 4", 3));
}

TEST(CumulativeOffspringToAncestors, EndAboveN) {
  // Non-decreasing but one too many: without the check, a would be written out of bounds.
  const std::vector<std::size_t> O = {1, 2, 3, 5};
  EXPECT_TRUE(
      throws_invalid([&] { (void)ref::cumulative_offspring_to_ancestors(O); }, "end at 5, not at N = 4", 3));
}

TEST(CumulativeOffspringToAncestors, AllZeroIsNotN) {
  const std::vector<std::size_t> O = {0, 0, 0};
  EXPECT_TRUE(
      throws_invalid([&] { (void)ref::cumulative_offspring_to_ancestors(O); }, "end at 0, not at N = 3", 2));
}

// ---------------------------------------------------------------------------------------------
// Ancestor vectors: Code 9, Code 6, Code 7 and its first stage.

struct ancestor_entry {
  std::string name;
  std::function<void(std::span<const std::size_t>)> run;
};

std::string ancestor_entry_name(const testing::TestParamInfo<ancestor_entry>& info) {
  return info.param.name;
}

void PrintTo(const ancestor_entry& e, std::ostream* os) {
  *os << e.name;
}

std::vector<ancestor_entry> ancestor_entries() {
  return {
      {"ancestors_to_offspring",
       [](std::span<const std::size_t> a) { (void)ref::ancestors_to_offspring(a); }},
      {"permute_serial", [](std::span<const std::size_t> a) { (void)ref::permute_serial(a); }},
      {"permute_parallel", [](std::span<const std::size_t> a) { (void)ref::permute_parallel(a); }},
      {"prepermute", [](std::span<const std::size_t> a) { (void)ref::prepermute(a); }},
  };
}

class AncestorBadInput : public testing::TestWithParam<ancestor_entry> {};

TEST_P(AncestorBadInput, EqualToNNamesFirstIndex) {
  // N itself is the first value out of range; a second one follows at index 7.
  const std::vector<std::size_t> a = {0, 1, 2, 10, 1, 2, 0, 11, 9, 9};
  EXPECT_TRUE(throws_invalid([&] { GetParam().run(a); }, "ancestor at index 3 is 10, outside [0, 10)", 3));
}

TEST_P(AncestorBadInput, HugeValueNamesIndex) {
  // SIZE_MAX is where a signed or wrapping comparison would go wrong.
  const std::vector<std::size_t> a = {0, std::numeric_limits<std::size_t>::max(), 1};
  EXPECT_TRUE(throws_invalid([&] { GetParam().run(a); }, "ancestor at index 1", 1));
}

TEST_P(AncestorBadInput, LastIndexOutOfRange) {
  const std::vector<std::size_t> a = {0, 0, 3};
  EXPECT_TRUE(throws_invalid([&] { GetParam().run(a); }, "ancestor at index 2 is 3", 2));
}

TEST_P(AncestorBadInput, InRangeIsLegal) {
  const std::vector<std::size_t> a = {3, 3, 0, 5, 5, 5};
  EXPECT_NO_THROW(GetParam().run(a));
}

INSTANTIATE_TEST_SUITE_P(Reference, AncestorBadInput, testing::ValuesIn(ancestor_entries()),
                         ancestor_entry_name);

}  // namespace
