// deterministic_exp and deterministic_log against a correctly rounded reference (quad precision,
// rounded to double) over a sweep: faithful (error < 1 ulp) everywhere, mostly correctly rounded.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>
#include <quadmath.h>

#include "resample/core/deterministic_math.hpp"
#include "resample/core/metropolis_rule.hpp"
#include "resample/core/philox.hpp"
#include "resample/core/random.hpp"

namespace resample {
namespace {

std::uint64_t bits_of_double(double x) { return detail::bits_of(x); }

/// (got - exact) in units of the last place of the correctly rounded result.
double ulp_error(double got, __float128 exact) {
  const double rounded = static_cast<double>(exact);
  const double ulp = std::nextafter(std::fabs(rounded), std::numeric_limits<double>::infinity()) - std::fabs(rounded);
  return static_cast<double>((static_cast<__float128>(got) - exact) / ulp);
}

struct sweep_result {
  double worst_ulp = 0;
  double correctly_rounded = 0;  // fraction of the points
};

/// f against its quad-precision twin at 10^6 points x = draw(stream).
template <class Draw, class F, class Exact>
sweep_result sweep(philox_stream s, Draw draw, F f, Exact exact) {
  constexpr int draws = 1000000;
  sweep_result r;
  int correct = 0;
  for (int d = 0; d < draws; ++d) {
    const double x = draw(s);
    const __float128 e = exact(static_cast<__float128>(x));
    const double got = f(x);
    r.worst_ulp = std::max(r.worst_ulp, std::fabs(ulp_error(got, e)));
    correct += got == static_cast<double>(e);
  }
  r.correctly_rounded = correct / static_cast<double>(draws);
  return r;
}

TEST(DeterministicMath, ExpIsFaithfulOverTheWholeRange) {
  // exp(x) from subnormal to near overflow.
  const auto r = sweep(philox_stream({11, 12}, 0, 0), [](philox_stream& s) { return -745.0 + 1454.7 * uniform_open(s); },
                       [](double x) { return deterministic_exp(x); }, [](__float128 x) { return expq(x); });
  EXPECT_LT(r.worst_ulp, 1.0);
  EXPECT_GT(r.correctly_rounded, 0.9);
  RecordProperty("exp_max_ulp", std::to_string(r.worst_ulp));
}

// The weights' exp, eight at a time in lockstep, must be deterministic_exp bit for bit on x <= 0:
// normal and subnormal results, the cut-off near -745.13, -0, -inf.
TEST(DeterministicMath, LockstepExpOfNonpositiveIsDeterministicExp) {
  philox_stream s({13, 14}, 0, 0);
  const double specials[] = {0.0, -0.0, -1e-300, -708.0, -708.4, -709.0, -744.4, -745.1332191019411,
                             -745.1332191019412, -745.1332191019413, -746.0, -1e308,
                             -std::numeric_limits<double>::infinity()};
  for (const double x : specials) {
    EXPECT_EQ(bits_of_double(deterministic_exp_nonpositive(x)), bits_of_double(deterministic_exp(x))) << "x = " << x;
    const double in[1] = {x};
    double out[1];
    deterministic_exp_nonpositive_through_underflow(in, out);
    EXPECT_EQ(bits_of_double(out[0]), bits_of_double(deterministic_exp(x))) << "through underflow, x = " << x;
  }
  for (int trial = 0; trial < 200000; ++trial) {
    double x[8], e[8], u[8];
    for (double& v : x) v = trial % 2 ? -750.0 * uniform_open(s) : -40.0 * uniform_open(s);
    deterministic_exp_nonpositive(x, e);
    deterministic_exp_nonpositive_through_underflow(x, u);
    for (int m = 0; m < 8; ++m) {
      ASSERT_EQ(bits_of_double(e[m]), bits_of_double(deterministic_exp(x[m]))) << "x = " << x[m];
      ASSERT_EQ(bits_of_double(u[m]), bits_of_double(e[m])) << "through underflow, x = " << x[m];
    }
  }
}

// metropolis_accept skips the exp for an uphill move, d >= 0, because every uniform it is given
// is below 1 and deterministic_exp(d) is at least 1 there. Both halves of that claim, checked:
// the exp near 0 (where the series alone decides), across each k's reduction boundary, and over
// the whole range; the largest uniform_open can return.
TEST(DeterministicMath, ExpOfNonnegativeIsAtLeastOneSoUphillMovesNeedNoExp) {
  EXPECT_EQ(deterministic_exp(0.0), 1.0);
  EXPECT_EQ(deterministic_exp(-0.0), 1.0);
  double x = std::numeric_limits<double>::denorm_min();
  for (int i = 0; i < 2000; ++i, x = std::nextafter(x, 1.0)) ASSERT_GE(deterministic_exp(x), 1.0) << "x = " << x;
  for (int k = 0; k < 1024; ++k) {
    const double edge = (k + 0.5) * 0.6931471805599453;  // where round(x / ln 2) steps from k to k + 1
    double y = edge;
    for (int i = 0; i < 64; ++i) y = std::nextafter(y, 0.0);
    for (int i = 0; i < 128; ++i, y = std::nextafter(y, 1e308)) ASSERT_GE(deterministic_exp(y), 1.0) << "x = " << y;
  }
  philox_stream s({15, 16}, 0, 0);
  for (int trial = 0; trial < 1000000; ++trial) {
    const double d = trial % 2 ? 710.0 * uniform_open(s) : 1e-3 * uniform_open(s);
    ASSERT_GE(deterministic_exp(d), 1.0) << "x = " << d;
  }
  EXPECT_LT(uniform_open_53(~std::uint64_t{0}), 1.0);
  EXPECT_TRUE(metropolis_accept(1.0, 1.0, uniform_open_53(~std::uint64_t{0})));
  EXPECT_FALSE(metropolis_accept(0.0, 1.0, uniform_open_53(~std::uint64_t{0})));
}

TEST(DeterministicMath, LogIsFaithfulOverTheWholeRange) {
  // x over every binade, subnormals included.
  const auto r = sweep(
      philox_stream({13, 14}, 0, 0),
      [](philox_stream& s) { return std::ldexp(uniform_open(s) + 0.5, static_cast<int>(uniform_below(s, 2098u)) - 1074); },
      [](double x) { return deterministic_log(x); }, [](__float128 x) { return logq(x); });
  EXPECT_LT(r.worst_ulp, 1.0);
  EXPECT_GT(r.correctly_rounded, 0.99);
  RecordProperty("log_max_ulp", std::to_string(r.worst_ulp));
}

TEST(DeterministicMath, SpecialValues) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(deterministic_exp(0.0), 1.0);
  EXPECT_EQ(deterministic_exp(-inf), 0.0);
  EXPECT_EQ(deterministic_exp(inf), inf);
  EXPECT_EQ(deterministic_exp(710.0), inf);
  EXPECT_EQ(deterministic_exp(-746.0), 0.0);
  EXPECT_TRUE(std::isnan(deterministic_exp(std::nan(""))));
  EXPECT_EQ(deterministic_exp(709.78), static_cast<double>(expq(static_cast<__float128>(709.78))));  // k = 1024 path
  EXPECT_EQ(deterministic_log(1.0), 0.0);
  EXPECT_EQ(deterministic_log(0.0), -inf);
  EXPECT_EQ(deterministic_log(inf), inf);
  EXPECT_TRUE(std::isnan(deterministic_log(-1.0)));
  EXPECT_EQ(deterministic_log(std::numeric_limits<double>::denorm_min()),
            static_cast<double>(logq(static_cast<__float128>(std::numeric_limits<double>::denorm_min()))));
}

}  // namespace
}  // namespace resample
