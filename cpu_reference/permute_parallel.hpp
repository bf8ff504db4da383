// Code 7 of Murray, Lee & Jacob (appendix C): the parallel permutation of an ancestry vector,
// with its two stages run serially, in index order.
//
//   PREPERMUTE:  d^j = N ("unclaimed"; the paper's N + 1) for all j;
//                for each i:  d^{a^i} = min(d^{a^i}, i)        (atomic min on the GPU)
//   PERMUTE:     for each i:  x = d^{a^i}
//                             if x != i:  x = i;  while d^x < N: x = d^x;  d^x = i
//                for each i:  c^i = a^{d^i}
//
// After PREPERMUTE, the lowest i with a^i = j owns slot j (deterministic: min wins). Each loser
// chases claimed slots from its own index until it finds a free one; the appendix proves the chase
// ends. The result c is a permutation of a with o^i > 0 => c^i = i.
//
// Run in parallel, the chase races (which loser takes which free slot depends on timing); run
// serially in index order it is deterministic, and this order is the library's permute semantics.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "resample/core/validate.hpp"

namespace resample::reference {

/// Stage one: d^j = min{ i : a^i = j }, or N where no i has a^i = j.
inline std::vector<std::size_t> prepermute(std::span<const std::size_t> a) {
  validate_ancestors(a);
  const std::size_t n = a.size();
  std::vector<std::size_t> d(n, n);
  for (std::size_t i = 0; i < n; ++i) d[a[i]] = std::min(d[a[i]], i);
  return d;
}

inline std::vector<std::size_t> permute_parallel(std::span<const std::size_t> a) {
  const std::size_t n = a.size();
  std::vector<std::size_t> d = prepermute(a);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t x = d[a[i]];
    if (x != i) {
      x = i;
      while (d[x] < n) x = d[x];
      d[x] = i;
    }
  }
  std::vector<std::size_t> c(n);
  for (std::size_t i = 0; i < n; ++i) c[i] = a[d[i]];
  return c;
}

}  // namespace resample::reference
