// SSP resampling (Srinivasan sampling process; Gerber, Chopin & Whiteley, 2019) on the exact CDF.
// CPU twin of cpu_reference/ssp.hpp.
//
// o_i starts at f_i = floor(e_i), e_i = N q_i / Q; the fractional parts xi_i = r_i / Q (r_i as in
// residual.hpp) are then resolved in index order, two at a time: the carried particle p (the last
// one with an unresolved fraction a) meets the next particle i with a fraction b > 0, and
//   a + b < 1:  with probability a / (a + b), xi_p = a + b and xi_i = 0; else xi_i = a + b, xi_p = 0;
//   a + b >= 1: with probability (1 - b) / (2 - a - b), xi_p = 1 and xi_i = a + b - 1; else the reverse;
// a fraction that reaches 1 adds one offspring, one that reaches 0 is done; the other is carried.
// Each step keeps E[xi] (a martingale), so E[o_i] = e_i, and every o_i is floor(e_i) or ceil(e_i).
// All in integers (units of 1/Q); the decision uses an exact uniform integer from Philox at (i, step).
// The pairing is sequential by nature: every backend runs resample::ssp_pairing
// (core/residual_arithmetic.hpp) in index order.
#pragma once

#include <span>
#include <vector>

#include "resample/core/random.hpp"
#include "resample/cpu/residual.hpp"

namespace resample::cpu {

template <class Exec, class T, class Index>
void ssp_ancestors(const Exec& ex, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> a) {
  check_size<Index>(lw.size(), a.size());
  const auto s = summarise(ex, lw);
  const std::size_t n = lw.size();
  const u128 Q = s.total;
  auto [o, r, floor_sum] = split_expected_offspring(ex, lw, s);
  (void)floor_sum;
  ssp_pairing([&](std::size_t i) -> u128& { return r[i]; }, [&](std::size_t i) -> std::uint64_t& { return o[i]; }, n,
              Q, k, step);
  offspring_to_ancestors(ex, std::span<const std::uint64_t>(o), a);
}

}  // namespace resample::cpu
