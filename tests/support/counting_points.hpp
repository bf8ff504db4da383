// A count_points_below scratch that records whether it was filled: a run whose span of ranks fits
// it fills it, a longer one takes count_points_below_by_blocks and leaves it untouched. The comb
// tests run each run through a large and a small scratch and count the runs where only the large
// one was filled, so that a test of "both ways agree" shows that the block walk ran at all.
#pragma once

#include <cstdint>

#include "resample/core/comb_run.hpp"

namespace resample::test {

template <int Capacity>
struct counting_points : detail::local_points<Capacity> {
  std::uint64_t uses = 0;
  std::uint32_t& operator[](int s) {
    ++uses;
    return this->word[s];
  }
};

/// 1 when the large scratch was filled and the small one not (the small one's run walked blocks).
template <int Large, int Small>
std::uint64_t walked_blocks(const counting_points<Large>& large, const counting_points<Small>& small) {
  return large.uses != 0 && small.uses == 0 ? 1 : 0;
}

}  // namespace resample::test
