// Code 8 on the GPU: cumulative offspring to sorted ancestors, one tile of particles per block.
// CPU twins: resample::cpu::cumulative_offspring_to_ancestors and offspring_to_ancestors.
#pragma once

#include <type_traits>

#include <cub/device/device_scan.cuh>

#include "pipeline.cuh"

namespace resample::cuda::detail {

/// Code 9's two kernels: o = 0, then o^{a^j} += 1 by atomics (exact counts, any order).
template <class Index>
__global__ void zero_pass(std::size_t n, const device_status* st, Index* o) {
  const std::size_t i = blockIdx.x * std::size_t{block_threads} + threadIdx.x;
  if (i < n && st->code == 0) o[i] = 0;
}

template <class Index>
__global__ void count_pass(const Index* __restrict__ a, std::size_t n, const device_status* st, Index* o) {
  const std::size_t j = blockIdx.x * std::size_t{block_threads} + threadIdx.x;
  if (j >= n || st->code != 0) return;
  using atomic_t = std::conditional_t<sizeof(Index) == 4, unsigned int, unsigned long long>;
  atomicAdd(reinterpret_cast<atomic_t*>(o + a[j]), atomic_t{1});
}

/// Block t: particles [t tile, (t + 1) tile); their O (N < 2^32, so 32 bits) staged in shared
/// memory (8 KiB), then tile_writer writes the ancestors.
template <class Cum, class Index>
__global__ void __launch_bounds__(block_threads)
    cumulative_to_ancestors_pass(const Cum* __restrict__ O, std::size_t n, const device_status* st, Index* a) {
  if (st->code != 0) return;
  __shared__ std::uint32_t O_s[tile_items];
  __shared__ tile_writer::TempStorage<block_threads> writer;
  const std::size_t begin = blockIdx.x * std::size_t{tile_items};
  if (threadIdx.x == 0) writer.heavy_count = 0;
  const int count = static_cast<int>(min(n - begin, static_cast<std::size_t>(tile_items)));
  for (int m = threadIdx.x; m < count; m += block_threads) O_s[m] = static_cast<std::uint32_t>(O[begin + m]);
  const std::uint64_t O_begin = begin == 0 ? 0 : static_cast<std::uint64_t>(O[begin - 1]);
  __syncthreads();
  tile_writer::write<block_threads>(writer, O_s, O_begin, count, begin, a);
}

/// Temp bytes for counts_to_ancestors' scan.
inline std::size_t counts_scan_bytes(std::size_t n) {
  std::size_t bytes = 0;
  check(cub::DeviceScan::InclusiveSum(nullptr, bytes, static_cast<const std::uint64_t*>(nullptr),
                                      static_cast<std::uint64_t*>(nullptr), static_cast<int64_t>(n)),
        "cub::DeviceScan::InclusiveSum (size)");
  return bytes;
}

/// Offspring counts (64-bit, in place: they become cumulative) to ancestors.
template <class Index>
void counts_to_ancestors(std::uint64_t* counts, std::size_t n, const device_status* st, void* scan_temp,
                         std::size_t scan_bytes, Index* a, cudaStream_t stream) {
  check(cub::DeviceScan::InclusiveSum(scan_temp, scan_bytes, counts, counts, static_cast<int64_t>(n), stream),
        "cub::DeviceScan::InclusiveSum (offspring)");
  cumulative_to_ancestors_pass<std::uint64_t, Index>
      <<<static_cast<unsigned>(tile_count(n)), block_threads, 0, stream>>>(counts, n, st, a);
  check_launch("cumulative_to_ancestors_pass");
}

}  // namespace resample::cuda::detail
