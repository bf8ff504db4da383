// Stratified and systematic resampling fused with Code 8: each block walks its particles, keeps
// the exact running C_i from its block offset, turns it into O^i with the scheme's comparison, and
// writes a^j = i for O^{i-1} <= j < O^i. Blocks write disjoint ranges of a.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "resample/cpu/weight_summary.hpp"

namespace resample::cpu {

/// `cumulative(C)` returns O for an exact prefix sum C (cumulative(0) = 0, cumulative(Q) = N).
template <class Exec, class T, class Index, class Cumulative>
void comb_ancestors(const Exec& ex, std::span<const T> lw, const weight_summary<T>& s, std::span<Index> a,
                    Cumulative cumulative) {
  ex.for_blocks(lw.size(), [&](std::size_t begin, std::size_t end, std::size_t b) {
    u128 C = s.block_offset[b];
    std::uint64_t previous = begin == 0 ? 0 : cumulative(C);
    for (std::size_t i = begin; i < end; ++i) {
      C += quantised_weight(lw[i], s.max_log_w, s.fraction);
      const std::uint64_t O = cumulative(C);
      for (std::uint64_t j = previous; j < O; ++j) a[j] = static_cast<Index>(i);
      previous = O;
    }
  });
}

}  // namespace resample::cpu
