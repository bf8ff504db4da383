// Residual resampling (Liu & Chen, 1998) on the exact CDF: CPU twin of cpu_reference/residual.hpp.
//
//   N q_i = f_i Q + r_i   (f_i = floor(N q_i / Q), 0 <= r_i < Q: exact in 128 bits, N q_i < 2^128;
//                          f_i by exact_comb::floor_ratio, so no 128-bit division)
//   R = N - sum f_i residual draws, each i with probability r_i / (R Q)   (sum r_i = R Q exactly)
//
// A residual draw is v = m Q + w with m ~ U[0, R) and w ~ U[0, Q) (so v ~ U[0, R Q)), from Philox at
// (k, step) for draw k; it lands on the first i whose residual prefix sum exceeds v. The prefix sums
// reach R Q, which can pass 2^128, so they are kept as (quotient, remainder) pairs modulo Q and
// compared lexicographically. o_i = f_i + residual hits; ancestors by Code 8 (sorted).
#pragma once

#include <algorithm>
#include <atomic>
#include <span>
#include <vector>

#include "resample/core/exact_offspring.hpp"
#include "resample/core/random.hpp"
#include "resample/core/residual_arithmetic.hpp"
#include "resample/cpu/offspring_to_ancestors.hpp"
#include "resample/cpu/weight_summary.hpp"

namespace resample::cpu {

/// N q_i = f_i Q + r_i for every i (core/residual_arithmetic.hpp), with the sum of the f_i.
struct expected_offspring_split {
  std::vector<std::uint64_t> floor;  ///< f_i; residual and SSP add their extra offspring here
  std::vector<u128> remainder;       ///< r_i in [0, Q), the fraction r_i / Q of e_i
  std::uint64_t floor_sum = 0;       ///< sum f_i <= N
};

template <class Exec, class T>
expected_offspring_split split_expected_offspring(const Exec& ex, std::span<const T> lw, const weight_summary<T>& s) {
  const std::uint64_t n = lw.size();
  const exact_comb comb(s.total, n);
  expected_offspring_split out{std::vector<std::uint64_t>(n), std::vector<u128>(n), 0};
  std::vector<std::uint64_t> block_sum(ex.blocks(n), 0);
  ex.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t b) {
    for (std::size_t i = begin; i < end; ++i) {
      const auto [f, r] = floor_and_remainder(comb, quantised_weight(lw[i], s.max_log_w, s.fraction), n, s.total);
      out.floor[i] = f;
      out.remainder[i] = r;
      block_sum[b] += f;
    }
  });
  for (const auto f : block_sum) out.floor_sum += f;
  return out;
}

template <class Exec, class T, class Index>
void residual_ancestors(const Exec& ex, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> a) {
  check_size<Index>(lw.size(), a.size());
  const auto s = summarise(ex, lw);
  const std::size_t n = lw.size();
  const u128 Q = s.total;
  auto [o, r, assigned] = split_expected_offspring(ex, lw, s);
  const std::uint64_t R = n - assigned;  // sum of exact floors of rationals summing to N: <= N
  if (R > 0) {
    // Residual prefix sums as (quotient, remainder) modulo Q; serial: O(N) additions.
    std::vector<residual_prefix> prefix(n);
    residual_prefix running{0, 0};
    for (std::size_t i = 0; i < n; ++i) prefix[i] = running = add_modulo(running, {0, r[i]}, Q);
    ex.for_blocks(R, [&](std::size_t begin, std::size_t end, std::size_t) {
      for (std::size_t draw = begin; draw < end; ++draw) {
        philox_stream rng(k, draw, step);
        const residual_prefix v{uniform_below(rng, R), uniform_below(rng, Q)};
        const auto i = static_cast<std::size_t>(std::upper_bound(prefix.begin(), prefix.end(), v) - prefix.begin());
        std::atomic_ref<std::uint64_t>(o[i]).fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  offspring_to_ancestors(ex, std::span<const std::uint64_t>(o), a);
}

}  // namespace resample::cpu
