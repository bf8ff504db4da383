// deterministic_exp and deterministic_log against a correctly rounded reference (quad precision,
// rounded to double) over a sweep: faithful (error < 1 ulp) everywhere, mostly correctly rounded.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>
#include <quadmath.h>

#include "resample/core/deterministic_math.hpp"
#include "resample/core/philox.hpp"
#include "resample/core/random.hpp"

namespace resample {
namespace {

/// (got - exact) in units of the last place of the correctly rounded result.
double ulp_error(double got, __float128 exact) {
  const double rounded = static_cast<double>(exact);
  const double ulp = std::nextafter(std::fabs(rounded), std::numeric_limits<double>::infinity()) - std::fabs(rounded);
  return static_cast<double>((static_cast<__float128>(got) - exact) / ulp);
}

TEST(DeterministicMath, ExpIsFaithfulOverTheWholeRange) {
  philox_stream s({11, 12}, 0, 0);
  double worst = 0;
  int correctly_rounded = 0;
  constexpr int draws = 1000000;
  for (int d = 0; d < draws; ++d) {
    const double x = -745.0 + 1454.7 * uniform_open(s);  // exp(x) from subnormal to near overflow
    const __float128 exact = expq(static_cast<__float128>(x));
    const double got = deterministic_exp(x);
    worst = std::max(worst, std::fabs(ulp_error(got, exact)));
    correctly_rounded += got == static_cast<double>(exact);
  }
  EXPECT_LT(worst, 1.0);
  EXPECT_GT(correctly_rounded, draws * 9 / 10);
  RecordProperty("exp_max_ulp", std::to_string(worst));
}

TEST(DeterministicMath, LogIsFaithfulOverTheWholeRange) {
  philox_stream s({13, 14}, 0, 0);
  double worst = 0;
  int correctly_rounded = 0;
  constexpr int draws = 1000000;
  for (int d = 0; d < draws; ++d) {
    const double x = std::ldexp(uniform_open(s) + 0.5, static_cast<int>(uniform_below(s, 2098u)) - 1074);
    const __float128 exact = logq(static_cast<__float128>(x));
    const double got = deterministic_log(x);
    worst = std::max(worst, std::fabs(ulp_error(got, exact)));
    correctly_rounded += got == static_cast<double>(exact);
  }
  EXPECT_LT(worst, 1.0);
  EXPECT_GT(correctly_rounded, draws * 99 / 100);
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
