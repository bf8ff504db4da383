// The per-particle walks of the chain resamplers, shared by every backend (host and device): the
// CPU backends, the CUDA kernels and the block-level primitives call these, so one copy decides
// the bits. Each walk draws from the particle's own Philox stream, at (i, step).
#pragma once

#include <cstdint>
#include <limits>

#include "resample/core/config.hpp"
#include "resample/core/deterministic_math.hpp"
#include "resample/core/metropolis_rule.hpp"
#include "resample/core/random.hpp"

namespace resample {

/// Metropolis (main article §3.1): B steps of a chain started at i, then on while it sits on a zero
/// weight. propose(b) returns step b's proposal (drawing from rng if it needs to); the step's
/// uniform is drawn after it.
template <class T, class Propose>
RESAMPLE_HOST_DEVICE std::uint64_t metropolis_chain(const T* lw, std::uint64_t i, std::uint64_t steps,
                                                    philox_stream& rng, Propose propose) {
  constexpr T zero = -std::numeric_limits<T>::infinity();
  std::uint64_t current = i;
  for (std::uint64_t b = 0; b < steps || lw[current] == zero; ++b) {
    const std::uint64_t j = propose(b);
    if (metropolis_accept(lw[j], lw[current], uniform_open(rng))) current = j;
  }
  return current;
}

/// Megopolis' offset of iteration b, off_b ~ U{0..N-1} from Philox at (shared_index - 1 - b, step):
/// the same for every particle.
RESAMPLE_HOST_DEVICE inline std::uint64_t megopolis_offset(key k, std::uint32_t step, std::uint64_t b, std::uint64_t n) {
  philox_stream rng(k, shared_index - 1 - b, step);
  return uniform_below(rng, n);
}

/// Rejection (main article §3.2): from j = i, accept j when u < w_j / w_bound, else propose
/// j ~ U{0..N-1}.
template <class T>
RESAMPLE_HOST_DEVICE std::uint64_t rejection_chain(const T* lw, std::uint64_t i, std::uint64_t n, double log_bound,
                                                   philox_stream& rng) {
  std::uint64_t j = i;
  while (!(uniform_open(rng) < deterministic_exp(static_cast<double>(lw[j]) - log_bound))) j = uniform_below(rng, n);
  return j;
}

}  // namespace resample
