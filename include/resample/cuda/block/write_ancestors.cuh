// Code 8 inside a thread block: the cumulative offspring of a run of particles, staged in shared
// memory, to the ancestors they imply. Device code.
//
// O[m] (m < count) is the cumulative offspring of particle first + m, O_begin that of the particle
// before; thread t owns the Items consecutive entries from t Items (the blocked arrangement of CUB).
// A thread whose particles have few offspring (at most light_offspring) writes a^j = first + m for
// O[m-1] <= j < O[m] itself: a few stores, no search. The others are listed, and the whole block
// then shares each listed thread's range (a linear search over its Items entries per j), so a
// heavy particle -- all N offspring in one place -- costs the block, not one thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace resample::cuda::block {

template <int Items>
struct ancestor_writer {
  static constexpr std::uint64_t light_offspring = 8 * Items;

  /// Shared memory: the list of heavy threads (one entry per thread of the block) and its length.
  template <int BlockThreads>
  struct TempStorage {
    int heavy[BlockThreads];
    int heavy_count;
  };

  /// Needs storage.heavy_count == 0, made visible by a barrier (set it once before the first call;
  /// each call resets it before returning, and the caller's barrier that stages the next O makes
  /// that visible). Every thread of the block must call it.
  template <int BlockThreads, class Index>
  __device__ static void write(TempStorage<BlockThreads>& storage, const std::uint32_t* O, std::uint64_t O_begin,
                               int count, std::size_t first, Index* a) {
    const int m0 = static_cast<int>(threadIdx.x) * Items;
    if (m0 < count) {
      const int m1 = min(m0 + Items, count);
      std::uint64_t lo = m0 == 0 ? O_begin : O[m0 - 1];
      if (O[m1 - 1] - lo <= light_offspring) {
        for (int m = m0; m < m1; ++m) {
          const std::uint64_t hi = O[m];
          for (std::uint64_t j = lo; j < hi; ++j) a[j] = static_cast<Index>(first + m);
          lo = hi;
        }
      } else {
        storage.heavy[atomicAdd(&storage.heavy_count, 1)] = static_cast<int>(threadIdx.x);
      }
    }
    __syncthreads();
    const int heavy = storage.heavy_count;
    for (int k = 0; k < heavy; ++k) {
      const int h0 = storage.heavy[k] * Items;
      const int h1 = min(h0 + Items, count);
      const std::uint64_t lo = h0 == 0 ? O_begin : O[h0 - 1];
      for (std::uint64_t j = lo + threadIdx.x; j < O[h1 - 1]; j += BlockThreads) {
        int m = h0;
        while (O[m] <= j) ++m;
        a[j] = static_cast<Index>(first + m);
      }
    }
    __syncthreads();
    if (threadIdx.x == 0) storage.heavy_count = 0;
  }
};

}  // namespace resample::cuda::block
