// Megopolis (Chesser, Nguyen & Ranasinghe, 2022): Metropolis with one random offset per iteration
// shared by all particles. At iteration b particle i proposes j = (i + off_b) mod N, so on a GPU
// neighbouring threads read neighbouring weights. off_b ~ U{0..N-1} is drawn from Philox at
// (shared_index - 1 - b, step): a pure function of b. Each chain on its own is a Metropolis chain
// with a uniform proposal (j is uniform whatever the state), so B follows the same eps rule; the
// uniforms u come from Philox at (i, step). Zero-weight starts continue past B as in Metropolis.
#pragma once

#include <span>

#include "resample/cpu/metropolis.hpp"

namespace resample::cpu {

template <class Exec, class T, class Index>
void megopolis_ancestors(const Exec& ex, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> a,
                         const options& opt = {}) {
  check_size<Index>(lw.size(), a.size());
  const auto s = summarise(ex, lw);
  const std::uint64_t n = lw.size();
  const std::uint64_t steps = metropolis_steps(s, n, opt);
  std::vector<std::uint64_t> offsets(steps);
  for (std::uint64_t b = 0; b < steps; ++b) offsets[b] = megopolis_offset(k, step, b, n);
  ex.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t) {
    for (std::size_t i = begin; i < end; ++i) {
      philox_stream rng(k, i, step);
      a[i] = static_cast<Index>(metropolis_chain(lw.data(), i, steps, rng, [&](std::uint64_t b) {
        return (i + (b < steps ? offsets[b] : megopolis_offset(k, step, b, n))) % n;
      }));
    }
  });
}

}  // namespace resample::cpu
