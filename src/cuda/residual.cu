// Residual and SSP resampling on the exact CDF.
//
//   split_pass:    N q_i = f_i Q + r_i (f_i by exact_comb::floor_ratio), f_i into the offspring
//                  counts, (0, r_i) into the residual prefix array, sum f_i by one atomic per block.
//   residual:      the residual prefix sums r_0 + ... + r_i kept as (quotient, remainder) modulo Q
//                  (they can pass 2^128) by CUB's DeviceScan with that exact, associative addition;
//                  then draw k < R = N - sum f_i: v = (m, w), m ~ U[0, R), w ~ U[0, Q) from Philox
//                  at (k, step), lands on the first prefix above v (binary search), +1 by atomic.
//   ssp:           the pairing is sequential by nature (each step needs the carried fraction): one
//                  thread runs it in index order, exactly as the CPU.
//   then Code 8 from the counts (code8.cuh).
// CPU twins: resample::cpu::residual_ancestors and ssp_ancestors (residual.hpp, ssp.hpp).
#include "detail/code8.cuh"
#include "detail/schemes.hpp"
#include "resample/core/residual_arithmetic.hpp"

namespace resample::cuda::detail {
namespace {

/// The residual prefix sums' addition for CUB's scan (Q from the status).
struct residual_add {
  const device_status* st;
  __device__ residual_prefix operator()(const residual_prefix& a, const residual_prefix& b) const {
    return add_modulo(a, b, st->total);
  }
};

template <class T>
__global__ void __launch_bounds__(block_threads)
    split_pass(const T* __restrict__ lw, std::size_t n, device_status* st, std::uint64_t* counts,
               residual_prefix* prefix) {
  if (st->code != 0) return;
  using reduce = cub::BlockReduce<unsigned long long, block_threads>;
  __shared__ typename reduce::TempStorage tmp;
  const std::size_t i = blockIdx.x * std::size_t{block_threads} + threadIdx.x;
  const u128 Q = st->total;
  unsigned long long f = 0;
  if (i < n) {
    const auto split =
        floor_and_remainder(exact_comb(Q, n), quantised_weight(lw[i], static_cast<T>(st->max_log_w), st->fraction), n, Q);
    f = split.floor;
    counts[i] = f;
    prefix[i] = {0, split.remainder};
  }
  f = reduce(tmp).Sum(f);
  if (threadIdx.x == 0 && f != 0) atomicAdd(&st->floor_sum, f);
}

__global__ void __launch_bounds__(block_threads)
    residual_draw_pass(const residual_prefix* __restrict__ prefix, std::size_t n, const device_status* st, key k,
                       step_source step, std::uint64_t* counts) {
  const std::size_t draw = blockIdx.x * std::size_t{block_threads} + threadIdx.x;
  if (st->code != 0) return;
  const std::uint64_t R = n - st->floor_sum;
  if (draw >= R) return;
  philox_stream rng(k, draw, step.get());
  const std::uint64_t m = uniform_below(rng, R);
  const residual_prefix v{m, uniform_below(rng, st->total)};
  std::size_t lo = 0, hi = n;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (v < prefix[mid]) hi = mid;
    else lo = mid + 1;
  }
  atomicAdd(reinterpret_cast<unsigned long long*>(counts + lo), 1ULL);
}

/// SSP's pairing (resample::ssp_pairing), in one thread; r_i lives in prefix[i].remainder.
__global__ void ssp_pairing_pass(residual_prefix* r, std::size_t n, const device_status* st, key k,
                                 step_source step, std::uint64_t* o) {
  if (st->code != 0) return;
  ssp_pairing([&](std::size_t i) -> u128& { return r[i].remainder; }, [&](std::size_t i) -> std::uint64_t& { return o[i]; },
              n, st->total, k, step.get());
}

}  // namespace

template <class T, class Index>
std::size_t residual_ancestors(void* d_temp, bool ssp, const T* lw, std::size_t n, key k, step_source step,
                               Index* a, const int* gate, cudaStream_t stream) {
  const std::size_t tiles = tile_count(n);
  carve c(d_temp);
  auto* st = c.take<device_status>(1);
  auto* sums = c.take<u128>(tiles);
  auto* counts = c.take<std::uint64_t>(n);
  auto* prefix = c.take<residual_prefix>(n);
  std::size_t prefix_bytes = 0;
  if (!ssp) {
    check(cub::DeviceScan::InclusiveScan(nullptr, prefix_bytes, prefix, prefix, residual_add{st},
                                         static_cast<int64_t>(n)),
          "cub::DeviceScan::InclusiveScan (size)");
  }
  void* prefix_temp = c.take<char>(prefix_bytes);
  const std::size_t counts_bytes = counts_scan_bytes(n);
  void* counts_temp = c.take<char>(counts_bytes);
  if (d_temp == nullptr) return c.bytes();
  summarise(lw, n, std::numeric_limits<double>::quiet_NaN(), st, sums, nullptr, {}, stream, gate);
  split_pass<T><<<grid_for(n), block_threads, 0, stream>>>(lw, n, st, counts, prefix);
  check_launch("split_pass");
  if (ssp) {
    ssp_pairing_pass<<<1, 1, 0, stream>>>(prefix, n, st, k, step, counts);
    check_launch("ssp_pairing_pass");
  } else {
    check(cub::DeviceScan::InclusiveScan(prefix_temp, prefix_bytes, prefix, prefix, residual_add{st},
                                         static_cast<int64_t>(n), stream),
          "cub::DeviceScan::InclusiveScan (residual prefix)");
    residual_draw_pass<<<grid_for(n), block_threads, 0, stream>>>(prefix, n, st, k, step, counts);
    check_launch("residual_draw_pass");
  }
  counts_to_ancestors(counts, n, st, counts_temp, counts_bytes, a, stream);
  return c.bytes();
}

#define RESAMPLE_INSTANTIATE(T, Index)                                                                       \
  template std::size_t residual_ancestors<T, Index>(void*, bool, const T*, std::size_t, key, step_source, \
                                                    Index*, const int*, cudaStream_t);
RESAMPLE_FOR_EACH_WEIGHT_AND_INDEX(RESAMPLE_INSTANTIATE)
#undef RESAMPLE_INSTANTIATE

}  // namespace resample::cuda::detail
