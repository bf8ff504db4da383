// Warp-level resampling for user kernels that keep one particle system per warp (and for the
// batched call's small systems). Device code; include from .cu files compiled with nvcc.
//
//   using resampler = resample::cuda::warp::resampler<float, std::int32_t>;
//   __shared__ typename resampler::TempStorage tmp[warps_per_block];
//   resampler r(tmp[threadIdx.x / 32]);
//   const auto s = r.summarise(lw, n);                 // every lane of the warp calls
//   if (s.code == resample::cuda::status_code::ok) r.systematic(lw, n, s, key, step, a);
//
// block::resampler's arithmetic with a warp for the block, so a system gets the bits of a serial
// call on it (resample::cpu): the max and the first NaN / +inf by shuffles, the exact sum Q and each
// chunk's exclusive prefix C by 128-bit warp scans, O^i by comb_run (Code 4 / Code 5), and Code 8
// through the warp's own stage in shared memory. Why a warp: a system of a thousand particles is
// too small to keep a block busy, and a block's barriers (about ten per system) then set the pace;
// a warp needs none, only __syncwarp, and many more systems are in flight per SM.
//
// A chunk is 32 x Items particles, Items consecutive ones per lane. A system of at most
// ResidentChunks chunks keeps its weights in the warp's shared memory from summarise to the comb
// (one exp per particle; in registers they cost 64 of them, and the warps in flight with them),
// and with them the exact C before each lane's run, scanned in summarise (the comb then neither
// quantises nor scans); a larger one computes both again per chunk. Code 8 by
// warp::ancestor_writer (write_ancestors.cuh), in windows of up to 384 offspring and without its
// fills (a system bounds a warp's windows), so a window owned by one particle (a heavy one) costs
// the same as any other. Shared memory per warp: Code 8's stage (1,536 bytes), ResidentChunks x
// chunk doubles and ResidentChunks x 32 C's of 16 bytes (11,776 bytes with the defaults).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "resample/core/comb_run.hpp"
#include "resample/core/exact_cdf.hpp"
#include "resample/core/exact_offspring.hpp"
#include "resample/core/random.hpp"
#include "resample/cuda/block/load_blocked.cuh"
#include "resample/cuda/block/order_key.cuh"
#include "resample/cuda/block/resampler.cuh"
#include "resample/cuda/block/wide_sum.cuh"
#include "resample/cuda/status.hpp"
#include "resample/cuda/warp/write_ancestors.cuh"

namespace resample::cuda::warp {

using block::summary;

namespace detail {
inline constexpr unsigned full_mask = 0xffffffffu;

__device__ inline unsigned long long max_over_warp(unsigned long long x) {
#pragma unroll
  for (int d = 16; d >= 1; d /= 2) x = max(x, __shfl_xor_sync(full_mask, x, d));
  return x;
}
}  // namespace detail

template <class T, class Index, int Items = 8, int ResidentChunks = 4>
class resampler {
 public:
  static constexpr int chunk = 32 * Items;
  /// Systems of at most this many particles keep their weights in TempStorage between summarise
  /// and the comb (one exp per particle).
  static constexpr std::size_t resident_capacity = std::size_t{chunk} * ResidentChunks;

  struct TempStorage {
    typename ancestor_writer<Items>::TempStorage writer;  // Code 8's stage
    double w[ResidentChunks * chunk];  // a resident system's weights, [chunk][item][lane]: no bank conflicts
    ulonglong2 C[ResidentChunks * 32];  // a resident system's exact C before each lane's run, [chunk][lane]
  };

  __device__ explicit resampler(TempStorage& tmp) : tmp_(tmp) {}

  /// Validates lw[0, n) (n < 2^32), finds its max and the exact sum Q. Every lane gets the result.
  __device__ summary<T> summarise(const T* lw, std::size_t n) {
    constexpr T inf = std::numeric_limits<T>::infinity();
    const std::size_t lane = threadIdx.x & 31;
    resident_ = n <= resident_capacity;
    T best = -inf;
    unsigned long long bad = 0;  // ~i of the first NaN / +inf
    for (std::size_t base = 0; base < n; base += chunk) {
      T x[Items];
      block::load_blocked(lw, base + lane * Items, n, x);
#pragma unroll
      for (int m = 0; m < Items; ++m) {
        best = max(best, x[m]);  // ignores NaN; a +inf is caught below (padding is -inf)
        if (!(x[m] < inf)) bad = max(bad, ~static_cast<unsigned long long>(base + lane * Items + m));
      }
    }
    bad = detail::max_over_warp(bad);
    const unsigned long long key = detail::max_over_warp(order_key(static_cast<double>(best)));
    summary<T> s = block::summary_of<T>(bad, key, n);
    if (s.code != status_code::ok) return s;
    if (resident_) {
      // The comb's exact C before each lane's run, by a warp scan per chunk here, where the weights
      // are quantised anyway: the comb then neither quantises nor scans again.
      u128 carry = 0;
      for (std::size_t base = 0, c = 0; base < n; base += chunk, ++c) {
        T x[Items];
        double w[Items];
        block::load_blocked(lw, base + lane * Items, n, x);
        const u128 sum = quantised_weights(x, static_cast<double>(s.max_log_w), s.fraction, w);
#pragma unroll
        for (int m = 0; m < Items; ++m) tmp_.w[(c * Items + m) * 32 + lane] = w[m];
        const u128 before = run_start(sum, carry);
        tmp_.C[c * 32 + lane] = make_ulonglong2(static_cast<unsigned long long>(before),
                                                static_cast<unsigned long long>(before >> 64));
      }
      s.total = carry;
      return s;
    }
    u128 sum = 0;
    for (std::size_t base = 0; base < n; base += chunk) {
      T x[Items];
      double w[Items];
      block::load_blocked(lw, base + lane * Items, n, x);
      sum += quantised_weights(x, static_cast<double>(s.max_log_w), s.fraction, w);
    }
    s.total = block::warp_broadcast(block::warp_inclusive_sum(sum), 31);
    return s;
  }

  /// Systematic (Code 5) resampling fused with Code 8; a[0, n) local indices.
  __device__ void systematic(const T* lw, std::size_t n, const summary<T>& s, key k, std::uint32_t step, Index* a) {
    const std::uint32_t U = philox_stream(k, shared_index, step).next();
    comb_walk(lw, n, s, a, [&](const comb_run<Items>& run, auto emit) { run.systematic(U, emit); });
  }

  /// Stratified (Code 4) resampling fused with Code 8.
  __device__ void stratified(const T* lw, std::size_t n, const summary<T>& s, key k, std::uint32_t step, Index* a) {
    comb_walk(lw, n, s, a, [&](const comb_run<Items>& run, auto emit) { run.stratified(k, step, emit); });
  }

 private:
  /// The exact C before this lane's run of a chunk, from each lane's run sum; `carry` is the C
  /// before the chunk and moves past it.
  __device__ static u128 run_start(u128 sum, u128& carry) {
    const u128 inclusive = block::warp_inclusive_sum(sum);
    const u128 before = carry + inclusive - sum;
    carry += block::warp_broadcast(inclusive, 31);
    return before;
  }

  /// Chunk by chunk: C before each lane's run (kept by summarise for a resident system, else
  /// run_start's scan carried from chunk to chunk), O by comb_run, a by ancestor_writer.
  template <class Comb>
  __device__ void comb_walk(const T* lw, std::size_t n, const summary<T>& s, Index* a, Comb comb_fn) {
    const int lane = static_cast<int>(threadIdx.x & 31);
    const exact_comb comb(s.total, n);
    u128 carry = 0;
    std::uint32_t O_begin = 0;
    int c = 0;
    for (std::size_t base = 0; base < n; base += chunk, ++c) {
      double w[Items];
      u128 before;
      if (resident_) {
#pragma unroll
        for (int m = 0; m < Items; ++m) w[m] = tmp_.w[(c * Items + m) * 32 + lane];
        const ulonglong2 C = tmp_.C[c * 32 + lane];
        before = (static_cast<u128>(C.y) << 64) | C.x;
      } else {
        T x[Items];
        block::load_blocked(lw, base + lane * Items, n, x);
        before = run_start(quantised_weights(x, static_cast<double>(s.max_log_w), s.fraction, w), carry);
      }
      std::uint32_t O[Items];
      comb_fn(comb_run<Items>(comb, s.fraction, before, w),
              [&O](int m, std::uint64_t value) { O[m] = static_cast<std::uint32_t>(value); });
      std::uint32_t start = __shfl_up_sync(detail::full_mask, O[Items - 1], 1);  // O before this lane's run
      if (lane == 0) start = O_begin;
      const std::uint32_t O_end = __shfl_sync(detail::full_mask, O[Items - 1], 31);
      ancestor_writer<Items>::write(tmp_.writer, O, start, O_begin, O_end, base, a);
      O_begin = O_end;
    }
  }

  TempStorage& tmp_;
  bool resident_ = false;
};

}  // namespace resample::cuda::warp
