// Code 6 of Murray, Lee & Jacob (appendix C): serial in-place permutation of an ancestry vector
// so that every particle with offspring is its own first ancestor, (9) in the main article:
//
//   o^i > 0  =>  a^i = i
//
//   for i = 0..N-1:  while a^i != i and a^{a^i} != a^i:  swap(a^i, a^{a^i})
//
// (the paper's "i <- i - 1, repeat for the new value" is the inner while). Each swap puts a value
// v = a^i at position v for good, so there are at most N swaps: O(N). The result is a permutation
// of the input, so o is unchanged; which one it is differs from Code 7's (permute_parallel.hpp).
#pragma once

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "resample/core/validate.hpp"

namespace resample::reference {

inline std::vector<std::size_t> permute_serial(std::span<const std::size_t> ancestors) {
  validate_ancestors(ancestors);
  std::vector<std::size_t> a(ancestors.begin(), ancestors.end());
  for (std::size_t i = 0; i < a.size(); ++i) {
    while (a[i] != i && a[a[i]] != a[i]) std::swap(a[i], a[a[i]]);
  }
  return a;
}

}  // namespace resample::reference
