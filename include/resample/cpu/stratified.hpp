// Stratified resampling (Code 4) on the exact CDF, fused with Code 8. Stratum k's uniform is the
// first word of Philox at (k, step), so a particle's O^i needs only the stratum it falls in.
// CPU twin of the CUDA and PTX stratified kernels; the per-particle step is
// exact_comb::stratified.
#pragma once

#include <span>

#include "resample/core/exact_offspring.hpp"
#include "resample/cpu/comb_ancestors.hpp"

namespace resample::cpu {

template <class Exec, class T, class Index>
void stratified_ancestors(const Exec& ex, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> a) {
  check_size<Index>(lw.size(), a.size());
  const auto s = summarise(ex, lw);
  const std::uint64_t n = lw.size();
  const exact_comb comb(s.total, n);
  comb_ancestors(ex, lw, s, a, [&](u128 C) { return comb.stratified(C, k, step); });
}

}  // namespace resample::cpu
