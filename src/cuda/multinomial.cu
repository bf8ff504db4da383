// Multinomial resampling (Code 2) on the exact CDF, and its sorted form.
//
//   cdf_pass:   the exact C_i of every particle into temp storage (128 bits each), tiles as in
//               comb.cu.
//   draw_pass:  thread j: v_j uniform in [0, Q) (Lemire, exact) from Philox at (j, step);
//               a^j = the first i with C_i > v_j, by binary search over C (Code 2's inner loop).
//               Sorted form: o^i counted with 64-bit atomics instead, then Code 8 (code8.cuh).
// CPU twins: resample::cpu::multinomial_ancestors and multinomial_sorted_ancestors (the draw of
// multinomial, counted and laid out in index order), hence the same bits.
#include "detail/code8.cuh"
#include "detail/schemes.hpp"

namespace resample::cuda::detail {
namespace {

template <class T>
__global__ void __launch_bounds__(block_threads)
    cdf_pass(const T* __restrict__ lw, std::size_t n, const device_status* st, const u128* offsets, u128* C) {
  if (st->code != 0) return;
  __shared__ typename tile_prefix<T>::TempStorage tmp;
  const std::size_t begin = blockIdx.x * std::size_t{tile_items};
  const int fraction = st->fraction;
  double w[items_per_thread];
  u128 c = tile_prefix<T>::run(tmp, lw, n, begin, st->max_log_w, fraction, offsets[blockIdx.x], w);
#pragma unroll
  for (int m = 0; m < items_per_thread; ++m) {
    const std::size_t i = begin + threadIdx.x * items_per_thread + m;
    c += quantise(w[m], fraction);
    if (i < n) C[i] = c;
  }
}

__device__ inline std::size_t first_above(const u128* C, std::size_t n, u128 v) {
  std::size_t lo = 0, hi = n;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (C[mid] > v) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

template <class Index>
__global__ void __launch_bounds__(block_threads)
    draw_pass(const u128* __restrict__ C, std::size_t n, const device_status* st, key k, step_source step, Index* a,
              std::uint64_t* counts) {
  const std::size_t j = blockIdx.x * std::size_t{block_threads} + threadIdx.x;
  if (j >= n || st->code != 0) return;
  philox_stream rng(k, j, step.get());
  const std::size_t i = first_above(C, n, uniform_below(rng, st->total));
  if (counts) atomicAdd(reinterpret_cast<unsigned long long*>(counts + i), 1ULL);
  else a[j] = static_cast<Index>(i);
}

}  // namespace

template <class T, class Index>
std::size_t multinomial_ancestors(void* d_temp, bool sorted, const T* lw, std::size_t n, key k, step_source step,
                                  Index* a, const int* gate, cudaStream_t stream) {
  const std::size_t tiles = tile_count(n);
  carve c(d_temp);
  auto* st = c.take<device_status>(1);
  auto* sums = c.take<u128>(tiles);
  auto* C = c.take<u128>(n);
  std::uint64_t* counts = sorted ? c.take<std::uint64_t>(n) : nullptr;
  const std::size_t scan_bytes = sorted ? counts_scan_bytes(n) : 0;
  void* scan_temp = c.take<char>(scan_bytes);
  if (d_temp == nullptr) return c.bytes();
  summarise(lw, n, std::numeric_limits<double>::quiet_NaN(), st, sums, nullptr, {}, stream, gate);
  cdf_pass<T><<<static_cast<unsigned>(tiles), block_threads, 0, stream>>>(lw, n, st, sums, C);
  check_launch("cdf_pass");
  if (sorted) check(cudaMemsetAsync(counts, 0, n * sizeof(std::uint64_t), stream), "cudaMemsetAsync (offspring)");
  draw_pass<Index><<<grid_for(n), block_threads, 0, stream>>>(C, n, st, k, step, a, counts);
  check_launch("draw_pass");
  if (sorted) counts_to_ancestors(counts, n, st, scan_temp, scan_bytes, a, stream);
  return c.bytes();
}

#define RESAMPLE_INSTANTIATE(T, Index)                                                                          \
  template std::size_t multinomial_ancestors<T, Index>(void*, bool, const T*, std::size_t, key, step_source, \
                                                       Index*, const int*, cudaStream_t);
RESAMPLE_FOR_EACH_WEIGHT_AND_INDEX(RESAMPLE_INSTANTIATE)
#undef RESAMPLE_INSTANTIATE

}  // namespace resample::cuda::detail
