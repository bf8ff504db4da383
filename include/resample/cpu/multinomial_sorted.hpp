// Sorted multinomial resampling on the exact CDF: Code 3's law (N iid uniforms, sorted, each
// mapped to the first i with C_i > U Q) by sorted_points (core/sorted_points.hpp): the points'
// counts per unit stratum in two exact levels, then the comb of stratified resampling with c_K
// points in stratum K, fused with Code 8. CPU twin of the CUDA multinomial-sorted kernels.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "resample/core/sorted_points.hpp"
#include "resample/cpu/comb_ancestors.hpp"

namespace resample::cpu {

/// P_K = c_0 + ... + c_{K-1} for K = 0 .. B: the number of points below stratum K.
template <class Exec>
std::vector<std::uint32_t> points_before_strata(const Exec& ex, const sorted_points& layout, key k,
                                                std::uint32_t step) {
  const std::uint64_t n = layout.size();
  const std::uint32_t G = layout.super_bins();
  // Level 1: each block counts its balls' super-bins; the counts add in any order.
  const std::uint64_t groups = (n + 3) / 4;
  std::vector<std::vector<std::uint64_t>> block_counts(ex.blocks(groups), std::vector<std::uint64_t>(G, 0));
  ex.for_blocks(groups, [&](std::size_t begin, std::size_t end, std::size_t b) {
    for (std::uint64_t j4 = begin; j4 < end; ++j4) {
      const auto words = sorted_points::level1_words(k, step, j4);
      for (std::uint64_t lane = 0; lane < 4 && 4 * j4 + lane < n; ++lane) ++block_counts[b][layout.super_bin_of(words.v[lane])];
    }
  });
  std::vector<std::uint64_t> super_count(G, 0), super_before(G, 0);
  for (const auto& counts : block_counts) {
    for (std::uint32_t g = 0; g < G; ++g) super_count[g] += counts[g];
  }
  for (std::uint32_t g = 1; g < G; ++g) super_before[g] = super_before[g - 1] + super_count[g - 1];
  // Level 2: super-bin g throws its balls into its own W strata and writes their P.
  const std::uint64_t W = layout.width();
  std::vector<std::uint32_t> P(layout.strata() + 1, 0);
  ex.for_tasks(G, [&](std::size_t g) {
    std::uint32_t* count = P.data() + g * W + 1;  // c_K at P[K + 1], then summed in place
    for (std::uint64_t m4 = 0; 4 * m4 < super_count[g]; ++m4) {
      const auto words = sorted_points::level2_words(k, step, static_cast<std::uint32_t>(g), m4);
      for (std::uint64_t lane = 0; lane < 4 && 4 * m4 + lane < super_count[g]; ++lane) {
        ++count[layout.stratum_in_super_bin(words.v[lane])];
      }
    }
    std::uint64_t running = super_before[g];
    for (std::uint64_t K = 0; K < W; ++K) count[K] = static_cast<std::uint32_t>(running += count[K]);
  });
  return P;
}

template <class Exec, class T, class Index>
void multinomial_sorted_ancestors(const Exec& ex, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> a) {
  check_size<Index>(lw.size(), a.size());
  const auto s = summarise(ex, lw);
  const sorted_points layout(lw.size());
  const std::vector<std::uint32_t> P = points_before_strata(ex, layout, k, step);
  const exact_comb comb(s.total, layout.strata());
  const auto strata = [&](std::uint64_t K) { return stratum_points{P[K], P[K + 1] - P[K]}; };
  comb_ancestors(ex, lw, s, a, [&](u128 C) { return sorted_points_below(comb, layout, C, k, step, strata); });
}

}  // namespace resample::cpu
