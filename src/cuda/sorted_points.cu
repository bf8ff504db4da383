// Multinomial-sorted's points per stratum: P_K = c_0 + ... + c_{K-1} for the B strata of
// sorted_points (core/sorted_points.hpp), K = 0 .. B. CPU twin: resample::cpu::points_before_strata
// (every count is an integer sum, so any order gives its bits).
//
//   level1_pass      block b: its share of the N balls, four per Philox call, counted into the G
//                    (<= 8192) super-bins by shared-memory atomics; writes its row of counts (and
//                    zeroes super_bin_pass's counter: a kernel, not a memset node, for the same
//                    reason as open_call in pipeline.cuh).
//   super_bin_pass   c_g = the column sums of the rows (one thread per super-bin, coalesced), then
//                    the last block to finish scans them into each super-bin's first point (a
//                    one-block exclusive scan, 8 super-bins per thread).
//   level2_pass      block g: super-bin g's c_g balls, four per Philox call, counted into its W
//                    strata in shared memory (8192 at a time: more only above N = 2^26, each
//                    slice drawing the balls again; the shared memory sized to the slice and padded
//                    a word per 32), then a block scan turns the counts into P_K, stored by
//                    consecutive threads.
// The kernels return at once when the call's verdict is bad (the comb pass then writes nothing).
#include <cub/block/block_scan.cuh>

#include "detail/pipeline.cuh"
#include "detail/schemes.hpp"
#include "resample/core/sorted_points.hpp"

namespace resample::cuda::detail {
namespace {

constexpr int points_threads = 256;
constexpr int max_super_bins = 8192;  // 2^13, sorted_points' largest G
constexpr int slice_strata = 8192;    // level 2's shared counters

/// Level 2's strata per slice: a super-bin's width, at most slice_strata (the kernel and the host's
/// shared-memory size both ask).
__host__ __device__ inline int level2_slice(const sorted_points& layout) {
  return static_cast<int>(layout.width() < slice_strata ? layout.width() : std::uint64_t{slice_strata});
}

/// level2_pass's shared counter of stratum s of a slice: a pad word per 32, so that the threads'
/// runs of per_thread consecutive strata (a power of two apart) start in different banks.
__host__ __device__ constexpr int padded_stratum(int s) { return s + (s >> 5); }

__global__ void __launch_bounds__(points_threads)
    level1_pass(sorted_points layout, key k, step_source step_from, const device_status* st, std::uint32_t* rows,
                unsigned* finished) {
  // The balls depend on neither the weights nor the verdict: counted before the wait, while the
  // summary's last kernel (one block) runs.
  __shared__ std::uint32_t count[max_super_bins];
  const std::uint32_t G = layout.super_bins();
  for (std::uint32_t g = threadIdx.x; g < G; g += points_threads) count[g] = 0;
  __syncthreads();
  const std::uint32_t step = step_from.get();
  const std::uint64_t n = layout.size();
  const std::uint64_t groups = (n + 3) / 4;
  const std::uint64_t per_block = (groups + gridDim.x - 1) / gridDim.x;
  const std::uint64_t end = min(groups, (blockIdx.x + 1) * per_block);
  for (std::uint64_t j4 = blockIdx.x * per_block + threadIdx.x; j4 < end; j4 += points_threads) {
    const auto words = sorted_points::level1_words(k, step, j4);
#pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      if (4 * j4 + lane < n) atomicAdd(&count[layout.super_bin_of(words.v[lane])], 1u);
    }
  }
  __syncthreads();
  wait_for_previous_kernel();
  let_next_kernel_launch();
  if (st->code != 0) return;
  if (blockIdx.x == 0 && threadIdx.x == 0) *finished = 0;  // super_bin_pass's counter, in stream order
  for (std::uint32_t g = threadIdx.x; g < G; g += points_threads) rows[std::size_t{blockIdx.x} * G + g] = count[g];
}

__global__ void __launch_bounds__(points_threads)
    super_bin_pass(sorted_points layout, unsigned rows_count, const std::uint32_t* __restrict__ rows,
                   const device_status* st, std::uint32_t* super_count, std::uint32_t* super_before,
                   unsigned* finished) {
  wait_for_previous_kernel();
  let_next_kernel_launch();
  if (st->code != 0) return;
  const std::uint32_t G = layout.super_bins();
  const std::uint32_t g = blockIdx.x * points_threads + threadIdx.x;
  if (g < G) {
    std::uint32_t sum = 0;
#pragma unroll 8
    for (unsigned r = 0; r < rows_count; ++r) sum += rows[std::size_t{r} * G + g];
    super_count[g] = sum;
  }
  // The last block to finish scans every column sum (the others' writes are visible to it after
  // their fence and its acquiring atomic: the threadFenceReduction pattern).
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(finished, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  using scan = cub::BlockScan<std::uint32_t, points_threads>;
  __shared__ typename scan::TempStorage tmp;
  constexpr int per_thread = max_super_bins / points_threads;
  std::uint32_t c[per_thread];
#pragma unroll
  for (int m = 0; m < per_thread; ++m) {
    const std::uint32_t i = threadIdx.x * per_thread + m;
    c[m] = i < G ? static_cast<volatile const std::uint32_t*>(super_count)[i] : 0;
  }
  scan(tmp).ExclusiveSum(c, c);
#pragma unroll
  for (int m = 0; m < per_thread; ++m) {
    const std::uint32_t i = threadIdx.x * per_thread + m;
    if (i < G) super_before[i] = c[m];
  }
}

__global__ void __launch_bounds__(points_threads)
    level2_pass(sorted_points layout, key k, step_source step_from, const device_status* st,
                const std::uint32_t* __restrict__ super_count, const std::uint32_t* __restrict__ super_before,
                std::uint32_t* P) {
  wait_for_previous_kernel();
  let_next_kernel_launch();
  if (st->code != 0) return;
  using scan = cub::BlockScan<std::uint32_t, points_threads>;
  extern __shared__ std::uint32_t count[];  // one slice: min(W, slice_strata) counters, padded
  __shared__ typename scan::TempStorage tmp;
  __shared__ std::uint32_t carry;
  const std::uint32_t g = blockIdx.x;
  const std::uint32_t step = step_from.get();
  const std::uint32_t balls = super_count[g];
  const std::uint64_t W = layout.width();
  const int slice = level2_slice(layout);
  const int per_thread = (slice + points_threads - 1) / points_threads;
  if (threadIdx.x == 0) carry = super_before[g];
  for (std::uint64_t first = 0; first < W; first += slice) {
    for (int s = threadIdx.x; s < slice; s += points_threads) count[padded_stratum(s)] = 0;
    __syncthreads();
    for (std::uint64_t m4 = threadIdx.x; 4 * m4 < balls; m4 += points_threads) {
      const auto words = sorted_points::level2_words(k, step, g, m4);
#pragma unroll
      for (int lane = 0; lane < 4; ++lane) {
        const std::uint64_t s = layout.stratum_in_super_bin(words.v[lane]) - first;  // wraps when below
        if (4 * m4 + lane < balls && s < static_cast<std::uint64_t>(slice)) {
          atomicAdd(&count[padded_stratum(static_cast<int>(s))], 1u);
        }
      }
    }
    __syncthreads();
    // Thread t owns strata [t per_thread, (t + 1) per_thread) of the slice: its sum, a block scan,
    // then each count replaced by P_{K + 1}, the points up to and including stratum K, and P
    // stored by consecutive threads (a thread's own strata are per_thread words apart from its
    // neighbour's: stored from there, a warp's stores touched 8 times the sectors at W = 2048).
    std::uint32_t own = 0;
    for (int m = 0; m < per_thread; ++m) {
      const int s = threadIdx.x * per_thread + m;
      if (s < slice) own += count[padded_stratum(s)];
    }
    std::uint32_t before, slice_total;
    scan(tmp).ExclusiveSum(own, before, slice_total);
    std::uint32_t running = carry + before;
    for (int m = 0; m < per_thread; ++m) {
      const int s = threadIdx.x * per_thread + m;
      if (s < slice) count[padded_stratum(s)] = running += count[padded_stratum(s)];
    }
    __syncthreads();  // every thread has read carry, and the counts are P
    const std::uint64_t K0 = g * W + first;
    for (int s = threadIdx.x; s < slice; s += points_threads) P[K0 + s + 1] = count[padded_stratum(s)];
    if (threadIdx.x == 0) carry += slice_total;
    __syncthreads();  // the stores have read count before the next slice clears it
  }
  if (g == 0 && threadIdx.x == 0) P[0] = 0;
}

}  // namespace

std::size_t points_before_strata(void* d_temp, std::size_t n, key k, step_source step, const device_status* st,
                                 std::uint32_t* P, cudaStream_t stream) {
  const sorted_points layout(n);
  const std::uint32_t G = layout.super_bins();
  const unsigned rows_count = layout.level1_rows();
  carve c(d_temp);
  auto* rows = c.take<std::uint32_t>(std::size_t{rows_count} * G);
  auto* super_count = c.take<std::uint32_t>(G);
  auto* super_before = c.take<std::uint32_t>(G);
  auto* finished = c.take<unsigned>(1);
  if (d_temp == nullptr) return c.bytes();
  launch_early("level1_pass", level1_pass, rows_count, points_threads, 0, stream, layout, k, step, st, rows,
               finished);
  launch_early("super_bin_pass", super_bin_pass, grid_for(G, points_threads), points_threads, 0, stream, layout,
               rows_count, rows, st, super_count, super_before, finished);
  const int slice = level2_slice(layout);
  const std::size_t slice_bytes = (padded_stratum(slice - 1) + 1) * sizeof(std::uint32_t);
  launch_early("level2_pass", level2_pass, G, points_threads, slice_bytes, stream, layout, k, step, st, super_count,
               super_before, P);
  return c.bytes();
}

}  // namespace resample::cuda::detail
