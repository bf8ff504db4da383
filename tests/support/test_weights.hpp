// Weight vectors the tests share: the paper's (y = 0, 2, 4), one with exact zeros (leading,
// trailing and scattered), and dyadic integer weights for which N w_i / W is exact in double.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "cpu_reference/paper_weights.hpp"
#include "cpu_reference/weights.hpp"
#include "resample/core/deterministic_math.hpp"
#include "resample/core/exact_cdf.hpp"

namespace resample::test {

inline constexpr std::size_t sizes[] = {0, 1, 2, 31, 32, 33, 1000, 4097};
inline constexpr std::size_t nonzero_sizes[] = {1, 2, 31, 32, 33, 1000, 4097};

struct named_weights {
  std::string name;
  reference::weights w;
};

/// ln phi(x + y), x ~ N(0, 1): the paper's benchmark weights.
inline reference::weights paper(std::size_t n, double y, unsigned seed) {
  reference::default_urbg rng(seed);
  return reference::weights::from_log(reference::paper_log_weights(n, y, rng));
}

/// The paper's log-weights (dispersion y) as T; with_zeros makes every third one -inf (index 0
/// included) and index N/2 a positive weight.
template <class T = double>
std::vector<T> log_weights(std::size_t n, double y, unsigned seed, bool with_zeros = false) {
  reference::default_urbg rng(seed);
  const auto lw = reference::paper_log_weights(n, y, rng);
  std::vector<T> out(lw.begin(), lw.end());
  if (with_zeros) {
    for (std::size_t i = 0; i < n; i += 3) out[i] = -std::numeric_limits<T>::infinity();
    out[n / 2] = 0;
  }
  return out;
}

/// The exact CDF's weights of log-weights lw: deterministic_exp(lw_i - max lw), the largest 1.
inline std::vector<double> exact_weights_of(const std::vector<double>& lw) {
  double max = -std::numeric_limits<double>::infinity();
  for (const double x : lw) max = std::fmax(max, x);
  std::vector<double> w(lw.size());
  for (std::size_t i = 0; i < lw.size(); ++i) w[i] = deterministic_exp(lw[i] - max);
  return w;
}

/// The exact CDF of weights w: C_i = q_0 + ... + q_i, q the weights quantised for N = w.size().
inline std::vector<u128> exact_cdf_of(const std::vector<double>& w) {
  const int F = fraction_bits(w.size());
  std::vector<u128> C(w.size());
  u128 sum = 0;
  for (std::size_t i = 0; i < w.size(); ++i) C[i] = sum += quantise(w[i], F);
  return C;
}

/// Paper weights (y = 1) with exact zeros: index 0, every third index and the last are -inf, but
/// never all of them (index 1 stays positive when n >= 2).
inline reference::weights with_zeros(std::size_t n, unsigned seed) {
  reference::default_urbg rng(seed);
  std::vector<double> lw = reference::paper_log_weights(n, 1.0, rng);
  for (std::size_t i = 0; i < n; ++i) {
    if (n >= 2 && (i == 0 || i % 3 == 0 || i == n - 1)) lw[i] = -std::numeric_limits<double>::infinity();
  }
  if (n >= 2) lw[1] = 0.0;
  return reference::weights::from_log(lw);
}

/// The weight sets of the statistical tests, at size n.
inline std::vector<named_weights> statistical_sets(std::size_t n, unsigned seed) {
  return {{"paper_y0", paper(n, 0.0, seed)},
          {"paper_y2", paper(n, 2.0, seed + 1)},
          {"paper_y4", paper(n, 4.0, seed + 2)},
          {"with_zeros", with_zeros(n, seed + 3)}};
}

/// Integer weights in [0, 16) with the last raised so that W is a power of two: then every
/// N W^i / W is exact in double, and N w_i / W is exactly representable.
inline reference::weights dyadic(std::size_t n, unsigned seed) {
  reference::default_urbg rng(seed);
  std::vector<double> w(n);
  double total = 0;
  for (double& x : w) {
    x = static_cast<double>(rng() % 16);
    total += x;
  }
  double power = 1;
  while (power < total + 1) power *= 2;
  w[n - 1] += power - total;
  return reference::weights::from_linear(w);
}

}  // namespace resample::test
