// The Metropolis resampler (main article §3.1) on the production backends: particle i runs B steps
// of an independent Metropolis chain started at i, its proposals and uniforms from Philox at
// (i, step); like the reference, a chain still on a zero weight after B steps continues until it
// leaves. Only ratios of weights are used, so no CDF is formed; B comes from the exact sum.
#pragma once

#include <span>

#include "resample/core/chains.hpp"
#include "resample/core/metropolis_rule.hpp"
#include "resample/core/options.hpp"
#include "resample/core/random.hpp"
#include "resample/cpu/weight_summary.hpp"

namespace resample::cpu {

/// B for these weights and options (the exact-sum eps rule unless B is given).
template <class T>
std::uint64_t metropolis_steps(const weight_summary<T>& s, std::size_t n, const options& opt) {
  if (opt.metropolis_steps) return *opt.metropolis_steps;
  if (!(opt.metropolis_eps > 0.0 && opt.metropolis_eps < 1.0)) {
    throw_bad_metropolis_eps(opt.metropolis_eps);
  }
  return metropolis_steps_from_sum(s.total, n, s.fraction, opt.metropolis_eps);
}

template <class Exec, class T, class Index>
void metropolis_ancestors(const Exec& ex, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> a,
                          const options& opt = {}) {
  check_size<Index>(lw.size(), a.size());
  const auto s = summarise(ex, lw);
  const std::uint64_t n = lw.size();
  const std::uint64_t steps = metropolis_steps(s, n, opt);
  ex.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t) {
    for (std::size_t i = begin; i < end; ++i) {
      philox_stream rng(k, i, step);
      a[i] = static_cast<Index>(
          metropolis_chain(lw.data(), i, steps, rng, [&](std::uint64_t) { return uniform_below(rng, n); }));
    }
  });
}

}  // namespace resample::cpu
