// A tick's statistics of the weighted particles (log-sum-exp, ESS, filtered mean and sd, PIT) in
// one summation order that every backend follows, so that the CPU and GPU filters give the same
// bits, and the GPU forms them inside its propagation kernel ("propagate + weight + max in one
// kernel"): no pass of their own over the particles.
//
//   chunk c = particles [4096 c, 4096 c + 4096):
//     m_c = max of its log-weights (exact), and its first NaN / +inf;
//     lane l = 0..255 adds, for k = 0..15 in order, particle i = 4096 c + l + 256 k:
//       w = exp(lw_i - m_c) (0 for lw_i = -inf, skipped), d = x_i - shift:
//       sums of w, w^2, w d, w d^2 and w 1{x_i <= truth};
//     the lanes are added by a halving tree: lane l += lane l + h for h = 128, 64, ..., 1.
//   the tick: M = max m_c; lane l adds chunks l, l + 256, ... in order, each scaled by
//     exp(m_c - M) (squares by its square); the same tree; then
//     log-sum-exp = M + log S_w, ESS = S_w^2 / S_w2, mean = shift + S_wd / S_w,
//     var = S_wdd / S_w - (S_wd / S_w)^2, PIT = S_below / S_w.
//
// The GPU runs a chunk in a block (src/cuda/bpf_filter.cu), 256 of its threads a lane each, and the
// tree in shared memory; few chunks each on a cluster of blocks, whose first block adds the lanes.
// Every product that feeds a sum is an explicit fma, every exp and log the deterministic one.
//
// These are sums of doubles in a fixed order, not the library's exact integer sums (which need the
// max before the first weight is formed, hence a pass of their own). Every term is positive, so
// S_w's relative error is at most about (36 + N / 2^20) 2^-53 (a lane's 16 terms, the tree, a
// lane's chunks, the tree, the exps): below 1e-14 for N <= 2^25, about 1.2e-13 at N = 2^30, far
// below the Monte Carlo error of the estimate. The shift (the previous tick's filtered mean) keeps the variance free of
// cancellation.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

#include "resample/core/config.hpp"
#include "resample/core/deterministic_math.hpp"

namespace resample::bpf::detail {

inline constexpr int lanes = 256;
inline constexpr int per_lane = 16;
inline constexpr std::size_t chunk = std::size_t{lanes} * per_lane;  ///< 4096 particles
inline constexpr std::uint64_t no_index = ~std::uint64_t{0};

/// Sums over weighted particles: w, w^2, w d, w d^2, w 1{x <= truth}.
struct moments {
  double w = 0, w2 = 0, wd = 0, wdd = 0, below = 0;
};

RESAMPLE_HOST_DEVICE inline moments operator+(const moments& a, const moments& b) {
  return {a.w + b.w, a.w2 + b.w2, a.wd + b.wd, a.wdd + b.wdd, a.below + b.below};
}

/// One particle into a lane: weight w > 0, offset d = x - shift, below = x <= truth.
RESAMPLE_HOST_DEVICE inline void add_particle(moments& s, double w, double d, bool below) {
  s.w += w;
  s.w2 = resample::detail::fused(w, w, s.w2);
  s.wd = resample::detail::fused(w, d, s.wd);
  s.wdd = resample::detail::fused(w * d, d, s.wdd);
  if (below) s.below += w;
}

/// A chunk's sums into a lane, rescaled from its max to the tick's: e = exp(m_c - M).
RESAMPLE_HOST_DEVICE inline void add_chunk(moments& s, const moments& c, double e) {
  s.w = resample::detail::fused(e, c.w, s.w);
  s.w2 = resample::detail::fused(e * e, c.w2, s.w2);
  s.wd = resample::detail::fused(e, c.wd, s.wd);
  s.wdd = resample::detail::fused(e, c.wdd, s.wdd);
  s.below = resample::detail::fused(e, c.below, s.below);
}

/// What a chunk contributes: its max log-weight (-inf when every weight is zero), its first
/// NaN / +inf log-weight (no_index when none), and its sums relative to its max.
struct chunk_summary {
  double max = -std::numeric_limits<double>::infinity();
  std::uint64_t first_bad = no_index;
  moments sums;
};

/// The tick's statistics from the chunks' totals. `first_bad` / `all_zero` say the weights were
/// refused; the other fields are then meaningless.
struct tick_statistics {
  std::uint64_t first_bad = no_index;
  bool all_zero = false;
  double max = 0, log_sum_exp = 0, ess = 0, mean = 0, sd = 0, pit = 0;
};

/// The closing formulas, from M and the tree's total S.
RESAMPLE_HOST_DEVICE inline void finish_statistics(tick_statistics& t, double M, const moments& S, double shift,
                                                   bool has_truth) {
  t.max = M;
  t.log_sum_exp = M + deterministic_log(S.w);
  t.ess = S.w * S.w / S.w2;
  const double r = S.wd / S.w;
  t.mean = shift + r;
  const double var = resample::detail::fused(-r, r, S.wdd / S.w);
  t.sd = std::sqrt(var > 0.0 ? var : 0.0);
  t.pit = has_truth ? S.below / S.w : std::numeric_limits<double>::quiet_NaN();
}

/// log-sum-exp of N zero log-weights (after resampling) by the formula above: every sum is exact,
/// S_w = N.
inline double log_sum_exp_of_equal(std::size_t n) { return deterministic_log(static_cast<double>(n)); }

// ---- The CPU's side (the GPU's is in src/cuda/bpf_filter.cu) ----------------------------------

/// The lanes' halving tree, in place; the total ends in lane[0].
inline void tree_sum(moments (&lane)[lanes]) {
  for (int h = lanes / 2; h >= 1; h /= 2) {
    for (int l = 0; l < h; ++l) lane[l] = lane[l] + lane[l + h];
  }
}

/// Chunk `c` of (lw, x): particles [c chunk, min(N, (c + 1) chunk)).
inline chunk_summary summarise_chunk(std::span<const double> lw, std::span<const double> x, std::size_t c,
                                     double shift, double truth) {
  const std::size_t begin = c * chunk, count = std::min(chunk, lw.size() - begin);
  chunk_summary out;
  for (std::size_t i = begin; i < begin + count; ++i) {
    if (!(lw[i] < std::numeric_limits<double>::infinity())) {
      out.first_bad = i;
      return out;
    }
    if (lw[i] > out.max) out.max = lw[i];
  }
  if (out.max == -std::numeric_limits<double>::infinity()) return out;
  moments lane[lanes];
  for (std::size_t l = 0; l < lanes; ++l) {
    for (std::size_t i = begin + l; i < begin + count; i += lanes) {
      const double w = deterministic_exp_nonpositive(lw[i] - out.max);
      if (w > 0.0) add_particle(lane[l], w, x[i] - shift, x[i] <= truth);
    }
  }
  tree_sum(lane);
  out.sums = lane[0];
  return out;
}

/// The tick's statistics from every chunk's summary, in the order above.
inline tick_statistics combine_chunks(std::span<const chunk_summary> chunks, double shift, bool has_truth) {
  tick_statistics t;
  double M = -std::numeric_limits<double>::infinity();
  for (const auto& c : chunks) {
    if (c.first_bad != no_index && t.first_bad == no_index) t.first_bad = c.first_bad;
    if (c.max > M) M = c.max;
  }
  if (t.first_bad != no_index) return t;
  if (M == -std::numeric_limits<double>::infinity()) {
    t.all_zero = true;
    return t;
  }
  moments lane[lanes];
  for (std::size_t l = 0; l < lanes; ++l) {
    for (std::size_t c = l; c < chunks.size(); c += lanes) {
      if (chunks[c].max > -std::numeric_limits<double>::infinity()) {
        add_chunk(lane[l], chunks[c].sums, deterministic_exp_nonpositive(chunks[c].max - M));
      }
    }
  }
  tree_sum(lane);
  finish_statistics(t, M, lane[0], shift, has_truth);
  return t;
}

}  // namespace resample::bpf::detail
