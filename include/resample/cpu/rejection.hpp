// The rejection resampler (main article §3.2) on the production backends: particle i starts at
// j = i and accepts j with probability w_j / w_bound (u < exp(lw_j - ln w_bound)), else proposes
// j ~ U{0..N-1}; proposals and uniforms from Philox at (i, step). Unbiased; the bound must be at
// least the largest weight and defaults to it.
#pragma once

#include <span>
#include <string>

#include "resample/core/chains.hpp"
#include "resample/core/options.hpp"
#include "resample/core/random.hpp"
#include "resample/cpu/weight_summary.hpp"

namespace resample::cpu {

template <class Exec, class T, class Index>
void rejection_ancestors(const Exec& ex, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> a,
                         const options& opt = {}) {
  check_size<Index>(lw.size(), a.size());
  const auto s = summarise(ex, lw);
  const double log_bound = opt.rejection_log_bound.value_or(static_cast<double>(s.max_log_w));
  if (!std::isfinite(log_bound)) throw_rejection_bound_not_finite(log_bound);
  if (static_cast<double>(s.max_log_w) > log_bound) {
    const std::size_t at = static_cast<std::size_t>(
        std::find_if(lw.begin(), lw.end(), [&](T x) { return static_cast<double>(x) > log_bound; }) - lw.begin());
    throw_rejection_bound_below(log_bound, static_cast<double>(lw[at]), at);
  }
  const std::uint64_t n = lw.size();
  ex.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t) {
    for (std::size_t i = begin; i < end; ++i) {
      philox_stream rng(k, i, step);
      a[i] = static_cast<Index>(rejection_chain(lw.data(), i, n, log_bound, rng));
    }
  });
}

}  // namespace resample::cpu
