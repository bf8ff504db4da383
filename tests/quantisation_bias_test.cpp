// The quantisation bias bound of docs/numerics.md, checked in quad precision (quadmath):
// |N q_i / Q - N w_i / W| <= N (1 + e_i) 2^-F for every i, with w_i the double weights
// deterministic_exp(lw_i - max). The crafted vectors put weights below 2^-44, where quantisation
// truncates, beside one weight of 1, which makes the bias of the large weight the largest the
// bound allows for.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <quadmath.h>

#include "resample/cpu/executor.hpp"
#include "resample/cpu/weight_summary.hpp"

namespace resample {
namespace {

TEST(QuantisationBias, WithinTheBoundOfNumericsMd) {
  for (const std::size_t n : {2u, 1000u, 1u << 20}) {
    for (const double tiny_log : {-30.0, -40.0, -69.0, -80.0}) {
      std::vector<double> lw(n);
      for (std::size_t i = 0; i < n; ++i) lw[i] = tiny_log - static_cast<double>(i % 7) * 0.1;
      lw[n / 3] = 0.0;
      const auto s = cpu::summarise(cpu::serial{}, std::span<const double>(lw));
      __float128 W = 0;
      for (const double x : lw) W += deterministic_exp(x - s.max_log_w);
      const __float128 N = n;
      const __float128 Q = static_cast<__float128>(s.total);
      const __float128 two_to_minus_F = ldexpq(1, -s.fraction);
      double worst_ratio = 0;  // bias / bound
      for (std::size_t i = 0; i < n; ++i) {
        const double w = deterministic_exp(lw[i] - s.max_log_w);
        const __float128 e = N * w / W;
        const __float128 bias = fabsq(N * static_cast<__float128>(quantise(w, s.fraction)) / Q - e);
        const __float128 bound = N * (1 + e) * two_to_minus_F;
        ASSERT_LE(bias, bound) << "N = " << n << ", tiny log-weight " << tiny_log << ", i = " << i;
        worst_ratio = std::max(worst_ratio, static_cast<double>(bias / bound));
      }
      if (tiny_log <= -40.0) {  // weights below 2^-44 are truncated: the bias is real, not zero
        EXPECT_GT(worst_ratio, 0.0) << "N = " << n << ", tiny log-weight " << tiny_log;
      }
      if (n == (1u << 20)) {
        RecordProperty("bias_over_bound_" + std::to_string(static_cast<int>(-tiny_log)), std::to_string(worst_ratio));
      }
    }
  }
}

}  // namespace
}  // namespace resample
