// Code 8 of Murray, Lee & Jacob (appendix D): cumulative offspring O -> ancestors a.
//
//   o^i = O^i - O^{i-1} (O^{-1} = 0);  a^{O^{i-1}}, ..., a^{O^i - 1} <- i
//
// Requires O non-decreasing with O^{N-1} = N, which is what every resampler that produces O
// (stratified, systematic, residual via INCLUSIVE-PREFIX-SUM of o) guarantees. The ancestors come
// out sorted; particles with o^i > 0 already satisfy nothing in particular (see permute_*.hpp).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "resample/core/validate.hpp"

namespace resample::reference {

inline std::vector<std::size_t> cumulative_offspring_to_ancestors(std::span<const std::size_t> O) {
  const std::size_t n = O.size();
  std::size_t previous = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (O[i] < previous) {
      throw_cumulative_decrease(i);
    }
    previous = O[i];
  }
  if (n > 0 && O[n - 1] != n) {
    throw_cumulative_end(O[n - 1], n);
  }
  std::vector<std::size_t> a(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t start = i == 0 ? 0 : O[i - 1];
    const std::size_t o = O[i] - start;
    for (std::size_t j = 0; j < o; ++j) a[start + j] = i;
  }
  return a;
}

}  // namespace resample::reference
