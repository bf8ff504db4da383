// Multinomial resampling (Code 2) on the exact CDF. (Its sorted form is comb.cu's.)
//
//   cdf_pass:   the exact C_i of every particle into temp storage (128 bits each), tiles as in
//               comb.cu.
//   draw_pass:  thread j: v_j uniform in [0, Q) (Lemire, exact) from Philox at (j, step);
//               a^j = the first i with C_i > v_j, by binary search over C (Code 2's inner loop).
// CPU twin: resample::cpu::multinomial_ancestors, hence the same bits.
#include "detail/pipeline.cuh"
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
    draw_pass(const u128* __restrict__ C, std::size_t n, const device_status* st, key k, step_source step, Index* a) {
  const std::size_t j = blockIdx.x * std::size_t{block_threads} + threadIdx.x;
  if (j >= n || st->code != 0) return;
  philox_stream rng(k, j, step.get());
  a[j] = static_cast<Index>(first_above(C, n, uniform_below(rng, st->total)));
}

}  // namespace

template <class T, class Index>
std::size_t multinomial_ancestors(void* d_temp, const T* lw, std::size_t n, key k, step_source step, Index* a,
                                  const int* gate, cudaStream_t stream) {
  const std::size_t tiles = tile_count(n);
  carve c(d_temp);
  auto* st = c.take<device_status>(1);
  auto* sums = c.take<u128>(tiles);
  auto* C = c.take<u128>(n);
  if (d_temp == nullptr) return c.bytes();
  summarise(lw, n, std::numeric_limits<double>::quiet_NaN(), st, sums, nullptr, {}, stream, gate);
  cdf_pass<T><<<static_cast<unsigned>(tiles), block_threads, 0, stream>>>(lw, n, st, sums, C);
  check_launch("cdf_pass");
  draw_pass<Index><<<grid_for(n), block_threads, 0, stream>>>(C, n, st, k, step, a);
  check_launch("draw_pass");
  return c.bytes();
}

#define RESAMPLE_INSTANTIATE(T, Index)                                                                          \
  template std::size_t multinomial_ancestors<T, Index>(void*, const T*, std::size_t, key, step_source, Index*, \
                                                       const int*, cudaStream_t);
RESAMPLE_FOR_EACH_WEIGHT_AND_INDEX(RESAMPLE_INSTANTIATE)
#undef RESAMPLE_INSTANTIATE

}  // namespace resample::cuda::detail
