// The production backends' API beyond the parity of ancestors: bad input on every backend and
// scheme (same error, same first index, nothing written), the offspring and cumulative-offspring
// forms and their conversions, the log-likelihood increment, and statistical agreement of each
// scheme with its paper-faithful reference in cpu_reference/.
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend_support.hpp"
#include "cpu_reference/ancestors_to_offspring.hpp"
#include "cpu_reference/paper_weights.hpp"
#include "cpu_reference/schemes.hpp"
#include "resample/core/offspring_metrics.hpp"
#include "support/test_weights.hpp"

namespace resample {
namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

class BackendBadInput : public testing::TestWithParam<scheme> {
 protected:
  void SetUp() override { RESAMPLE_SKIP_WITHOUT_GPU(); }
};

/// Runs the scheme on every backend; each must throw invalid_input naming `message` and `index`,
/// and leave the output as it was (poisoned with -7).
void expect_refused(scheme s, const std::vector<double>& lw, const std::string& message, std::optional<std::size_t> index,
                    const options& opt = {}) {
  for (const auto& b : test::all_backends()) {
    std::vector<std::int32_t> a(lw.size(), -7);
    try {
      b.ancestors(s, std::span<const double>(lw), key{1, 2}, 3, std::span<std::int32_t>(a), opt);
      ADD_FAILURE() << test::scheme_id(s) << " on " << b.name << " accepted bad input (" << message << ")";
    } catch (const invalid_input& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
      EXPECT_EQ(e.index(), index) << e.what();
    }
    EXPECT_EQ(a, std::vector<std::int32_t>(lw.size(), -7)) << test::scheme_id(s) << " on " << b.name << " wrote output";
  }
}

TEST_P(BackendBadInput, EveryBadInputNamesTheFirstIndex) {
  std::vector<double> lw(5000, -1.0);
  lw[10] = 0.0;
  auto with = [&](std::size_t i, double x, std::size_t j, double y) {
    auto v = lw;
    v[i] = x;
    v[j] = y;
    return v;
  };
  // The first bad value lies in a later block than most: blocks are 64 particles here.
  expect_refused(GetParam(), with(3700, nan, 4900, inf), "log-weight at index 3700 is NaN", 3700);
  expect_refused(GetParam(), with(3700, inf, 4900, nan), "log-weight at index 3700 is +inf", 3700);
  expect_refused(GetParam(), std::vector<double>(300, -inf), "all log-weights are -inf", std::nullopt);
  expect_refused(GetParam(), {}, "no weights: N = 0", std::nullopt);
}

#ifndef RESAMPLE_TEST_CUDA
TEST_P(BackendBadInput, OutputOfTheWrongSize) {
  std::vector<std::int32_t> a(9);
  const std::vector<double> lw(10, 0.0);
  EXPECT_THROW(cpu::ancestors(cpu::serial{}, GetParam(), std::span<const double>(lw), key{}, 0, std::span<std::int32_t>(a)),
               invalid_input);
}

#endif

INSTANTIATE_TEST_SUITE_P(Schemes, BackendBadInput, testing::ValuesIn(production_schemes),
                         [](const testing::TestParamInfo<scheme>& p) { return test::scheme_id(p.param); });

TEST(BackendBadInput, SchemeOptions) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  std::vector<double> lw(100, -2.0);
  lw[40] = 1.5;
  options bound;
  bound.rejection_log_bound = 1.0;
  expect_refused(scheme::rejection, lw, "is below the log-weight 1.5 at index 40", 40, bound);
  options eps;
  eps.metropolis_eps = 1.5;
  expect_refused(scheme::metropolis, lw, "eps must lie in (0, 1)", std::nullopt, eps);
  expect_refused(scheme::megopolis, lw, "eps must lie in (0, 1)", std::nullopt, eps);
}

#ifndef RESAMPLE_TEST_CUDA  // the CPU backends' own API (tests/gpu/cuda_backend_test.cpp has the cuda one)
TEST(BackendBadInput, IndexTypeTooNarrow) {
  const std::vector<double> lw(200, 0.0);
  std::vector<std::int8_t> a(200);
  EXPECT_THROW(cpu::ancestors(cpu::serial{}, scheme::systematic, std::span<const double>(lw), key{}, 0,
                              std::span<std::int8_t>(a)),
               invalid_input);
}

// The three forms agree: o counts a, O sums o, Code 8 on O gives a sorted; serial and parallel alike.
TEST(BackendForms, OffspringAndCumulativeOffspring) {
  const auto w = test::paper(4097, 3.0, 5);
  const std::span<const double> lw(w.log);
  const cpu::parallel par(3, 64);
  for (const scheme s : production_schemes) {
    std::vector<std::int64_t> a(lw.size()), o(lw.size()), O(lw.size()), o_par(lw.size()), O_par(lw.size()), back(lw.size());
    cpu::ancestors(cpu::serial{}, s, lw, key{4, 4}, 9, std::span<std::int64_t>(a));
    cpu::offspring(cpu::serial{}, s, lw, key{4, 4}, 9, std::span<std::int64_t>(o));
    cpu::cumulative_offspring(cpu::serial{}, s, lw, key{4, 4}, 9, std::span<std::int64_t>(O));
    cpu::offspring(par, s, lw, key{4, 4}, 9, std::span<std::int64_t>(o_par));
    cpu::cumulative_offspring(par, s, lw, key{4, 4}, 9, std::span<std::int64_t>(O_par));
    EXPECT_EQ(o, o_par) << test::scheme_id(s);
    EXPECT_EQ(O, O_par) << test::scheme_id(s);
    for (std::size_t i = 0; i < lw.size(); ++i) {
      ASSERT_EQ(o[i], std::count(a.begin(), a.end(), static_cast<std::int64_t>(i)));
      ASSERT_EQ(O[i], (i == 0 ? 0 : O[i - 1]) + o[i]);
    }
    cpu::cumulative_offspring_to_ancestors(par, std::span<const std::int64_t>(O), std::span<std::int64_t>(back));
    std::sort(a.begin(), a.end());
    EXPECT_EQ(back, a) << test::scheme_id(s);
  }
  std::vector<std::int64_t> bad = {0, 2, 1, 3}, out(4);
  EXPECT_THROW(cpu::cumulative_offspring_to_ancestors(cpu::serial{}, std::span<const std::int64_t>(bad),
                                                      std::span<std::int64_t>(out)),
               invalid_input);
}

TEST(BackendForms, LogLikelihoodIncrement) {
  reference::default_urbg rng(3);
  const auto before = reference::paper_log_weights(3000, 0.0, rng);
  auto after = before;
  long double num = 0, den = 0;
  for (std::size_t i = 0; i < after.size(); ++i) {
    after[i] += -0.5 * static_cast<double>(i % 7);  // an observation's log-likelihood
    num += std::exp(static_cast<long double>(after[i]));
    den += std::exp(static_cast<long double>(before[i]));
  }
  const double expected = static_cast<double>(std::log(num) - std::log(den));
  const double got = cpu::log_likelihood_increment(cpu::parallel(2, 64), std::span<const double>(after),
                                                   std::span<const double>(before));
  EXPECT_NEAR(got, expected, 1e-12);  // roundings of relative size 1e-16 on values of size 1
}

// Statistical agreement with cpu_reference/: the trace of Var(o) of the exact backend and of the
// reference agree within 4 standard errors (batch means, 20 batches of 250 draws each), for every
// scheme both have. Same law, different random numbers.
TEST(BackendAgreesWithReference, TraceOfVariance) {
  const auto w = test::paper(200, 2.0, 31);
  const auto expected = expected_offspring(w.linear);
  auto batch_traces = [&](auto draw) {
    std::vector<double> traces;
    for (int b = 0; b < 20; ++b) {
      offspring_metrics m(expected);
      for (int r = 0; r < 250; ++r) m.add(draw(b * 250 + r));
      traces.push_back(m.variance_trace());
    }
    const double mean = std::accumulate(traces.begin(), traces.end(), 0.0) / 20.0;
    double ss = 0;
    for (const double t : traces) ss += (t - mean) * (t - mean);
    return std::pair{mean, std::sqrt(ss / 19.0 / 20.0)};
  };
  for (const scheme s : production_schemes) {
    if (s == scheme::megopolis) continue;  // no reference
    const auto ref_scheme = reference::parse_scheme(name(s));
    ASSERT_TRUE(ref_scheme.has_value());
    reference::default_urbg rng(77);
    const auto [ref_mean, ref_se] = batch_traces([&](int) {
      return reference::ancestors_to_offspring(reference::ancestors(*ref_scheme, w, rng));
    });
    std::vector<std::size_t> a(w.size());
    const auto [exact_mean, exact_se] = batch_traces([&](int r) {
      cpu::ancestors(cpu::serial{}, s, std::span<const double>(w.log), key{8, 8}, static_cast<std::uint32_t>(r),
                     std::span<std::size_t>(a));
      return reference::ancestors_to_offspring(a);
    });
    EXPECT_LT(std::abs(ref_mean - exact_mean), 4.0 * std::hypot(ref_se, exact_se) + 1e-12)
        << test::scheme_id(s) << ": reference " << ref_mean << " +- " << ref_se << ", exact " << exact_mean << " +- "
        << exact_se;
  }
}

// The float64 CDF, unlike float32, stays close to the exact one at 2^22 (its drift is ~1e-9 of a
// particle), but it is not the exact CDF: summed in blocks it depends on the thread count.
TEST(FloatPolicy, Float64IsCloseButOrderDependent) {
  constexpr std::size_t n = std::size_t{1} << 22;
  reference::default_urbg rng(4);
  const auto lw = reference::paper_log_weights(n, 2.0, rng);
  const std::span<const double> view(lw);
  const auto s = cpu::summarise(cpu::serial{}, view);
  const auto W = cpu::float_prefix_sums<double>(cpu::serial{}, view, s.max_log_w);
  const auto W_blocked = cpu::float_prefix_sums<double>(cpu::parallel(7, 64), view, s.max_log_w);
  u128 C = 0;
  double worst = 0;
  std::size_t differ = 0;
  for (std::size_t i = 0; i < n; ++i) {
    C += quantised_weight(lw[i], s.max_log_w, s.fraction);
    const double exact_r = static_cast<double>(n) * (to_double(C) / to_double(s.total));
    worst = std::max(worst, std::abs(static_cast<double>(n) * (W[i] / W[n - 1]) - exact_r));
    differ += W[i] != W_blocked[i];
  }
  EXPECT_LT(worst, 1e-3);
  EXPECT_GT(differ, 0u) << "blocked double sums should round differently somewhere";
}

#endif

}  // namespace
}  // namespace resample
