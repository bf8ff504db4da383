// The conservative z-scores of mean offspring used by the unbiasedness tests (see
// tests/unbiased_test.cpp for why N p_i (1 - p_i) bounds the variance of every unbiased scheme).
// Particles expecting fewer than 20 offspring over all draws are skipped; the threshold is
// Bonferroni over the tested ones at family-wise alpha = 1e-3.
#pragma once

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "resample/core/offspring_metrics.hpp"
#include "support/stats.hpp"

namespace resample::test {

struct z_summary {
  double max_abs_z = 0;
  std::size_t worst = 0;
  std::size_t tested = 0;
  double threshold = 0;
};

inline z_summary z_scores(const offspring_metrics& m) {
  const double n = static_cast<double>(m.size());
  const double reps = static_cast<double>(m.reps());
  z_summary out;
  std::vector<double> z;
  for (std::size_t i = 0; i < m.size(); ++i) {
    const double e = m.expected(i);
    if (e * reps < 20.0) continue;
    const double p = e / n;
    EXPECT_LE(p, 0.5) << "the variance bound for systematic needs p_i <= 1/2";
    const double se = std::sqrt(n * p * (1.0 - p) / reps);
    const double zi = (m.mean(i) - e) / se;
    if (std::abs(zi) > out.max_abs_z) {
      out.max_abs_z = std::abs(zi);
      out.worst = i;
    }
    ++out.tested;
  }
  out.threshold = bonferroni_z(1e-3, out.tested);
  return out;
}

}  // namespace resample::test
