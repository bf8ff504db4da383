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
// the rows its slots need. Only __syncwarp: a block's warps write their runs independently.
//
// With a `defer` (the comb's), a heavy particle, one whose offspring cover whole rows with no run
// starting in them, has those rows filled with its index by plain 16-byte stores, no marks and no
// scan, or handed to `defer` (given the first slot as an offset from a, the length, a multiple of
// 128, and the owner; true if it takes the fill): one warp alone stores at a fraction of the
// device's rate, and a particle can own all N offspring. Without one (the batched call, whose
// systems bound a warp's windows), only windows: the fill's copy of the loop added 34 bytes of
// spill stores to the batched warp kernel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace resample::cuda::warp {

template <int Items, int Rows = 3>
struct ancestor_writer {
  static constexpr int row = 128;
  static constexpr int window = Rows * row;

  struct TempStorage {
    alignas(16) std::uint32_t stage[window];
  };

  /// No fills: windows only.
  struct windows_only {
    __device__ bool operator()(std::size_t, std::uint32_t, std::uint32_t) const { return false; }
  };

  /// Every lane of the warp calls, converged (and calls `defer` converged, for a warp-wide answer).
  /// N < 2^32: the marks are the particles' indices. True (in every lane) if `defer` took a fill.
  template <class Index, class Defer = windows_only>
  __device__ static bool write(TempStorage& tmp, const std::uint32_t (&O)[Items], std::uint32_t start,
                               std::uint32_t O_begin, std::uint32_t O_end, std::size_t first, Index* a,
                               Defer defer = {}) {
    if constexpr (!std::is_same_v<Defer, windows_only>) {
      // A row can be filled only inside a run longer than a row. Warps with one take a copy of the
      // loop with the fill, out of line: inline, its test in every window cost 8 to 10 us of the
      // call's 149 at 2^24 on random weights, where no warp fills (session 22, H200).
      bool long_run = false;
      std::uint32_t lo = start;
#pragma unroll
      for (int m = 0; m < Items; ++m) {
        long_run |= O[m] - lo > static_cast<std::uint32_t>(row);
        lo = O[m];
      }
      if (__any_sync(0xffffffffu, long_run)) {
        runs r;
#pragma unroll
        for (int m = 0; m < Items; ++m) r.O[m] = O[m];
        return write_with_fills(tmp, r, start, O_begin, O_end, first, a, defer);
      }
    }
    return windows<false>(tmp, O, start, O_begin, O_end, first, a, defer);
  }

  /// p[0, count) = owner, for 16-byte aligned p and count a multiple of 128: one 16-byte store per
  /// lane and row, the warp's 32 lanes converged.
  template <class Index>
  __device__ static void fill_rows(Index* p, std::uint32_t count, std::uint32_t owner) {
    const std::uint32_t v[4] = {owner, owner, owner, owner};
#pragma unroll 4
    for (std::uint32_t j = 4 * (threadIdx.x & 31); j < count; j += row) store_vector(p + j, v);
  }

 private:
  /// O by value, for the out-of-line call.
  struct runs {
    std::uint32_t O[Items];
  };

  template <class Index, class Defer>
  __device__ __noinline__ static bool write_with_fills(TempStorage& tmp, runs r, std::uint32_t start,
                                                       std::uint32_t O_begin, std::uint32_t O_end, std::size_t first,
                                                       Index* a, Defer defer) {
    return windows<true>(tmp, r.O, start, O_begin, O_end, first, a, defer);
  }

  template <bool Fills, class Index, class Defer>
  __device__ __forceinline__ static bool windows(TempStorage& tmp, const std::uint32_t (&O)[Items], std::uint32_t start,
                                                 std::uint32_t O_begin, std::uint32_t O_end, std::size_t first,
                                                 Index* a, Defer defer) {
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
    bool deferred = false;
    for (std::uint64_t left = std::uint64_t{O_end - O_begin} + static_cast<std::uint64_t>(lead);
         left > static_cast<std::uint64_t>(lead);) {
      if (Fills && left > window) {
        // A heavy run: where no particle's run starts for whole rows, every slot is owner_before's,
        // stored without marks or scans (a window is about 120 instructions a lane; a row of the
        // fill, one store). Never in the first window, whose slot `lead` is marked.
        std::uint32_t next = ~0u;  // the offset of the first run start at or after base
        std::uint32_t lo = start;
#pragma unroll
        for (int m = 0; m < Items; ++m) {
          // a start before base wraps above every start after it (O_end - lo < 2^32)
          if (O[m] > lo) next = min(next, lo - base);
          lo = O[m];
        }
#pragma unroll
        for (int d = 16; d >= 1; d /= 2) next = min(next, __shfl_xor_sync(0xffffffffu, next, d));
        const auto fill = static_cast<std::uint32_t>((next < left ? std::uint64_t{next} : left) / row * row);
        if (fill != 0) {
          if (defer(static_cast<std::size_t>(out - a), fill, owner_before)) {
            deferred = true;
          } else {
            fill_rows(out, fill, owner_before);
          }
          left -= fill;
          base += fill;
          out += fill;
          continue;
        }
      }
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
    return deferred;
  }

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
