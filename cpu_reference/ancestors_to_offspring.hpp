// Code 9 of Murray, Lee & Jacob (appendix D): ancestors a -> offspring o.
//
//   o^j = #{ i : a^i = j }
//
// The paper increments o^{a^i} atomically so that the loop may run in parallel; serially a plain
// increment is the same thing. Requires every a^i in [0, N).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "resample/core/validate.hpp"

namespace resample::reference {

inline std::vector<std::size_t> ancestors_to_offspring(std::span<const std::size_t> a) {
  validate_ancestors(a);
  std::vector<std::size_t> o(a.size(), 0);
  for (const std::size_t ancestor : a) ++o[ancestor];
  return o;
}

}  // namespace resample::reference
