// Sorted multinomial resampling on the exact CDF: the law of Code 3 (the ancestors of Code 2,
// sorted), computed as this backend's exact Code 2 draw counted into offspring (Code 9) and laid
// out in index order (Code 8). The draw for key and step is therefore exactly `multinomial`'s,
// sorted. (Code 3's own route, sorted uniforms from a running sum of logarithms, is serial and
// rounds differently in every order; an exact parallel route to sorted uniforms is left to the
// GPU backends, which must reproduce these bits.)
#pragma once

#include <atomic>
#include <span>
#include <vector>

#include "resample/cpu/multinomial.hpp"
#include "resample/cpu/offspring_to_ancestors.hpp"

namespace resample::cpu {

template <class Exec, class T, class Index>
void multinomial_sorted_ancestors(const Exec& ex, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> a) {
  multinomial_ancestors(ex, lw, k, step, a);
  std::vector<std::uint64_t> o(a.size(), 0);
  ex.for_blocks(a.size(), [&](std::size_t begin, std::size_t end, std::size_t) {
    for (std::size_t j = begin; j < end; ++j) {
      std::atomic_ref<std::uint64_t>(o[static_cast<std::size_t>(a[j])]).fetch_add(1, std::memory_order_relaxed);
    }
  });
  offspring_to_ancestors(ex, std::span<const std::uint64_t>(o), a);
}

}  // namespace resample::cpu
