// Block-wide sums and exclusive prefix sums of 128-bit unsigned integers (the exact CDF's
// arithmetic), from warp shuffles of the two 64-bit halves and one shared-memory slot per warp.
// Device code.
//
// CUB's BlockScan / BlockReduce over unsigned __int128 move the value through local memory on each
// shuffle step; here a step is four 32-bit shuffles and a 128-bit add in registers. Integer sums
// are exact, so any order of the additions gives the same bits.
#pragma once

#include "resample/core/wide_int.hpp"

namespace resample::cuda::block {

namespace detail {
__device__ inline u128 shfl_up(u128 x, int delta) {
  const auto lo = __shfl_up_sync(0xffffffffu, static_cast<unsigned long long>(x), delta);
  const auto hi = __shfl_up_sync(0xffffffffu, static_cast<unsigned long long>(x >> 64), delta);
  return (static_cast<u128>(hi) << 64) | lo;
}
}  // namespace detail

/// Lane `lane`'s x in every lane of a full warp.
__device__ inline u128 warp_broadcast(u128 x, int lane) {
  const auto lo = __shfl_sync(0xffffffffu, static_cast<unsigned long long>(x), lane);
  const auto hi = __shfl_sync(0xffffffffu, static_cast<unsigned long long>(x >> 64), lane);
  return (static_cast<u128>(hi) << 64) | lo;
}

/// The sum over the 32 lanes of a full warp, in every lane: a butterfly, no per-lane conditions.
__device__ inline u128 warp_sum(u128 x) {
#pragma unroll
  for (int d = 16; d >= 1; d /= 2) {
    const auto lo = __shfl_xor_sync(0xffffffffu, static_cast<unsigned long long>(x), d);
    const auto hi = __shfl_xor_sync(0xffffffffu, static_cast<unsigned long long>(x >> 64), d);
    x += (static_cast<u128>(hi) << 64) | lo;
  }
  return x;
}

/// Inclusive prefix sum over the 32 lanes of a full warp.
__device__ inline u128 warp_inclusive_sum(u128 x) {
  const int lane = static_cast<int>(threadIdx.x & 31);
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const u128 y = detail::shfl_up(x, d);
    if (lane >= d) x += y;
  }
  return x;
}

/// Block of BlockThreads (a multiple of 32, at most 1024) threads, one-dimensional; every thread
/// must call. Up to 8 warps, each thread adds the warp totals itself; beyond, warp 0 scans them
/// (a loop of 32 dependent 128-bit adds in every thread made a 1024-thread scan instruction-bound).
template <int BlockThreads>
struct wide_sum {
  static_assert(BlockThreads % 32 == 0 && BlockThreads <= 1024, "whole warps, at most 32");
  static constexpr int warps = BlockThreads / 32;
  struct TempStorage {
    u128 warp[warps];
    u128 total;
  };

  /// Exclusive prefix sum of x over the block (thread order); `total` gets the block's sum.
  /// Ends with a barrier, so the storage may be reused at once.
  __device__ static u128 exclusive(TempStorage& tmp, u128 x, u128& total) {
    const int warp = static_cast<int>(threadIdx.x >> 5), lane = static_cast<int>(threadIdx.x & 31);
    const u128 inclusive = warp_inclusive_sum(x);
    if (lane == 31) tmp.warp[warp] = inclusive;
    __syncthreads();
    u128 before = 0;
    if constexpr (warps <= 8) {
      u128 sum = 0;
#pragma unroll
      for (int w = 0; w < warps; ++w) {
        const u128 s = tmp.warp[w];
        if (w < warp) before += s;
        sum += s;
      }
      total = sum;
    } else {
      if (warp == 0) {
        const u128 t = lane < warps ? tmp.warp[lane] : 0;
        const u128 scanned = warp_inclusive_sum(t);
        if (lane < warps) tmp.warp[lane] = scanned - t;
        if (lane == 31) tmp.total = scanned;
      }
      __syncthreads();
      before = tmp.warp[warp];
      total = tmp.total;
    }
    __syncthreads();
    return before + inclusive - x;
  }

  /// The block's sum, in every thread. Ends with a barrier.
  __device__ static u128 sum(TempStorage& tmp, u128 x) {
    u128 total;
    exclusive(tmp, x, total);
    return total;
  }
};

}  // namespace resample::cuda::block
