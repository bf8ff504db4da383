// Variance and bias where theory orders the schemes, with fixed seeds and standard errors from
// batch means (K batches of R / K draws: valid whatever the correlation between particles).
//
// - multinomial: trace Var(o) = N (1 - sum_i p_i^2) exactly; the sample trace must agree.
// - stratified and residual: Var(o^i) <= multinomial's for every i (Douc & Cappe, 2005), so their
//   trace lies below multinomial's; asserted with a margin of 4 standard errors.
// - Metropolis: the bias shrinks as B grows; bias^2 is estimated without the noise of the mean,
//   D = sum_i [(mean o_i - e_i)^2 - s_i^2 / R], E[D] = sum_i bias_i^2.
#include <cmath>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "cpu_reference/ancestors_to_offspring.hpp"
#include "cpu_reference/schemes.hpp"
#include "resample/core/offspring_metrics.hpp"
#include "support/test_weights.hpp"

namespace resample::reference {
namespace {

constexpr std::size_t n_particles = 128;
constexpr std::size_t n_batches = 25;
constexpr std::size_t draws_per_batch = 400;

struct estimate {
  double mean;
  double se;
};

estimate batch_mean(const std::vector<double>& xs) {
  const double k = static_cast<double>(xs.size());
  const double mean = std::accumulate(xs.begin(), xs.end(), 0.0) / k;
  double ss = 0;
  for (const double x : xs) ss += (x - mean) * (x - mean);
  return {mean, std::sqrt(ss / (k - 1.0) / k)};
}

/// Per batch: the sample trace of Var(o) and the noise-corrected bias^2 D.
struct batch_estimates {
  estimate trace;
  estimate bias2;
};

batch_estimates run_batches(scheme s, const weights& w, unsigned seed, const options& opt = {}) {
  default_urbg rng(seed);
  const auto expected = expected_offspring(w.linear);
  std::vector<double> traces;
  std::vector<double> bias2;
  for (std::size_t b = 0; b < n_batches; ++b) {
    offspring_metrics m(expected);
    for (std::size_t r = 0; r < draws_per_batch; ++r) m.add(ancestors_to_offspring(ancestors(s, w, rng, opt)));
    traces.push_back(m.variance_trace());
    bias2.push_back(m.bias_squared() - m.variance_trace() / static_cast<double>(m.reps()));
  }
  return {batch_mean(traces), batch_mean(bias2)};
}

double multinomial_trace(const weights& w) {
  const auto e = expected_offspring(w.linear);
  const double n = static_cast<double>(e.size());
  double sum_p2 = 0;
  for (const double x : e) sum_p2 += (x / n) * (x / n);
  return n * (1.0 - sum_p2);
}


TEST(Variance, MultinomialTraceMatchesTheory) {
  for (const auto& [set_name, w] : test::statistical_sets(n_particles, 500)) {
    const auto est = run_batches(scheme::multinomial, w, 11).trace;
    const double theory = multinomial_trace(w);
    EXPECT_LT(std::abs(est.mean - theory), 4.0 * est.se)
        << set_name << ": sample trace " << est.mean << " +- " << est.se << ", theory " << theory;
  }
}

TEST(Variance, StratifiedAndResidualBelowMultinomial) {
  for (const auto& [set_name, w] : test::statistical_sets(n_particles, 600)) {
    const double multinomial = multinomial_trace(w);
    for (const scheme s : {scheme::stratified, scheme::residual, scheme::multinomial_sorted}) {
      const auto est = run_batches(s, w, 12).trace;
      if (s == scheme::multinomial_sorted) {  // the same law as multinomial: equal, not below
        EXPECT_LT(std::abs(est.mean - multinomial), 4.0 * est.se) << set_name;
        continue;
      }
      EXPECT_LT(est.mean + 4.0 * est.se, multinomial)
          << name(s) << " on " << set_name << ": trace " << est.mean << " +- " << est.se
          << " against multinomial's " << multinomial;
    }
  }
}

TEST(Variance, MetropolisBiasShrinksAsStepsGrow) {
  const auto w = test::paper(n_particles, 2.0, 700);
  std::vector<estimate> bias2;
  const std::size_t steps[] = {1, 2, 4, 8};
  for (const std::size_t b : steps) {
    options opt;
    opt.metropolis_steps = b;
    bias2.push_back(run_batches(scheme::metropolis, w, 13, opt).bias2);
  }
  for (std::size_t k = 0; k + 1 < bias2.size(); ++k) {
    const double margin = 4.0 * std::hypot(bias2[k].se, bias2[k + 1].se);
    EXPECT_GT(bias2[k].mean - bias2[k + 1].mean, margin)
        << "bias^2 at B = " << steps[k] << " is " << bias2[k].mean << " +- " << bias2[k].se
        << ", at B = " << steps[k + 1] << " it is " << bias2[k + 1].mean << " +- " << bias2[k + 1].se;
  }
  // With B from the eps rule (eps = 0.01) the remaining bias is small against B = 1's.
  const auto rule = run_batches(scheme::metropolis, w, 14).bias2;
  EXPECT_LT(rule.mean, 0.01 * bias2[0].mean) << "bias^2 with the eps rule: " << rule.mean;
}

}  // namespace
}  // namespace resample::reference
