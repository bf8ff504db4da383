// Code 8 on the CPU backends, from offspring counts: a^j = i for O^{i-1} <= j < O^i, O the exact
// inclusive prefix sum of o. Blocks sum their counts, the block offsets are scanned in order, and
// each block writes its own range of a, so any partition gives the same (sorted) ancestors. Used
// by the schemes that produce counts: residual, SSP and sorted multinomial.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace resample::cpu {

template <class Exec, class Index>
void offspring_to_ancestors(const Exec& ex, std::span<const std::uint64_t> o, std::span<Index> a) {
  const std::size_t n = o.size();
  std::vector<std::uint64_t> block_start(ex.blocks(n) + 1, 0);
  ex.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t b) {
    std::uint64_t sum = 0;
    for (std::size_t i = begin; i < end; ++i) sum += o[i];
    block_start[b + 1] = sum;
  });
  for (std::size_t b = 1; b < block_start.size(); ++b) block_start[b] += block_start[b - 1];
  ex.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t b) {
    std::uint64_t j = block_start[b];
    for (std::size_t i = begin; i < end; ++i) {
      for (std::uint64_t c = 0; c < o[i]; ++c) a[j++] = static_cast<Index>(i);
    }
  });
}

}  // namespace resample::cpu
