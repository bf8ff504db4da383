// Code 8 inside a warp: the cumulative offspring of a warp's run of particles, held in registers,
// to the ancestors they imply. Device code. CPU twin: resample::cpu::cumulative_offspring_to_ancestors.
//
// Lane l holds O[m], the cumulative offspring of the run's particle l Items + m (offspring indices
// below 2^32), and `start`, the O before its first particle; the run's offspring are
// [O_begin, O_end), and a[j] = first + (the run's particle that owns offspring j).
//
// Window by window of 32 Items slots: every particle whose run of offspring starts in the window
// marks that slot with its index (the starts are distinct), a warp max-scan carried over from the
// window before gives each slot its owner, and the lanes store the window, each warp store 32
// consecutive ancestors. Only __syncwarp: a block's warps write their runs independently, where a
// block-wide stage made each wait for the slowest warp of its block. A heavy particle (offspring
// across several windows) costs the windows it spans, shared by the whole warp.
//
// Shared memory: the stage, 32 Items slots with four pad words per 32, so that the quarter-warps'
// 16-byte vectors (a lane's Items consecutive slots) fall in distinct banks.
#pragma once

#include <cstddef>
#include <cstdint>

namespace resample::cuda::warp {

template <int Items>
struct ancestor_writer {
  static_assert(Items % 4 == 0, "a lane's slots are whole 16-byte vectors");
  static constexpr int window = 32 * Items;

  struct TempStorage {
    alignas(16) int stage[window + window / 8];
  };

  /// Every lane of the warp calls, converged.
  template <class Index>
  __device__ static void write(TempStorage& tmp, const std::uint32_t (&O)[Items], std::uint32_t start,
                               std::uint32_t O_begin, std::uint32_t O_end, std::size_t first, Index* a) {
    const int lane = static_cast<int>(threadIdx.x & 31);
    int* const stage = tmp.stage;
    int owner_before = -1;  // the owner of the slot before the window
    // 64-bit: base + window must not wrap for O_end near 2^32
    for (std::uint64_t base = O_begin; base < O_end; base += window) {
      const auto base32 = static_cast<std::uint32_t>(base);
#pragma unroll
      for (int k = 0; k < Items; k += 4) vector_at(stage, lane * Items + k) = make_int4(-1, -1, -1, -1);
      __syncwarp();
      std::uint32_t lo = start;
#pragma unroll
      for (int m = 0; m < Items; ++m) {
        const std::uint32_t slot = lo - base32;  // wraps above the window for a start before it
        if (O[m] > lo && slot < static_cast<std::uint32_t>(window)) stage[padded(static_cast<int>(slot))] = lane * Items + m;
        lo = O[m];
      }
      __syncwarp();
      int v[Items];
      int run = owner_before;
#pragma unroll
      for (int k = 0; k < Items; k += 4) {
        const int4 s = vector_at(stage, lane * Items + k);
        v[k] = run = max(run, s.x);
        v[k + 1] = run = max(run, s.y);
        v[k + 2] = run = max(run, s.z);
        v[k + 3] = run = max(run, s.w);
      }
      // Inclusive max over the lanes up to this one (a lane below d gets its own value back, which
      // max leaves unchanged), then the lane before's.
#pragma unroll
      for (int d = 1; d < 32; d *= 2) run = max(run, __shfl_up_sync(0xffffffffu, run, d));
      int before = __shfl_up_sync(0xffffffffu, run, 1);
      if (lane == 0) before = owner_before;
#pragma unroll
      for (int k = 0; k < Items; k += 4) {
        vector_at(stage, lane * Items + k) =
            make_int4(max(before, v[k]), max(before, v[k + 1]), max(before, v[k + 2]), max(before, v[k + 3]));
      }
      __syncwarp();
      const std::uint64_t left = O_end - base;
      const int count = left < window ? static_cast<int>(left) : window;
      Index* const out = a + base;
#pragma unroll
      for (int k = 0; k < Items; ++k) {
        const int j = k * 32 + lane;
        if (j < count) out[j] = static_cast<Index>(first + stage[padded(j)]);
      }
      owner_before = stage[padded(window - 1)];
      __syncwarp();  // the stage is read before the next window clears it
    }
  }

 private:
  __device__ static int padded(int j) { return j + ((j >> 5) << 2); }
  __device__ static int4& vector_at(int* stage, int j) { return *reinterpret_cast<int4*>(stage + padded(j)); }
};

}  // namespace resample::cuda::warp
