// Code 8 inside a warp: the cumulative offspring of a warp's run of particles, held in registers,
// to the ancestors they imply. Device code. CPU twin: resample::cpu::cumulative_offspring_to_ancestors.
//
// Lane l holds O[m], the cumulative offspring of the run's particle l Items + m (offspring indices
// below 2^32), and `start`, the O before its first particle; the run's offspring are
// [O_begin, O_end), and a[j] = first + (the run's particle that owns offspring j).
//
// Window by window of up to Rows x 128 slots: every particle whose run of offspring starts in the
// window marks that slot with its index (the starts are distinct), and a max-scan carried over
// from slot to slot gives each slot its owner. The slots go in rows of 128, lane l holding slots
// 4l .. 4l + 3 of a row: one 16-byte shared load per row and lane, no bank conflict and no
// padding, a scan inside the vector and then across the lanes, and one 16-byte store of four
// ancestors (a warp store is 512 contiguous bytes; windows start where a + j is 16-byte aligned,
// and the vectors that straddle the run's ends are stored element by element). A window has only
// the rows its slots need. Only __syncwarp: a block's warps write their runs independently. A
// heavy particle (offspring across several windows) costs the windows it spans, shared by the
// whole warp.
#pragma once

#include <cstddef>
#include <cstdint>

namespace resample::cuda::warp {

template <int Items, int Rows = 3>
struct ancestor_writer {
  static constexpr int row = 128;
  static constexpr int window = Rows * row;

  struct TempStorage {
    alignas(16) std::uint32_t stage[window];
  };

  /// Every lane of the warp calls, converged. N < 2^32: the marks are the particles' indices.
  template <class Index>
  __device__ static void write(TempStorage& tmp, const std::uint32_t (&O)[Items], std::uint32_t start,
                               std::uint32_t O_begin, std::uint32_t O_end, std::size_t first, Index* a) {
    static_assert(sizeof(Index) == 4 || sizeof(Index) == 8, "32- or 64-bit indices");
    const int lane = static_cast<int>(threadIdx.x & 31);
    std::uint32_t* const stage = tmp.stage;
    uint4* const vectors = reinterpret_cast<uint4*>(stage);
    const std::uint32_t mark = static_cast<std::uint32_t>(first) + static_cast<std::uint32_t>(lane * Items);
    // The first window starts `lead` (< 4) slots before O_begin, where a + slot is 16-byte aligned
    // (a itself is aligned to its element); those slots are not written.
    int lead = static_cast<int>((reinterpret_cast<std::uintptr_t>(a + O_begin) % 16) / sizeof(Index));
    std::uint32_t base = O_begin - static_cast<std::uint32_t>(lead);  // slots are offsets from it (mod 2^32)
    Index* out = a + O_begin - lead;
    std::uint32_t owner_before = 0;  // the owner of the slot before the row
    for (std::uint64_t left = std::uint64_t{O_end - O_begin} + static_cast<std::uint64_t>(lead);
         left > static_cast<std::uint64_t>(lead);) {
      const int used = left < window ? static_cast<int>(left) : window;  // the window's slots, from its first
      const int rows = (used + row - 1) / row;
#pragma unroll
      for (int r = 0; r < Rows; ++r) {
        if (r < rows) vectors[r * 32 + lane] = make_uint4(0, 0, 0, 0);
      }
      __syncwarp();
      std::uint32_t lo = start;
#pragma unroll
      for (int m = 0; m < Items; ++m) {
        const std::uint32_t slot = lo - base;  // wraps above the window for a start before it
        if (O[m] > lo && slot < static_cast<std::uint32_t>(used)) stage[slot] = mark + m;
        lo = O[m];
      }
      __syncwarp();
#pragma unroll
      for (int r = 0; r < Rows; ++r) {
        if (r >= rows) break;  // the same in every lane
        uint4 s = vectors[r * 32 + lane];
        s.x = max(s.x, owner_before);
        s.y = max(s.y, s.x);
        s.z = max(s.z, s.y);
        s.w = max(s.w, s.z);
        // Inclusive max over the lanes up to this one (a lane below d gets its own value back,
        // which max leaves unchanged); then the lane before's, for this lane's four slots.
        std::uint32_t run = s.w;
#pragma unroll
        for (int d = 1; d < 32; d *= 2) run = max(run, __shfl_up_sync(0xffffffffu, run, d));
        std::uint32_t before = __shfl_up_sync(0xffffffffu, run, 1);
        if (lane == 0) before = owner_before;
        owner_before = __shfl_sync(0xffffffffu, run, 31);
        const std::uint32_t v[4] = {max(before, s.x), max(before, s.y), max(before, s.z), max(before, s.w)};
        const int j = r * row + 4 * lane;
        if (j >= lead && j + 4 <= used) {
          store_vector(out + j, v);
        } else {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            if (j + e >= lead && j + e < used) out[j + e] = static_cast<Index>(v[e]);
          }
        }
      }
      __syncwarp();  // the stage is read before the next window clears it
      left -= static_cast<std::uint64_t>(used);
      base += window;
      out += window;
      lead = 0;  // the next windows write from their first slot
    }
  }

 private:
  template <class Index>
  __device__ static void store_vector(Index* p, const std::uint32_t (&v)[4]) {
    if constexpr (sizeof(Index) == 4) {
      *reinterpret_cast<uint4*>(p) = make_uint4(v[0], v[1], v[2], v[3]);
    } else {
      auto* q = reinterpret_cast<ulonglong2*>(p);
      q[0] = make_ulonglong2(v[0], v[1]);
      q[1] = make_ulonglong2(v[2], v[3]);
    }
  }
};

}  // namespace resample::cuda::warp
