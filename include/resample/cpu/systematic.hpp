// Systematic resampling (Code 5) on the exact CDF, fused with Code 8. One 32-bit uniform U, shared
// by all strata, is the first word of Philox at (shared_index, step). CPU twin of the CUDA and PTX
// systematic kernels; the per-particle step is exact_comb::systematic.
#pragma once

#include <span>

#include "resample/core/exact_offspring.hpp"
#include "resample/cpu/comb_ancestors.hpp"

namespace resample::cpu {

template <class Exec, class T, class Index>
void systematic_ancestors(const Exec& ex, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> a) {
  check_size<Index>(lw.size(), a.size());
  const auto s = summarise(ex, lw);
  const std::uint32_t U = philox_stream(k, shared_index, step).next();
  const std::uint64_t n = lw.size();
  const exact_comb comb(s.total, n);
  comb_ancestors(ex, lw, s, a, [&](u128 C) { return comb.systematic(C, U); });
}

}  // namespace resample::cpu
