// Multinomial resampling (Code 2) on the exact CDF: the inclusive prefix sums C_i in 128 bits, then
// for each j a uniform integer v_j in [0, Q) (Lemire, exact) from Philox at (j, step) and
// a^j = the first i with C_i > v_j. So P(a^j = i) = q_i / Q exactly, and zero weights
// (C_i = C_{i-1}) are never chosen. Needs a workspace of N 128-bit sums.
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "resample/core/random.hpp"
#include "resample/cpu/weight_summary.hpp"

namespace resample::cpu {

template <class Exec, class T, class Index>
void multinomial_ancestors(const Exec& ex, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> a) {
  check_size<Index>(lw.size(), a.size());
  const auto s = summarise(ex, lw);
  const std::size_t n = lw.size();
  std::vector<u128> C(n);
  ex.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t b) {
    u128 running = s.block_offset[b];
    for (std::size_t i = begin; i < end; ++i) C[i] = running += quantised_weight(lw[i], s.max_log_w, s.fraction);
  });
  ex.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t) {
    for (std::size_t j = begin; j < end; ++j) {
      philox_stream rng(k, j, step);
      const u128 v = uniform_below(rng, s.total);
      a[j] = static_cast<Index>(std::upper_bound(C.begin(), C.end(), v) - C.begin());
    }
  });
}

}  // namespace resample::cpu
