// Code 8 inside a thread block: the cumulative offspring of a run of particles, staged in shared
// memory, to the ancestors they imply. Device code.
//
// O[m] (m < count) is the cumulative offspring of particle first + m, O_begin that of the particle
// before; thread t owns the Items consecutive entries from t Items (the blocked arrangement of CUB).
//   write_staged (when the run's offspring fit the stage): each particle with offspring marks the
//     slot where its run starts, a block max-scan gives every slot its owner, consecutive threads
//     store the slots: no per-particle loop, contiguous stores.
//   write (any run): a thread whose particles have few offspring (at most light_offspring) writes
//     a^j = first + m for O[m-1] <= j < O[m] itself; the others are listed, and the whole block then
//     shares each listed thread's range (a linear search over its Items entries per j), so a heavy
//     particle -- all N offspring in one place -- costs the block, not one thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace resample::cuda::block {

/// Inclusive max-scan over the 32 lanes of a full warp: Code 8's owner of each staged slot.
__device__ inline int warp_inclusive_max(int x) {
  const int lane = static_cast<int>(threadIdx.x & 31);
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const int y = __shfl_up_sync(0xffffffffu, x, d);
    if (lane >= d) x = max(x, y);
  }
  return x;
}

template <int Items>
struct ancestor_writer {
  static constexpr std::uint32_t light_offspring = 8 * Items;

  /// Shared memory: the list of heavy threads (one entry per thread of the block) and its length,
  /// and a word per warp.
  template <int BlockThreads>
  struct TempStorage {
    int heavy[BlockThreads];
    int heavy_count;
    int warp_max[BlockThreads / 32];  // write_staged's scan
  };

  /// Needs storage.heavy_count == 0, made visible by a barrier (set it once before the first call;
  /// each call resets it before returning, and the caller's barrier that stages the next O makes
  /// that visible). Every thread of the block must call it.
  template <int BlockThreads, class Index>
  __device__ static void write(TempStorage<BlockThreads>& storage, const std::uint32_t* O, std::uint64_t O_begin,
                               int count, std::size_t first, Index* a) {
    fill<BlockThreads>(storage, O, O_begin, count, first,
                       [a](std::uint32_t j, std::size_t i) { a[j] = static_cast<Index>(i); });
  }

  /// Shared-memory ints write_staged needs for Capacity slots (16-byte aligned): four pad words
  /// per 32, so that the 16-byte vectors of a quarter-warp's threads (each thread's run of
  /// consecutive slots) fall in distinct banks, and every vector of four slots stays aligned.
  static constexpr int stage_ints(int capacity) { return capacity + capacity / 8; }
  __device__ static int padded(int j) { return j + ((j >> 5) << 2); }
  __device__ static int4& vector_at(int* stage, int j) { return *reinterpret_cast<int4*>(stage + padded(j)); }

  /// As write, through `stage` (stage_ints(Capacity) ints of shared memory) when the run's
  /// offspring fit, with no loop over each particle's offspring (whose length differs from lane to
  /// lane, so a warp ran it as often as its most prolific particle has offspring):
  ///   stage[j] = -1 everywhere; stage[O[m-1] - O_begin] = m where particle m has offspring (run
  ///   starts are distinct); an inclusive max-scan then gives every slot the last run started at or
  ///   before it, its owner; consecutive threads copy a[O_begin + j] = first + stage[j] out, so a
  ///   warp's stores are one contiguous run.
  /// Falls back to write when they do not fit. Ends with a barrier.
  template <int BlockThreads, int Capacity, class Index>
  __device__ static void write_staged(TempStorage<BlockThreads>& storage, int* stage, const std::uint32_t* O,
                                      std::uint64_t O_begin, int count, std::size_t first, Index* a) {
    const std::uint64_t length = O[count - 1] - O_begin;
    if (length > Capacity) {
      write<BlockThreads>(storage, O, O_begin, count, first, a);
      return;
    }
    const auto begin = static_cast<std::uint32_t>(O_begin);
    clear<BlockThreads, Capacity>(stage);
    __syncthreads();
    const int m0 = static_cast<int>(threadIdx.x) * Items;
#pragma unroll
    for (int k = 0; k < Items; ++k) {
      const int m = m0 + k;
      if (m < count) {
        const std::uint32_t start = m == 0 ? begin : O[m - 1];
        if (O[m] > start) stage[padded(static_cast<int>(start - begin))] = m;
      }
    }
    __syncthreads();
    scan_and_store<BlockThreads, Capacity>(storage, stage, O_begin, static_cast<int>(length), first, a);
  }

 private:
  template <int BlockThreads, int Capacity>
  __device__ static void clear(int* stage) {
    static_assert(Capacity % (4 * BlockThreads) == 0, "whole runs of int4 vectors per thread");
    for (int j = 4 * static_cast<int>(threadIdx.x); j < Capacity; j += 4 * BlockThreads) {
      vector_at(stage, j) = make_int4(-1, -1, -1, -1);
    }
  }

  /// write_staged's end, once the run starts are marked (and a barrier passed): the inclusive
  /// max-scan of the stage (Capacity / BlockThreads consecutive slots per thread, then across
  /// threads), then the coalesced stores of its first `length` slots. Ends with a barrier.
  template <int BlockThreads, int Capacity, class Index>
  __device__ static void scan_and_store(TempStorage<BlockThreads>& storage, int* stage, std::uint64_t O_begin,
                                        int length, std::size_t first, Index* a) {
    constexpr int per_thread = Capacity / BlockThreads;
    int v[per_thread];
    int run = -1;
#pragma unroll
    for (int k = 0; k < per_thread; k += 4) {
      const int4 s = vector_at(stage, static_cast<int>(threadIdx.x) * per_thread + k);
      v[k] = run = max(run, s.x);
      v[k + 1] = run = max(run, s.y);
      v[k + 2] = run = max(run, s.z);
      v[k + 3] = run = max(run, s.w);
    }
    const int lane = static_cast<int>(threadIdx.x & 31), warp = static_cast<int>(threadIdx.x >> 5);
    int before = warp_inclusive_max(run);  // the max over this thread and those before it in the warp
    if (lane == 31) storage.warp_max[warp] = before;
    before = __shfl_up_sync(0xffffffffu, before, 1);
    if (lane == 0) before = -1;
    __syncthreads();
#pragma unroll
    for (int w = 0; w < BlockThreads / 32; ++w) {
      if (w < warp) before = max(before, storage.warp_max[w]);
    }
#pragma unroll
    for (int k = 0; k < per_thread; k += 4) {
      vector_at(stage, static_cast<int>(threadIdx.x) * per_thread + k) =
          make_int4(max(before, v[k]), max(before, v[k + 1]), max(before, v[k + 2]), max(before, v[k + 3]));
    }
    __syncthreads();
    Index* out = a + O_begin;
    for (int j = static_cast<int>(threadIdx.x); j < length; j += BlockThreads) {
      out[j] = static_cast<Index>(first + stage[padded(j)]);
    }
    __syncthreads();
  }

  /// sink(j, i) for every j in [O_begin, O[count - 1]), i the particle that owns offspring j.
  /// Offspring indices are below N < 2^32: 32-bit counters (64-bit ones doubled the instructions
  /// of this loop, the comb kernel's largest cost after the exp).
  template <int BlockThreads, class Sink>
  __device__ static void fill(TempStorage<BlockThreads>& storage, const std::uint32_t* O, std::uint64_t O_begin,
                              int count, std::size_t first, Sink sink) {
    const int m0 = static_cast<int>(threadIdx.x) * Items;
    const auto begin = static_cast<std::uint32_t>(O_begin);
    if (m0 < count) {
      const int m1 = min(m0 + Items, count);
      std::uint32_t lo = m0 == 0 ? begin : O[m0 - 1];
      if (O[m1 - 1] - lo <= light_offspring) {
        for (int m = m0; m < m1; ++m) {
          const std::uint32_t hi = O[m];
#pragma unroll 1
          for (std::uint32_t j = lo; j < hi; ++j) sink(j, first + m);
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
      const std::uint32_t lo = h0 == 0 ? begin : O[h0 - 1];
      for (std::uint64_t j = lo + threadIdx.x; j < O[h1 - 1]; j += BlockThreads) {  // 64-bit: no wrap near 2^32
        int m = h0;
        while (O[m] <= j) ++m;
        sink(static_cast<std::uint32_t>(j), first + m);
      }
    }
    __syncthreads();
    if (threadIdx.x == 0) storage.heavy_count = 0;
  }
};

}  // namespace resample::cuda::block
