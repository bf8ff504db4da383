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
#include "resample/cpu/offspring_to_ancestors.hpp"
#include "resample/cpu/weight_summary.hpp"

namespace resample::cpu {

/// sum_{j <= i} r_j = quotient Q + remainder, remainder < Q.
struct residual_prefix {
  std::uint64_t quotient;
  u128 remainder;
};

inline bool operator<(const residual_prefix& a, const residual_prefix& b) {
  return a.quotient != b.quotient ? a.quotient < b.quotient : a.remainder < b.remainder;
}

/// For i in [begin, end): o_i = floor(N q_i / Q) and r_i = N q_i - o_i Q (exact; no 128-bit division,
/// whose software routine dominated the time). Returns the sum of the o_i.
template <class T>
std::uint64_t split_expected_offspring(std::span<const T> lw, const weight_summary<T>& s, std::size_t begin,
                                       std::size_t end, std::vector<std::uint64_t>& o, std::vector<u128>& r) {
  const std::uint64_t n = lw.size();
  const exact_comb comb(s.total, n);
  std::uint64_t sum = 0;
  for (std::size_t i = begin; i < end; ++i) {
    const u128 q = quantised_weight(lw[i], s.max_log_w, s.fraction);
    o[i] = comb.floor_ratio(q);
    r[i] = static_cast<u128>(n) * q - static_cast<u128>(o[i]) * s.total;
    sum += o[i];
  }
  return sum;
}

template <class Exec, class T, class Index>
void residual_ancestors(const Exec& ex, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> a) {
  check_size<Index>(lw.size(), a.size());
  const auto s = summarise(ex, lw);
  const std::size_t n = lw.size();
  const u128 Q = s.total;
  std::vector<std::uint64_t> o(n);
  std::vector<u128> r(n);
  std::vector<std::uint64_t> block_floor(ex.blocks(n), 0);
  ex.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t b) {
    block_floor[b] = split_expected_offspring(lw, s, begin, end, o, r);
  });
  std::uint64_t assigned = 0;
  for (const auto f : block_floor) assigned += f;
  const std::uint64_t R = n - assigned;  // sum of exact floors of rationals summing to N: <= N
  if (R > 0) {
    // Residual prefix sums as (quotient, remainder) modulo Q; serial: O(N) additions.
    std::vector<residual_prefix> prefix(n);
    residual_prefix running{0, 0};
    for (std::size_t i = 0; i < n; ++i) {
      if (running.remainder >= Q - r[i]) {
        running.remainder -= Q - r[i];
        ++running.quotient;
      } else {
        running.remainder += r[i];
      }
      prefix[i] = running;
    }
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
