// The first pass of every CPU resampler: validate the log-weights, find their maximum, and sum the
// quantised weights q_i of the exact CDF per block, giving each block its offset C_{begin - 1}.
// Block results are combined in block order (max and 128-bit sums are exact), so the summary is
// the same for any partition.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "resample/core/exact_cdf.hpp"
#include "resample/core/validate.hpp"

namespace resample::cpu {

template <class T>
struct weight_summary {
  T max_log_w;
  int fraction;                    ///< F of the exact CDF
  u128 total;                      ///< Q = sum q_i
  std::vector<u128> block_offset;  ///< C before each block's first element
};

using resample::check_size;

template <class Exec, class T>
weight_summary<T> summarise(const Exec& ex, std::span<const T> lw) {
  const std::size_t n = lw.size();
  const std::size_t p = ex.blocks(n);
  constexpr T minus_inf = -std::numeric_limits<T>::infinity();
  std::vector<T> block_max(p, minus_inf);
  std::vector<std::size_t> first_bad(p, n);
  ex.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t b) {
    T m = minus_inf;
    for (std::size_t i = begin; i < end; ++i) {
      if (!is_valid_log_weight(lw[i])) {
        first_bad[b] = i;
        return;
      }
      m = std::max(m, lw[i]);
    }
    block_max[b] = m;
  });
  const std::size_t bad = *std::min_element(first_bad.begin(), first_bad.end());
  if (bad < n) throw_bad_log_weight(lw[bad], bad);
  weight_summary<T> s{*std::max_element(block_max.begin(), block_max.end()), fraction_bits(n), 0, std::vector<u128>(p)};
  if (s.max_log_w == minus_inf) throw_all_log_weights_zero();

  std::vector<u128> block_sum(p, 0);
  ex.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t b) {
    u128 sum = 0;
    for (std::size_t i = begin; i < end; ++i) sum += quantised_weight(lw[i], s.max_log_w, s.fraction);
    block_sum[b] = sum;
  });
  for (std::size_t b = 0; b < p; ++b) {
    s.block_offset[b] = s.total;
    s.total += block_sum[b];
  }
  return s;
}

}  // namespace resample::cpu
