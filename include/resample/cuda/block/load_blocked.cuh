// A thread's run of Items consecutive log-weights (CUB's blocked arrangement), loaded straight
// into registers: 16-byte vector loads when the run lies inside [0, n), is 16-byte aligned and is
// whole vectors,
// else one guarded load per item, -inf (a zero weight) past the end. Device code.
//
// Why not a shared-memory transpose (cub::BLOCK_LOAD_WARP_TRANSPOSE): a warp's vector loads cover
// a contiguous 32 x Items x sizeof(T) bytes, so every sector fetched is used, through L1, without
// the round trip through shared memory and its barrier.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace resample::cuda::block {

template <class T, int Items>
__device__ inline void load_blocked(const T* lw, std::size_t first, std::size_t n, T (&x)[Items]) {
  constexpr int per_vector = 16 / sizeof(T);
  constexpr bool whole_vectors = (Items * sizeof(T)) % 16 == 0;
  const T* p = lw + first;
  if (whole_vectors && first + Items <= n && (reinterpret_cast<std::uintptr_t>(p) & 15) == 0) {
#pragma unroll
    for (int v = 0; v < Items / per_vector; ++v) {
      if constexpr (sizeof(T) == 4) {
        const float4 f = __ldg(reinterpret_cast<const float4*>(p) + v);
        x[4 * v] = f.x, x[4 * v + 1] = f.y, x[4 * v + 2] = f.z, x[4 * v + 3] = f.w;
      } else {
        const double2 d = __ldg(reinterpret_cast<const double2*>(p) + v);
        x[2 * v] = d.x, x[2 * v + 1] = d.y;
      }
    }
  } else {
#pragma unroll
    for (int m = 0; m < Items; ++m) x[m] = first + m < n ? p[m] : -std::numeric_limits<T>::infinity();
  }
}

}  // namespace resample::cuda::block
