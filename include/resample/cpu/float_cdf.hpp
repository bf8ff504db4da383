// Multinomial, stratified and systematic resampling on a floating-point CDF (precision::float32 or
// float64): Codes 2, 4 and 5 as the paper and the peers run them, w_i = exp(lw_i - max) summed in
// F = float or double. Kept to measure their bias against the exact CDF. The sum is blocked like
// every CPU pass, so its rounding, and hence the result, depends on the thread count: that
// order-dependence is one of the defects the exact CDF removes.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "resample/core/options.hpp"
#include "resample/core/random.hpp"
#include "resample/cpu/weight_summary.hpp"

namespace resample::cpu {

/// Inclusive prefix sums of exp(lw_i - max) in F, blocked.
template <class F, class Exec, class T>
std::vector<F> float_prefix_sums(const Exec& ex, std::span<const T> lw, T max_log_w) {
  const std::size_t n = lw.size();
  std::vector<F> W(n);
  std::vector<F> block_sum(ex.blocks(n), F(0));
  auto weight = [&](std::size_t i) { return static_cast<F>(deterministic_exp(static_cast<double>(lw[i]) - max_log_w)); };
  ex.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t b) {
    F running = 0;
    for (std::size_t i = begin; i < end; ++i) W[i] = running += weight(i);
    block_sum[b] = running;
  });
  std::vector<F> offset(block_sum.size(), F(0));
  for (std::size_t b = 1; b < offset.size(); ++b) offset[b] = offset[b - 1] + block_sum[b - 1];
  ex.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t b) {
    for (std::size_t i = begin; i < end; ++i) W[i] += offset[b];
  });
  return W;
}

template <class F, class Exec, class T, class Index>
void float_cdf_ancestors(const Exec& ex, scheme s, std::span<const T> lw, key k, std::uint32_t step,
                         std::span<Index> a) {
  check_size<Index>(lw.size(), a.size());
  const auto summary = summarise(ex, lw);
  const std::size_t n = lw.size();
  const std::vector<F> W = float_prefix_sums<F>(ex, lw, summary.max_log_w);
  const F total = W[n - 1];
  const F N = static_cast<F>(n);
  if (s == scheme::multinomial) {  // Code 2
    ex.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t) {
      for (std::size_t j = begin; j < end; ++j) {
        philox_stream rng(k, j, step);
        const F v = total * static_cast<F>(uniform_open_32(rng.next()));
        a[j] = static_cast<Index>(std::min<std::size_t>(std::lower_bound(W.begin(), W.end(), v) - W.begin(), n - 1));
      }
    });
    return;
  }
  // Codes 4 and 5: O^i = min(N, floor(r^i + u)), r^i = N W^i / W^N, with Code 8 fused in.
  const F shared_u = static_cast<F>(uniform_open_32(philox_stream(k, shared_index, step).next()));
  auto cumulative = [&](std::size_t i) -> std::size_t {
    const F r = N * (W[i] / total);  // W/W = 1 exactly: O^{N-1} = N
    F u = shared_u;
    if (s == scheme::stratified) {
      const auto stratum = std::min<std::size_t>(n - 1, static_cast<std::size_t>(std::floor(r)));
      u = static_cast<F>(uniform_open_32(philox_stream(k, stratum, step).next()));
    }
    return std::min<std::size_t>(n, static_cast<std::size_t>(std::floor(r + u)));
  };
  ex.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t) {
    std::size_t previous = begin == 0 ? 0 : cumulative(begin - 1);
    for (std::size_t i = begin; i < end; ++i) {
      // max() keeps O monotone: a rounded r^i can fall below r^{i-1} in float (the paper's point).
      const std::size_t O = std::max(previous, cumulative(i));
      for (std::size_t j = previous; j < O; ++j) a[j] = static_cast<Index>(i);
      previous = O;
    }
  });
}

}  // namespace resample::cpu
