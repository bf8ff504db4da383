// What the Metropolis-type resamplers (Metropolis, Megopolis) share, on host and device: the step
// count B from the eps rule and the acceptance test. Both are deterministic functions of the
// inputs, so every backend runs the same chains.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "resample/core/deterministic_math.hpp"
#include "resample/core/wide_int.hpp"

namespace resample {

/// B = max(1, ceil(ln eps / ln(1 - beta))), beta = mean w / max w = Q / (N 2^F) from the exact CDF
/// (so B does not depend on the order of a floating-point sum). Requires 0 < eps < 1.
RESAMPLE_HOST_DEVICE inline std::uint64_t metropolis_steps_from_sum(u128 total, std::uint64_t n, int fraction, double eps) {
  const double beta = to_double(total) / static_cast<double>(n) * std::ldexp(1.0, -fraction);
  const double b = std::ceil(deterministic_log(eps) / deterministic_log(1.0 - beta));
  if (!(b >= 1.0)) return 1;  // beta = 1 (equal weights) gives ln 0 = -inf and b = 0
  if (!(b < 1e18)) return std::uint64_t{1} << 60;
  return static_cast<std::uint64_t>(b);
}

/// Accept a move from a chain at log-weight lw_k to lw_j with the uniform u in (0, 1):
/// u < w_j / w_k. A zero weight is never accepted; a chain on a zero weight accepts any positive one.
template <class T>
RESAMPLE_HOST_DEVICE inline bool metropolis_accept(T lw_j, T lw_k, double u) {
  constexpr T zero = -std::numeric_limits<T>::infinity();
  if (lw_j == zero) return false;
  if (lw_k == zero) return true;
  // u < 1 <= deterministic_exp(d) for every d >= 0 (for d < ln(2)/2 the series has only
  // positive terms; beyond, 2^k >= 2 times e^r >= e^(-ln(2)/2)), so the exp, the chains' main
  // cost, is needed only for a move downhill. The answer, hence every bit, is unchanged.
  const double d = static_cast<double>(lw_j) - static_cast<double>(lw_k);
  if (d >= 0.0) return true;
  return u < deterministic_exp(d);
}

}  // namespace resample
