// The exact integer steps of residual and SSP resampling, shared by every backend (host and device).
//
//   N q_i = f_i Q + r_i     f_i = floor(N q_i / Q) by exact_comb::floor_ratio (no 128-bit division),
//                           r_i in [0, Q) by one multiply-subtract
//   residual prefix sums    sum_{j <= i} r_j kept as (quotient, remainder) modulo Q, since they can
//                           pass 2^128; their addition is exact, hence associative
//   SSP's pairing           the fractions r_i / Q resolved two at a time in index order (ssp.hpp)
#pragma once

#include <cstddef>
#include <cstdint>

#include "resample/core/config.hpp"
#include "resample/core/exact_offspring.hpp"
#include "resample/core/random.hpp"
#include "resample/core/wide_int.hpp"

namespace resample {

/// sum_{j <= i} r_j = quotient Q + remainder, remainder < Q.
struct residual_prefix {
  std::uint64_t quotient;
  u128 remainder;
};

RESAMPLE_HOST_DEVICE inline bool operator<(const residual_prefix& a, const residual_prefix& b) {
  return a.quotient != b.quotient ? a.quotient < b.quotient : a.remainder < b.remainder;
}

/// (q_a Q + r_a) + (q_b Q + r_b) with the remainder kept below Q (r_a + r_b may pass 2^128).
RESAMPLE_HOST_DEVICE inline residual_prefix add_modulo(const residual_prefix& a, const residual_prefix& b, u128 Q) {
  if (a.remainder >= Q - b.remainder) return {a.quotient + b.quotient + 1, a.remainder - (Q - b.remainder)};
  return {a.quotient + b.quotient, a.remainder + b.remainder};
}

/// N q = f Q + r, exactly.
struct floor_remainder {
  std::uint64_t floor;
  u128 remainder;
};

RESAMPLE_HOST_DEVICE inline floor_remainder floor_and_remainder(const exact_comb& comb, u128 q, std::uint64_t n,
                                                                u128 Q) {
  const std::uint64_t f = comb.floor_ratio(q);
  return {f, static_cast<u128>(n) * q - static_cast<u128>(f) * Q};
}

/// SSP's pairing (Gerber, Chopin & Whiteley, 2019), in index order: remainder(i) and offspring(i)
/// give references to r_i (in units of 1/Q) and o_i. The carried particle p (the last with an
/// unresolved fraction a) meets the next i with a fraction b > 0:
///   a + b < Q:  with probability a / (a + b), r_p = a + b and r_i = 0; else the reverse;
///   a + b >= Q: with probability (Q - b) / (2Q - a - b), o_p += 1 and r_i = a + b - Q; else the reverse;
/// the decision by an exact uniform integer from Philox at (i, step).
template <class Remainder, class Offspring>
RESAMPLE_HOST_DEVICE void ssp_pairing(Remainder remainder, Offspring offspring, std::size_t n, u128 Q, key k,
                                      std::uint32_t step) {
  std::size_t carried = n;  // none
  for (std::size_t i = 0; i < n; ++i) {
    if (remainder(i) == 0) continue;
    if (carried == n) {
      carried = i;
      continue;
    }
    philox_stream rng(k, i, step);
    const u128 x = remainder(carried);
    const u128 y = remainder(i);
    if (x < Q - y) {  // x + y < Q
      const u128 sum = x + y;
      if (uniform_below(rng, sum) < x) {
        remainder(carried) = sum;
        remainder(i) = 0;
      } else {
        remainder(carried) = 0;
        remainder(i) = sum;
        carried = i;
      }
    } else {  // x + y >= Q: one of them reaches 1
      const u128 left = x - (Q - y);  // x + y - Q, what the other keeps
      if (uniform_below(rng, (Q - x) + (Q - y)) < Q - y) {
        ++offspring(carried);
        remainder(carried) = 0;
        remainder(i) = left;
        carried = left > 0 ? i : n;
      } else {
        ++offspring(i);
        remainder(i) = 0;
        remainder(carried) = left;
        if (left == 0) carried = n;
      }
    }
  }
}

}  // namespace resample
