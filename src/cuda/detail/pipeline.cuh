// The passes every log-weight operation of the CUDA backend starts with, and the pieces its
// kernels share. CPU twin: resample::cpu::summarise (weight_summary.hpp).
//
//   max_pass     max_i lw_i, the first NaN / +inf and the first log-weight above a rejection bound,
//                grid-stride, one atomic per block on order-preserving keys (max and min are exact,
//                so any order gives the CPU's answer).
//   tile_pass    Q_t = sum of q_i over tile t (2048 particles), q_i the exact CDF's quantised weight
//                (of the fast weights with options::fast_exp, fast_exp.cuh);
//                tiles run last-to-first, so the first blocks find in L2 what max_pass read last.
//                With options::device_max_log_weight there is no max_pass: open_call takes the max
//                from the option, and tile_pass checks it (check_given_max).
//   finish_pass  one block: the verdict (CPU order: bad value, all zero, bound), the exclusive
//                prefix of the Q_t in place (the tile offsets C_{begin-1}), Q, and what a scheme
//                derives from them (Metropolis' B, log-sum-exp, ESS).
//
// Later kernels return at once when the verdict is bad, so nothing is written.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include <cub/block/block_reduce.cuh>

#include "resample/core/exact_cdf.hpp"
#include "resample/core/exact_offspring.hpp"
#include "resample/core/metropolis_rule.hpp"
#include "resample/core/options.hpp"
#include "resample/core/random.hpp"
#include "resample/core/validate.hpp"
#include "resample/cuda/block/load_blocked.cuh"
#include "resample/cuda/block/order_key.cuh"
#include "resample/cuda/block/wide_sum.cuh"
#include "resample/cuda/block/write_ancestors.cuh"
#include "resample/cuda/error.hpp"
#include "resample/cuda/status.hpp"
#include "resample/cuda/warp/write_ancestors.cuh"
#include "device_facts.hpp"
#include "fast_exp.cuh"
#include "temp_storage.hpp"

namespace resample::cuda::detail {

inline constexpr int block_threads = 256;
inline constexpr int items_per_thread = 8;
inline constexpr int tile_items = block_threads * items_per_thread;
inline constexpr int warps_per_tile = block_threads / 32;
inline constexpr int finish_threads = 1024;
inline constexpr int finish_items = 8;

inline std::size_t tile_count(std::size_t n) { return (n + tile_items - 1) / tile_items; }
inline unsigned grid_for(std::size_t threads, unsigned block = block_threads) {
  return static_cast<unsigned>((threads + block - 1) / block);
}

// Programmatic dependent launch (Hopper): a kernel enqueued by launch_early may start before the
// kernel ahead of it in the stream has finished, once every block of that one has let it
// (let_next_kernel_launch, or its exit). It may read its inputs that the call's kernels do not
// write (the log-weights) at once, and must wait_for_previous_kernel before anything else: that
// waits for the previous kernel to finish and its writes to be visible, and so, as each kernel of
// the chain waits likewise, for every kernel before it. Without launch_early both are no-ops.
__device__ inline void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ inline void let_next_kernel_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// Enqueues kernel<<<grid, block, shared, stream>>>(args...), allowed to start early (above)
/// where the device has programmatic dependent launch and the kernel was compiled with the waits
/// (compiled_for_sm90). A stream being captured records a programmatic edge, in a conditional
/// node's body too (the particle filter's tick): each call's chain still begins with a plain
/// launch (open_call, or a one-kernel path's kernel) or a memset, so that what wrote the
/// log-weights has finished before any of its kernels starts. Since session 38; plain edges
/// before it: a graph call at 2^16 took 19.0 us, now 16.3 (H200).
template <class... Params, class... Args>
void launch_early(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared,
                  cudaStream_t stream, Args... args) {
  cudaLaunchAttribute early{};
  early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared;
  config.stream = stream;
  if (programmatic_launch_supported() && compiled_for_sm90(kernel)) {
    config.attrs = &early;
    config.numAttrs = 1;
  }
  const cudaError_t launched = cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...);
  if (launched != cudaSuccess) (void)cudaGetLastError();  // not left for the next call's check_launch
  check(launched, std::string("launch of ").append(name).c_str());
}

/// The max pass found a NaN / +inf, or every weight is zero.
__device__ inline bool summary_failed(unsigned long long first_bad, unsigned long long max_key) {
  return first_bad != 0 || max_key <= order_key(-std::numeric_limits<double>::infinity());
}
__device__ inline bool summary_failed(const device_status& st) { return summary_failed(st.first_bad, st.max_key); }

struct max_u64 {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a > b ? a : b; }
};

/// Records index i as a candidate for "first offending index" (~i under atomicMax).
__device__ inline void flag_first(unsigned long long* slot, std::size_t i) { atomicMax(slot, ~static_cast<unsigned long long>(i)); }

// ---------------------------------------------------------------------------------------------
/// The max pass's shape: 16-byte vectors, max_vectors of them in flight per thread, and one wave
/// of blocks (max_blocks_per_sm per multiprocessor) striding over the array.
inline constexpr int max_vectors = 4;
inline constexpr int max_blocks_per_sm = 8;


/// max_i lw_i, and the first NaN / +inf and the first log-weight above `bound` (NaN: none).
/// A warp's loads are 32 consecutive 16-byte vectors (the order of a max does not matter; max and
/// the comparisons are exact), max_vectors of them in flight per thread. The loop does two
/// instructions per log-weight: the max in T, and x <= limit folded into one flag, where limit =
/// min(bound rounded down to T, the largest finite T) fails exactly for NaN, +inf and x > bound
/// (for T = float: x > bound <=> x > bound rounded down to float, as x is a float). A block whose
/// flag fell (bad input only) reads its share again to find the first offending indices.
template <class T>
__global__ void __launch_bounds__(block_threads)
    max_pass(const T* __restrict__ lw, std::size_t n, double bound, device_status* st) {
  wait_for_previous_kernel();  // open_call's status
  let_next_kernel_launch();  // one wave: tile_pass's blocks may take what this one leaves
  if (st->code != 0) return;  // a closed gate (open_call)
  using vector = std::conditional_t<sizeof(T) == 4, float4, double2>;
  constexpr int per_vector = 16 / sizeof(T);
  constexpr T inf = std::numeric_limits<T>::infinity();
  T limit;
  if constexpr (sizeof(T) == 4) {
    limit = fminf(__double2float_rd(bound), std::numeric_limits<float>::max());  // NaN bound: no bound
  } else {
    limit = fmin(bound, std::numeric_limits<double>::max());
  }
  // Scalars before the first 16-byte boundary and after the last whole vector, by block 0.
  const std::size_t head =
      min(n, ((16 - (reinterpret_cast<std::uintptr_t>(lw) & 15)) & 15) / sizeof(T));
  const auto* v = reinterpret_cast<const vector*>(lw + head);
  const std::size_t vectors = (n - head) / per_vector;
  const std::size_t tail = head + vectors * per_vector;
  const std::size_t stride = std::size_t{gridDim.x} * block_threads;
  const std::size_t start = blockIdx.x * std::size_t{block_threads} + threadIdx.x;
  const auto scalar_at = [&](int j) -> std::size_t {  // block 0's j-th scalar, or n
    if (blockIdx.x != 0) return n;
    if (j < static_cast<int>(head)) return static_cast<std::size_t>(j);
    return tail + (j - head) < n ? tail + (j - head) : n;
  };
  T best = -inf;
  bool ok = true;
  const auto take = [&](T x) {
    best = max(best, x);  // ignores NaN
    ok = ok && x <= limit;
  };
  const auto take_vector = [&](const vector& a) {
    if constexpr (sizeof(T) == 4) {
      take(a.x), take(a.y), take(a.z), take(a.w);
    } else {
      take(a.x), take(a.y);
    }
  };
  std::size_t i = start;
  for (; i + (max_vectors - 1) * stride < vectors; i += max_vectors * stride) {
    vector a[max_vectors];
#pragma unroll
    for (int j = 0; j < max_vectors; ++j) a[j] = __ldg(v + i + j * stride);
#pragma unroll
    for (int j = 0; j < max_vectors; ++j) take_vector(a[j]);
  }
  for (; i < vectors; i += stride) take_vector(__ldg(v + i));
  if (threadIdx.x < 2 * per_vector) {
    const std::size_t j = scalar_at(static_cast<int>(threadIdx.x));
    if (j < n) take(lw[j]);
  }
  using reduce = cub::BlockReduce<unsigned long long, block_threads>;
  __shared__ typename reduce::TempStorage tmp;
  const unsigned long long best_key = reduce(tmp).Reduce(order_key(static_cast<double>(best)), max_u64{});
  if (threadIdx.x == 0) atomicMax(&st->max_key, best_key);
  if (!__syncthreads_or(!ok)) return;
  // Bad input in this block's share: its indices, as ~i under max (the first wins).
  unsigned long long bad = 0, above = 0;
  const auto record = [&](T x, std::size_t index) {
    if (!(x < inf)) bad = max(bad, ~static_cast<unsigned long long>(index));
    if (static_cast<double>(x) > bound) above = max(above, ~static_cast<unsigned long long>(index));
  };
  for (i = start; i < vectors; i += stride) {
    const vector a = __ldg(v + i);
    const std::size_t first = head + i * per_vector;
    if constexpr (sizeof(T) == 4) {
      record(a.x, first), record(a.y, first + 1), record(a.z, first + 2), record(a.w, first + 3);
    } else {
      record(a.x, first), record(a.y, first + 1);
    }
  }
  if (threadIdx.x < 2 * per_vector) {
    const std::size_t j = scalar_at(static_cast<int>(threadIdx.x));
    if (j < n) record(lw[j], j);
  }
  bad = reduce(tmp).Reduce(bad, max_u64{});
  __syncthreads();
  above = reduce(tmp).Reduce(above, max_u64{});
  if (threadIdx.x == 0) {
    if (bad) atomicMax(&st->first_bad, bad);
    if (above) atomicMax(&st->first_above, above);
  }
}

/// options::device_max_log_weight's check, on a thread's run of log-weights x (the first at index
/// `first`): the first NaN or +inf as max_pass records it, the first log-weight above the given max
/// (first_above_max), and whether one equals it (max_seen, a warp's atomic). Two comparisons a
/// log-weight: x <= limit, which fails exactly for NaN, +inf and x above the max (limit: the max
/// rounded down to T, at most T's largest finite value; NaN for a NaN max, which every finite
/// log-weight is then above, as comb.cu's one-block path finds), and x == the max where the max is
/// a T.
template <class T>
__device__ void check_given_max(const T (&x)[items_per_thread], std::size_t first, std::size_t n, device_status* st) {
  const double given = st->max_given;
  T limit;
  if constexpr (sizeof(T) == 4) {
    limit = fminf(__double2float_rd(given), std::numeric_limits<float>::max());
  } else {
    limit = fmin(given, std::numeric_limits<double>::max());
  }
  if (!(given == given)) limit = std::numeric_limits<T>::quiet_NaN();  // a NaN max: every log-weight is above it
  const bool representable = static_cast<double>(static_cast<T>(given)) == given;
  bool ok = true, seen = false;
#pragma unroll
  for (int m = 0; m < items_per_thread; ++m) {
    const bool inside = first + m < n;
    ok = ok && (!inside || x[m] <= limit);
    seen = seen || (inside && representable && static_cast<double>(x[m]) == given);
  }
  if (__any_sync(0xffffffffu, seen) && (threadIdx.x & 31) == 0) atomicOr(&st->max_seen, 1u);
  if (ok) return;  // bad input or a wrong max only: this thread's first of each
  bool bad = false, above = false;
  for (int m = 0; m < items_per_thread && first + m < n; ++m) {
    if (!bad && !(x[m] < std::numeric_limits<T>::infinity())) {
      flag_first(&st->first_bad, first + m);
      bad = true;
    } else if (!above && x[m] < std::numeric_limits<T>::infinity() && !(static_cast<double>(x[m]) <= given)) {
      flag_first(&st->first_above_max, first + m);
      above = true;
    }
  }
}

/// Q_t for each tile (and the sum of quantised w^2 when `squares` is given, and each warp's C
/// within its tile, the sum of the tile's warps before it, when `warp_offsets` is given: the exact
/// starts of the comb's estimates, warp_comb.cuh). `Fast`: options::fast_exp's weights
/// (fast_exp.cuh), for the comb's calls only (no squares).
template <class T, bool Fast = false>
__global__ void __launch_bounds__(block_threads)
    tile_pass(const T* __restrict__ lw, std::size_t n, int fraction, device_status* st, u128* sums,
              u128* squares, u128* warp_offsets) {
  using wide = block::wide_sum<block_threads>;
  __shared__ typename wide::TempStorage tmp;
  const std::size_t tile = gridDim.x - 1 - blockIdx.x;
  const std::size_t first = tile * tile_items + threadIdx.x * items_per_thread;
  T x[items_per_thread];
  block::load_blocked(lw, first, n, x);  // before the max is known
  wait_for_previous_kernel();
  let_next_kernel_launch();
  if (st->code != 0) return;  // a closed gate (open_call)
  if (st->max_is_given) {
    check_given_max(x, first, n, st);
    // A warp leaves together when any of its lanes flagged a log-weight (NaN, +inf, above the max):
    // a lane sees its own flags at once and the others may not, and those would go on to the warp
    // sums' shuffles, which need every lane. (Until session 41 each thread decided alone here, on
    // NaN and +inf only; bad input only, either way. A block-wide __syncthreads_or made calls with
    // a given max 1-4 us slower at 2^24, session 41's run 8.)
    if (__any_sync(0xffffffffu, summary_failed(*st) || st->first_above_max != 0)) return;
  } else if (summary_failed(*st)) {
    return;  // bad input: finish_pass says which
  }
  const double max_lw = static_cast<double>(static_cast<T>(from_order_key(st->max_key)));
  double w[items_per_thread];
  u128 sum;
  if constexpr (Fast) {
    sum = quantised_fast_weights(x, max_lw, fraction, w);  // the comb's calls: no squares
  } else {
    sum = quantised_weights_split(x, max_lw, fraction, w);
  }
  if (!Fast && squares) {
    u128 sum_sq = 0;
#pragma unroll
    for (int m = 0; m < items_per_thread; ++m) sum_sq += quantise(w[m] * w[m], fraction);
    sum_sq = wide::sum(tmp, sum_sq);
    if (threadIdx.x == 0) squares[tile] = sum_sq;
  }
  // Each warp's sum by a butterfly; thread 0 adds the eight up (the offsets on the way), where a
  // block scan would have every thread of the block add them.
  sum = block::warp_sum(sum);
  if ((threadIdx.x & 31) == 0) tmp.warp[threadIdx.x >> 5] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    u128 total = 0;
#pragma unroll
    for (int w = 0; w < warps_per_tile; ++w) {
      if (warp_offsets) warp_offsets[tile * warps_per_tile + w] = total;
      total += tmp.warp[w];
    }
    sums[tile] = total;
  }
}

/// What finish_pass derives beyond Q.
struct finish_request {
  bool metropolis = false;                ///< compute B
  double eps = 0.01;                      ///< ... from the eps rule
  bool steps_given = false;               ///< ... unless given:
  unsigned long long fixed_steps = 0;
  bool lse = false;                       ///< log-sum-exp into result
  bool ess = false;                       ///< ESS into result (needs squares)
  double* d_result = nullptr;             ///< where to copy the result too
  double* d_ess = nullptr;                ///< with lse and ess both: where the ESS goes
};

/// A 16-byte load and store of a u128 (the compiler splits u128 accesses into two 8-byte ones).
__device__ inline u128 load_wide(const u128* p) {
  const ulonglong2 v = *reinterpret_cast<const ulonglong2*>(p);
  return (static_cast<u128>(v.y) << 64) | v.x;
}
__device__ inline void store_wide(u128* p, u128 x) {
  *reinterpret_cast<ulonglong2*>(p) = make_ulonglong2(static_cast<unsigned long long>(x),
                                                      static_cast<unsigned long long>(x >> 64));
}

/// One block, whose latency is on every call's path. The tile sums go warp-striped: warp w takes
/// the run of 32 x finish_items tiles from 32 finish_items w (a chunk), lane l its tiles 32 m + l,
/// so that each load and store of a warp is 512 consecutive bytes. (Consecutive tiles per thread
/// put its lanes 128 bytes apart: 32 cache lines per instruction, 40k cycles for 8192 tiles.) A
/// warp scans its rows one shuffle scan each, carrying the rows' totals; one block scan of the warps'
/// totals. Thread 0's loads of the status (the verdict's inputs) go out with the first chunk's.
template <class T>
__global__ void __launch_bounds__(finish_threads)
    finish_pass(const T* lw, std::size_t n, int fraction, double bound, device_status* st, u128* sums,
                u128* squares, std::size_t tiles, finish_request req) {
  using wide = block::wide_sum<finish_threads>;
  __shared__ typename wide::TempStorage tmp;
  __shared__ int verdict;
  constexpr std::size_t chunk = std::size_t{finish_threads} * finish_items;
  const int lane = static_cast<int>(threadIdx.x & 31);
  // tile of row m in the chunk from `base`: base + (threadIdx.x - lane) * finish_items + 32 m + lane
  const std::size_t own = (threadIdx.x - lane) * std::size_t{finish_items} + lane;
  wait_for_previous_kernel();
  let_next_kernel_launch();  // the next kernel (the comb, level 1) may start on the other multiprocessors
  u128 x[finish_items];
  const auto load_chunk = [&](const u128* from, std::size_t base) {
#pragma unroll
    for (int m = 0; m < finish_items; ++m) {
      const std::size_t t = base + own + 32 * m;
      x[m] = t < tiles ? load_wide(from + t) : 0;
    }
  };
  load_chunk(sums, 0);  // tile_pass left nothing to read when the verdict is bad: harmless, unused
  if (threadIdx.x == 0) {
    const int code_in = st->code;
    const unsigned long long first_bad = st->first_bad, first_above = st->first_above, max_key = st->max_key;
    int code = static_cast<int>(status_code::ok);
    if (code_in == static_cast<int>(status_code::skipped)) {
      code = code_in;
    } else if (first_bad != 0) {
      code = static_cast<int>(status_code::bad_log_weight);
      st->index = ~first_bad;
      st->value = static_cast<double>(lw[st->index]);
    } else if (st->max_is_given && (st->first_above_max != 0 || st->max_seen == 0)) {
      // Before the all-zero test, which the given max decides.
      code = static_cast<int>(status_code::max_not_largest);
      st->index = st->first_above_max != 0 ? ~st->first_above_max : n;
      st->value = st->first_above_max != 0 ? static_cast<double>(lw[st->index]) : 0.0;
    } else if (summary_failed(first_bad, max_key)) {  // first_bad is 0 here: all weights zero
      code = static_cast<int>(status_code::all_weights_zero);
    } else if (first_above != 0) {
      code = static_cast<int>(status_code::above_bound);
      st->index = ~first_above;
      st->value = static_cast<double>(lw[st->index]);
    }
    st->code = code;
    st->n = n;
    st->fraction = fraction;
    st->bound = bound;
    st->max_log_w = code == 0 ? static_cast<double>(static_cast<T>(from_order_key(max_key))) : 0.0;
    verdict = code;
  }
  __syncthreads();
  if (verdict != 0) return;
  // Chunk by chunk, the offsets written in place; the chunk's total carries into the next.
  u128 carry = 0;
  for (std::size_t base = 0; base < tiles; base += chunk) {
    if (base != 0) load_chunk(sums, base);
    u128 warp_total = 0;
#pragma unroll
    for (int m = 0; m < finish_items; ++m) {  // x[m] becomes the sum of the warp's tiles before it
      const u128 inclusive = block::warp_inclusive_sum(x[m]);
      const u128 row_total = block::warp_broadcast(inclusive, 31);
      x[m] = warp_total + (inclusive - x[m]);
      warp_total += row_total;
    }
    u128 chunk_total;
    const u128 warps_before = wide::exclusive(tmp, lane == 0 ? warp_total : 0, chunk_total);
    const u128 start = carry + block::warp_broadcast(warps_before, 0);
#pragma unroll
    for (int m = 0; m < finish_items; ++m) {
      const std::size_t t = base + own + 32 * m;
      if (t < tiles) store_wide(sums + t, start + x[m]);
    }
    carry += chunk_total;
  }
  u128 sq = 0;
  if (squares) {
    for (std::size_t base = 0; base < tiles; base += chunk) {
      load_chunk(squares, base);
#pragma unroll
      for (int m = 0; m < finish_items; ++m) sq += x[m];
    }
    sq = wide::sum(tmp, sq);
  }
  if (threadIdx.x == 0) {
    st->total = carry;
    st->squares = sq;
    if (req.metropolis) {
      st->steps = req.steps_given ? req.fixed_steps : metropolis_steps_from_sum(carry, n, fraction, req.eps);
    }
    if (req.lse) st->result = log_sum_exp_of(st->max_log_w, carry, fraction);
    if (req.ess) {
      const double ess = effective_sample_size_of(carry, sq, fraction);
      if (req.lse) {
        if (req.d_ess) *req.d_ess = ess;
      } else {
        st->result = ess;
      }
    }
    if (req.d_result) *req.d_result = st->result;
  }
}

/// A call's opening: the status zeroed and, under a device gate (options::device_gate) that reads
/// 0, marked `skipped`, which every later kernel of the call obeys. A kernel rather than a memset
/// node, so that a call captured in a conditional graph node's body (the particle filter's tick)
/// is all kernels: under compute-sanitizer's racecheck and synccheck a memset node there was
/// not finished when the next kernel read the status (normal runs were right).
/// With options::device_max_log_weight (`given_max`), the max is the option's (as max_pass would
/// have found it; tile_pass checks it). exp_mode: 1 for options::fast_exp (a record: the kernels
/// take the mode as a template argument).
template <class = void>  // a template, so that every file including this header may instantiate it
__global__ void open_call(device_status* st, const int* gate, const double* given_max, std::uint32_t exp_mode) {
  *st = device_status{};
  st->exp_mode = exp_mode;
  if (gate && *gate == 0) {
    st->code = static_cast<int>(status_code::skipped);
  } else if (given_max) {
    const double m = *given_max;
    st->max_is_given = 1;
    st->max_given = m;
    st->max_key = order_key(m == m ? m : std::numeric_limits<double>::infinity());  // NaN: never the max
  }
}

/// Enqueues max_pass, tile_pass and finish_pass: after them, status holds the verdict, Q and F,
/// and `sums[t]` the C before tile t. `squares` (tile count entries, or null) for the ESS;
/// `warp_offsets` (warps_per_tile entries per tile, or null) for warp_comb. `given_max`
/// (options::device_max_log_weight, or null; not with a bound): no max_pass. `fast`:
/// options::fast_exp's weights in the tile sums.
template <class T>
void summarise(const T* lw, std::size_t n, double bound, device_status* st, u128* sums, u128* squares,
               const finish_request& req, cudaStream_t stream, const int* gate = nullptr,
               u128* warp_offsets = nullptr, const double* given_max = nullptr, bool fast = false) {
  if (fast && squares) throw invalid_input("internal: the fast tile pass has no sums of squares");
  const int fraction = fraction_bits(n);
  const std::size_t tiles = tile_count(n);
  open_call<><<<1, 1, 0, stream>>>(st, gate, given_max, fast ? 1u : 0u);
  check_launch("open_call");
  if (!given_max) {
    constexpr std::size_t per_round = std::size_t{block_threads} * max_vectors;  // vectors a block loads at once
    const std::size_t vector_rounds = (n * sizeof(T) / 16 + per_round - 1) / per_round;
    const auto max_blocks = static_cast<unsigned>(std::clamp<std::size_t>(
        vector_rounds, 1, static_cast<std::size_t>(multiprocessor_count()) * max_blocks_per_sm));
    launch_early("max_pass", max_pass<T>, max_blocks, block_threads, 0, stream, lw, n, bound, st);
  }
  launch_early("tile_pass", fast ? tile_pass<T, true> : tile_pass<T, false>, static_cast<unsigned>(tiles),
               block_threads, 0, stream, lw, n, fraction, st, sums, squares, warp_offsets);
  launch_early("finish_pass", finish_pass<T>, 1, finish_threads, 0, stream, lw, n, fraction, bound, st, sums,
               squares, tiles, req);
}

// ---------------------------------------------------------------------------------------------
/// One tile's weights and exact prefix sums: thread t's items are particles begin + t * items ..
/// (blocked). w[m] = the m-th item's weight, and the return value the exact C before the thread's
/// first item (the tile's offset plus the block's exclusive scan). Out-of-range items are zero
/// weights.
template <class T>
struct tile_prefix {
  using wide = block::wide_sum<block_threads>;
  using TempStorage = typename wide::TempStorage;

  __device__ static u128 run(TempStorage& tmp, const T* lw, std::size_t n, std::size_t begin, double max_lw,
                             int fraction, u128 offset, double (&w)[items_per_thread]) {
    T x[items_per_thread];
    block::load_blocked(lw, begin + threadIdx.x * items_per_thread, n, x);
    const u128 sum = quantised_weights(x, max_lw, fraction, w);
    u128 total;
    return offset + wide::exclusive(tmp, sum, total);
  }
};

/// Code 8 for one tile of particles (block/write_ancestors.cuh), 8 entries per thread.
using tile_writer = block::ancestor_writer<items_per_thread>;
/// Code 8 for one warp's 256 particles (warp/write_ancestors.cuh), from registers.
using warp_writer = warp::ancestor_writer<items_per_thread>;

}  // namespace resample::cuda::detail
