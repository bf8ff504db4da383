// Block-level resampling for user kernels that keep one particle system per thread block (and for
// the batched call). Device code; include from .cu files compiled with nvcc.
//
//   using resampler = resample::cuda::block::resampler<float, std::int32_t, 256>;
//   __shared__ typename resampler::TempStorage tmp;
//   resampler r(tmp);
//   const auto s = r.summarise(lw, n);                 // max, validation, Q: one pass for each
//   if (s.code == resample::cuda::status_code::ok) r.systematic(lw, n, s, key, step, a);
//
// The max and the exact sum Q of the quantised weights come from block reductions over the
// system; then the block walks it in chunks of BlockThreads x Items particles (Items consecutive
// ones per thread): C before each thread's run by a 128-bit block scan carried from chunk to
// chunk, O^i by comb_run, and a^j written from the chunk's O staged in shared memory
// (ancestor_writer). The same per-particle arithmetic as resample::cpu, so a system gets the bits
// of a serial call on it. lw and a are the system's own (global memory). A system of at most
// BlockThreads x Items particles is read once and its weights stay in registers from summarise
// to the comb (one exp per particle); a larger one is read again per chunk. Shared memory: about
// 4 (Items + 1) bytes per thread, plus the staging of a chunk's ancestors (4 bytes per slot) when
// that is at most 16 KiB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include <cub/block/block_reduce.cuh>

#include "resample/core/chains.hpp"
#include "resample/core/comb_run.hpp"
#include "resample/core/exact_cdf.hpp"
#include "resample/core/exact_offspring.hpp"
#include "resample/core/metropolis_rule.hpp"
#include "resample/core/random.hpp"
#include "resample/cuda/block/load_blocked.cuh"
#include "resample/cuda/block/order_key.cuh"
#include "resample/cuda/block/wide_sum.cuh"
#include "resample/cuda/block/write_ancestors.cuh"
#include "resample/cuda/status.hpp"

namespace resample::cuda::block {

/// What summarise found: the verdict (ok, bad_log_weight at `index`, all_weights_zero) and the
/// exact CDF's parameters.
template <class T>
struct summary {
  status_code code;
  std::size_t index;
  T max_log_w;
  int fraction;
  u128 total;
};

/// The summary before Q, from the reductions: ~(the first NaN / +inf's index), 0 for none, and
/// the order key of the max. Shared by the block and warp resamplers.
template <class T>
__device__ summary<T> summary_of(unsigned long long bad, unsigned long long max_key, std::size_t n) {
  summary<T> s{status_code::ok, 0, static_cast<T>(from_order_key(max_key)), fraction_bits(n), 0};
  if (bad != 0) {
    s.code = status_code::bad_log_weight;
    s.index = static_cast<std::size_t>(~bad);
  } else if (s.max_log_w == -std::numeric_limits<T>::infinity()) {
    s.code = status_code::all_weights_zero;
  }
  return s;
}

template <class T, class Index, int BlockThreads, int Items = 4>
class resampler {
  static constexpr int chunk = BlockThreads * Items;
  // A chunk's ancestors are staged in shared memory (ancestor_writer::write_staged: coalesced
  // stores, no per-particle loops) when that costs at most 16 KiB, else written directly.
  static constexpr int stage_capacity = chunk * sizeof(int) <= 16384 ? chunk : 0;
  using writer = ancestor_writer<Items>;
  using wide = wide_sum<BlockThreads>;
  using reduce_u64 = cub::BlockReduce<unsigned long long, BlockThreads>;
  struct max_op {
    __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a > b ? a : b; }
  };

 public:
  struct TempStorage {
    union {
      typename reduce_u64::TempStorage r64;
      typename wide::TempStorage wide;
    } cub;
    std::uint32_t O[chunk];
    alignas(16) int stage[stage_capacity > 0 ? writer::stage_ints(stage_capacity) : 1];
    typename writer::template TempStorage<BlockThreads> write;
    unsigned long long word[2];
  };

  __device__ explicit resampler(TempStorage& tmp) : tmp_(tmp) {
    if (threadIdx.x == 0) tmp_.write.heavy_count = 0;
    __syncthreads();
  }

  /// Validates lw[0, n), finds its max and the exact sum Q. Every thread gets the result. A system
  /// of at most BlockThreads x Items particles is read once: its weights stay in registers for
  /// systematic() and stratified() on the same lw.
  __device__ summary<T> summarise(const T* lw, std::size_t n) {
    constexpr T inf = std::numeric_limits<T>::infinity();
    resident_ = n <= static_cast<std::size_t>(chunk);
    T best = -inf;
    unsigned long long bad = 0;  // ~i of the first NaN / +inf
    for (std::size_t base = 0; base < n; base += chunk) {
      load_blocked(lw, base + threadIdx.x * Items, n, x_);
#pragma unroll
      for (int m = 0; m < Items; ++m) {
        best = max(best, x_[m]);  // ignores NaN; a +inf is caught below (padding is -inf)
        if (!(x_[m] < inf)) bad = max(bad, ~static_cast<unsigned long long>(base + threadIdx.x * Items + m));
      }
    }
    bad = reduce_u64(tmp_.cub.r64).Reduce(bad, max_op{});
    __syncthreads();
    unsigned long long key = reduce_u64(tmp_.cub.r64).Reduce(order_key(static_cast<double>(best)), max_op{});
    if (threadIdx.x == 0) {
      tmp_.word[0] = bad;
      tmp_.word[1] = key;
    }
    __syncthreads();
    bad = tmp_.word[0];
    key = tmp_.word[1];
    __syncthreads();
    summary<T> s = summary_of<T>(bad, key, n);
    if (s.code != status_code::ok) return s;
    u128 sum = 0;
    if (resident_) {
      sum_ = quantised_weights(x_, static_cast<double>(s.max_log_w), s.fraction, w_);
      sum = sum_;
    } else {
      for (std::size_t base = 0; base < n; base += chunk) {
        double w[Items];
        load_blocked(lw, base + threadIdx.x * Items, n, x_);
        sum += quantised_weights(x_, static_cast<double>(s.max_log_w), s.fraction, w);
      }
    }
    s.total = wide::sum(tmp_.cub.wide, sum);
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

  /// Metropolis (proposal uniform) or Megopolis (proposal i + off_b) with B steps.
  __device__ void metropolis(const T* lw, std::size_t n, std::uint64_t steps, bool megopolis, key k, std::uint32_t step,
                             Index* a) {
    const std::uint64_t size = n;
    for (std::size_t i = threadIdx.x; i < n; i += BlockThreads) {
      philox_stream rng(k, i, step);
      a[i] = static_cast<Index>(metropolis_chain(lw, i, steps, rng, [&](std::uint64_t b) {
        return megopolis ? (i + megopolis_offset(k, step, b, size)) % size : uniform_below(rng, size);
      }));
    }
  }

  /// Rejection with the bound exp(log_bound) >= every weight.
  __device__ void rejection(const T* lw, std::size_t n, double log_bound, key k, std::uint32_t step, Index* a) {
    for (std::size_t i = threadIdx.x; i < n; i += BlockThreads) {
      philox_stream rng(k, i, step);
      a[i] = static_cast<Index>(rejection_chain(lw, i, n, log_bound, rng));
    }
  }

 private:
  /// The chunks of Items consecutive particles per thread: C before each thread's run by a block
  /// scan carried from chunk to chunk, O by comb_run, a by the ancestor writer.
  template <class Comb>
  __device__ void comb_walk(const T* lw, std::size_t n, const summary<T>& s, Index* a, Comb comb_fn) {
    const exact_comb comb(s.total, n);
    u128 carry = 0;
    std::uint64_t O_begin = 0;
    for (std::size_t base = 0; base < n; base += chunk) {
      double w[Items];
      u128 sum;
      if (resident_) {
#pragma unroll
        for (int m = 0; m < Items; ++m) w[m] = w_[m];
        sum = sum_;
      } else {
        load_blocked(lw, base + threadIdx.x * Items, n, x_);
        sum = quantised_weights(x_, static_cast<double>(s.max_log_w), s.fraction, w);
      }
      u128 total;
      const u128 before = carry + wide::exclusive(tmp_.cub.wide, sum, total);
      std::uint32_t* O = tmp_.O + threadIdx.x * Items;
      comb_fn(comb_run<Items>(comb, s.fraction, before, w),
              [O](int m, std::uint64_t value) { O[m] = static_cast<std::uint32_t>(value); });
      __syncthreads();
      const int count = static_cast<int>(min(n - base, static_cast<std::size_t>(chunk)));
      if constexpr (stage_capacity > 0) {
        writer::template write_staged<BlockThreads, stage_capacity>(tmp_.write, tmp_.stage, tmp_.O, O_begin, count, base, a);
      } else {
        writer::template write<BlockThreads>(tmp_.write, tmp_.O, O_begin, count, base, a);
      }
      O_begin = tmp_.O[count - 1];
      carry += total;
      __syncthreads();
    }
  }

  TempStorage& tmp_;
  bool resident_ = false;
  T x_[Items];
  double w_[Items];
  u128 sum_ = 0;
};

}  // namespace resample::cuda::block
