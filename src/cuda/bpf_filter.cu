// The particle filter on the GPU: resample::bpf::cuda_filter (include/resample/bpf/cuda_filter.hpp).
// CPU twin: resample::bpf::particle_filter (particle_filter.hpp), whose tick it follows step for
// step. A tick t > 0 is one CUDA graph, captured once per buffer parity and replayed; the tick,
// its observation and the resampler's step are read from device memory; no host wait:
//
//   first_stage         (auxiliary only) fs_i = log ghat(y_t | x_i), v_i = lw_i + fs_i, and each
//                       chunk's summary of v (chunk_statistics.hpp)
//   finish_first_stage  (auxiliary only) one block: log-sum-exp and ESS of v; the ESS test, which
//                       opens the conditional node below iff this tick resamples
//   [cuda::ancestors]   (auxiliary only) conditional body: a = the scheme's draw on v, key (seed),
//                       step t (options::device_step); on ticks that keep their weights none of its
//                       kernels is launched. resampler_node::gated instead launches it every tick
//                       with options::device_gate = the ESS test (no conditional node: for
//                       compute-sanitizer's racecheck and synccheck)
//   gather_propagate    x'_j = propagate(x_{a_j} (+ jitter), or x_j if not resampling), lw'_j =
//                       (0, -fs_{a_j} or lw_j) + log g(y_t | x'_j); then, in the same kernel, the
//                       chunk summary of (lw', x'): max, first NaN / +inf, and the sums of w, w^2,
//                       w d, w d^2, w 1{x <= truth}
//   finish_tick         one block: the resampler's refusal recorded, if any; the summaries combined
//                       (exact: chunk_statistics.hpp's order; fast: combine_fast) -> log-sum-exp,
//                       ESS, mean, sd, PIT, the increment;
//                       bootstrap: the next tick's ESS test, which opens the node below
//   [cuda::ancestors]   (bootstrap) as above, for tick t + 1 on lw', at step t + 1: a bootstrap
//                       graph ends with the next tick's resampler (tick 0, launched without a
//                       graph, ends with it gated), so no kernel of its own opens the node
//
// The fast bootstrap filter with the conditional node runs ticks two to a graph (capture_group): the
// first tick's resampler node beside the second tick's gather_propagate, which returns at once on a
// tick that resamples, the node's body then running the resampler and gather_propagate after it.
// Where the resampler is a comb scheme, the bootstrap filter hands it finish_tick's max
// (options::device_max_log_weight; the PTX backend's above 4096 particles, since session 41).
//
// An exact chunk is a block (run_chunk): 512 threads move its particles, 256 of them then add the
// lanes in the CPU's order, hence the CPU's bits. An exact system of few chunks runs each chunk on a
// cluster of 2, 4 or 8 blocks instead, which share its moves (run_chunk_exact). The kernels take
// the particles' moves as a parameter: exact_moves (the model's own draws and densities, double
// particles: the CPU's bits) or, for filter_precision::fast, the model's fast twin
// (bpf/fast_moves.cuh: float particles, approximate arithmetic), whose draws need no rejection (a
// Philox block per two particles of a thread). A fast block moves its share of the particles, a
// range of 1024-particle row pairs, in spans of 4096 with running sums per thread, which it adds
// across a warp in float and across the warps in double into one summary (run_range_fast): as many
// blocks as the GPU runs at once, so finish_tick reads a few hundred summaries.
// Refusals (a NaN or +inf log-weight, every weight zero, a refused resampler call) are kept with
// their tick, and collect() reports the first in the CPU filter's words. The Philox counters are
// the CPU filter's.
//
// With tick_kernels (cuda_filter.hpp; the PTX backend's, resample/ptx/filter.hpp) the particle
// kernels (initial_weight, first_stage, gather_propagate) and the resampler are that backend's,
// launched in the same places of the same graph; the finishing kernels stay.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>

#include "detail/device_facts.hpp"
#include "detail/pipeline.cuh"
#include "detail/schemes.hpp"
#include "resample/bpf/cuda_filter.hpp"
#include "resample/bpf/fast_moves.cuh"
#include "resample/bpf/linear_gaussian_model.hpp"
#include "resample/bpf/sv_model.hpp"
#include "resample/cuda/block/order_key.cuh"
#include "resample/cuda/error.hpp"
#include "resample/cuda/host.hpp"
#include "resample/cuda/resample.hpp"

namespace resample::bpf {
namespace {

constexpr int lanes = detail::lanes;  // the finishing kernels: a lane per thread
constexpr double inf = std::numeric_limits<double>::infinity();

/// The exact mode's moves: the model's own draws and densities, in double, hence the CPU's bits
/// (fast::sv_moves and fast::linear_gaussian_moves are the fast mode's, in float). `Clustered`: the
/// kernels run a chunk on a cluster of blocks (run_chunk_exact), a variant of its own so that a
/// block per chunk keeps its loops' fixed trip counts (runtime ones cost 6% of the tick at 2^24).
template <class Model, bool Clustered = false>
struct exact_moves {
  using real = double;
  static constexpr bool fast = false;
  static constexpr bool clustered = Clustered;
  Model model;
  key k;
  /// The draw and the move from the particle's accepted polar try, which run_chunk_exact finds
  /// first (in the stream the CPU's initial(s) and propagate(x, s) draw from).
  __device__ double initial(const polar_point& p) const { return model.initial(p); }
  __device__ double propagate(double x, const polar_point& p) const { return model.propagate(x, p); }
  __device__ double log_likelihood(double y, double x) const { return model.log_likelihood(y, x); }
  __device__ double log_first_stage(double y, double x) const { return model.log_first_stage(y, x); }
  __device__ double jitter(double x, double sd, std::uint64_t index, std::uint32_t step) const {
    philox_stream rng(k, index, step);
    return resample::detail::fused(sd, standard_normal(rng), x);
  }
};

/// The filter's device scalars.
struct scalars {
  std::uint32_t tick;      ///< the tick being run (read by every kernel; advanced by finish_tick)
  int resample;            ///< whether this tick resamples (the ESS test, made on the device)
  double lse_equal;        ///< log sum exp of N zeros (detail::log_sum_exp_of_equal)
  double lse_after;        ///< log sum exp of the weights after the latest tick
  double mean;             ///< the latest filtered mean: the shift of the next tick's sums
  double lse_base;         ///< what this tick's second-stage increment is measured from
  double increment_first;  ///< auxiliary: log sum exp(v) - log sum exp(lw)
  double log_likelihood;
  unsigned failed_tick;        ///< the first tick with a refusal, or ~0
  cuda::device_status failed;  ///< that refusal (bad weights, or the resampler's verdict)
  double failed_state;         ///< for a bad log-weight: the particle's state, for the message
  double max_log_weight;       ///< the latest tick's largest log-weight: the resampler's max (at_tick)
};

/// Per-tick inputs and outputs, on the device.
struct tick_io {
  const double* y;
  const double* truth;  ///< null, or NaN where a tick has none
  double* increment;
  double* mean;
  double* sd;
  double* ess;
  double* pit;
  int* resampled;
};

using cuda::host::device_vector;
using detail::chunk_summary;
using detail::moments;

__device__ inline void record(scalars* s, const cuda::device_status& st, double state) {
  if (s->failed_tick != ~0u) return;
  s->failed_tick = s->tick;
  s->failed = st;
  s->failed_state = state;
}

/// Keeps a library call's refusal (its verdict `st`).
__device__ inline void record_call(scalars* s, const cuda::device_status* st) {
  if (st->code != 0) record(s, *st, 0.0);
}

/// Keeps the filter's refusal of a tick's weights: a NaN / +inf at `t.first_bad`, or all zero.
template <class Real>
__device__ void record_weights(scalars* s, const detail::tick_statistics& t, const Real* lw, const Real* x) {
  cuda::device_status st{};
  if (t.first_bad != detail::no_index) {
    st.code = static_cast<int>(cuda::status_code::bad_log_weight);
    st.index = t.first_bad;
    st.value = lw[t.first_bad];
    record(s, st, x[t.first_bad]);
  } else {
    st.code = static_cast<int>(cuda::status_code::all_weights_zero);
    record(s, st, 0.0);
  }
}

/// The ESS test for the coming tick, and what its increment is measured from.
__device__ inline void decide(scalars* s, double ess, double lse, double threshold, std::size_t n) {
  const bool resample = s->failed_tick == ~0u && (threshold >= 1.0 || ess < threshold * static_cast<double>(n));
  s->resample = resample;
  s->lse_base = resample ? s->lse_equal : lse;
}

/// The block's max of `my_max` and min of `my_bad` (a first offending index), in every thread.
template <int BlockThreads>
__device__ void block_max_and_first_bad(double& my_max, unsigned long long& my_bad) {
  using reduce_max = cub::BlockReduce<double, BlockThreads>;
  using reduce_min = cub::BlockReduce<unsigned long long, BlockThreads>;
  __shared__ union {
    typename reduce_max::TempStorage max;
    typename reduce_min::TempStorage min;
  } tmp;
  __shared__ double max_s;
  __shared__ unsigned long long bad_s;
  const double m = reduce_max(tmp.max).Reduce(my_max, [](double a, double b) { return a > b ? a : b; });
  __syncthreads();
  const unsigned long long bad =
      reduce_min(tmp.min).Reduce(my_bad, [](unsigned long long a, unsigned long long b) { return a < b ? a : b; });
  if (threadIdx.x == 0) {
    max_s = m;
    bad_s = bad;
  }
  __syncthreads();
  my_max = max_s;
  my_bad = bad_s;
}

/// The lanes' halving tree of chunk_statistics.hpp (tree_sum) in shared memory; every thread of
/// the block calls, the first `lanes` with their lane's sums. The total, in thread 0.
__device__ moments lane_total(const moments& mine) {
  __shared__ moments lane[lanes];
  if (threadIdx.x < lanes) lane[threadIdx.x] = mine;
  for (int h = lanes / 2; h >= 1; h /= 2) {
    __syncthreads();
    if (threadIdx.x < h) lane[threadIdx.x] = lane[threadIdx.x] + lane[threadIdx.x + h];
  }
  return lane[0];  // thread 0 wrote it last
}

/// A particle kernel's block: `chunk_threads` threads move 4096 particles at a time (an exact chunk,
/// or a fast span), `per_thread` each (thread t: particles t, t + 512, ...: coalesced), so that
/// small systems still fill much of the GPU, with two blocks per SM (exact; three in fast mode) so
/// that one's barriers overlap another's work; then the summary: its max and first NaN / +inf by a
/// block reduction, then its sums.
/// A particle's move is `load(i)`, what particle i moves from, then `step(i, in, drawn, state)`,
/// which moves it, writes it (state and log-weight) out, sets `state` and returns its log-weight
/// (run_chunk); `drawn` is what its draw comes from, which run_chunk defines for both precisions:
/// the accepted polar try of its stream (exact, found first: below) or a disk point (fast,
/// fast::draws_of).
constexpr int chunk_threads = 512;
constexpr int per_thread = static_cast<int>(detail::chunk) / chunk_threads;
static_assert(detail::chunk % chunk_threads == 0 && chunk_threads >= lanes);

template <class Moves>
constexpr int chunk_blocks_per_sm = Moves::fast ? 3 : 2;

/// What a particle's move starts from: its state and the log-weight it carries in (run_chunk).
template <class Real>
struct particle_in {
  Real x, w;
};

/// Where a chunk's moves draw: no draws (the first stage), or at `step`: exact, particle i from
/// the stream (propagation_index + i, step), as the CPU's initial(s) / propagate(x, s); fast, from
/// the Philox block of those streams that fast::draws_of gives it (fast_span).
struct chunk_draws {
  bool any = false;
  std::uint32_t step = 0;
};

/// The dynamic shared memory of an exact chunk that draws: the accepted tries' w (32 KiB).
constexpr std::size_t drawn_w_bytes = detail::chunk * sizeof(double);
/// A fast span loads its particles for load_rounds rounds at a time (all eight at its start: 118 us
/// a tick at 2^24 where four took 121, session 37), and draws for draw_rounds (two rounds a Philox
/// block; two blocks at a time spilled 56 bytes beside the eight rounds' loads).
constexpr int load_rounds = per_thread;
constexpr int draw_rounds = 2;
static_assert(per_thread % load_rounds == 0 && per_thread % draw_rounds == 0 && draw_rounds % 2 == 0);

/// Where an exact chunk's block stands: chunk `chunk` is run by a cluster of `blocks` blocks (1, 2, 4
/// or 8, which divide the 8 rows: impl::exact_cluster picks no other), and this block, `rank` in it,
/// moves rows [rank rows, (rank + 1) rows) of the chunk (row k: particles 512 k .. 512 k + 511).
struct chunk_part {
  unsigned chunk = 0, rank = 0, blocks = 1;
  [[nodiscard]] __device__ int rows() const { return per_thread / static_cast<int>(blocks); }
};

template <bool Clustered>
__device__ inline chunk_part this_part() {
  if constexpr (Clustered) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const unsigned blocks = cooperative_groups::this_cluster().num_blocks();
    return {blockIdx.x / blocks, blockIdx.x % blocks, blocks};
#else
    __trap();  // no clusters before sm_90: impl::exact_cluster never launches this code there
#endif
  }
  return {blockIdx.x, 0, 1};
}

/// Every block of the cluster waits; its shared-memory and global stores before are visible to the
/// cluster's blocks after (barrier.cluster's release and acquire).
__device__ inline void cluster_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cooperative_groups::this_cluster().sync();
#endif
}

/// `p` (this block's shared memory) at the same offset in block `rank` of the cluster.
template <class T>
__device__ inline T* in_block(T* p, unsigned rank) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return cooperative_groups::this_cluster().map_shared_rank(p, rank);
#else
  return p;
#endif
}

/// The exact sums (chunk_statistics.hpp, the CPU's order and bits): the log-weights staged in shared
/// memory (32 KiB) and turned into w = exp(lw - m_c) there, and the 256 lanes' sums read from there
/// and from the states in L2 (written by this block, or its cluster, before a barrier), added by the
/// lanes' tree (10 KiB).
///
/// The draws come first: a thread finds the accepted polar tries of all its particles in one loop,
/// a try per turn, moving to its next particle's stream at each acceptance, so that a warp runs for
/// the most tries any lane needs for its eight particles together (about 14), where drawing inside
/// each move it ran for the most any lane needed for each particle (about 3.1, 25 for eight). The
/// same tries of the same streams: the same bits. u is kept in the particle's slot of the staging
/// array (read back before its log-weight overwrites it), w in dynamic shared memory.
///
/// Few chunks (N up to 2^19 on 132 multiprocessors) would leave most of the GPU idle, each chunk's
/// 693 instructions per particle on one multiprocessor (the exact tick took 30-33 us from 2^12 to
/// 2^18), so a chunk is then moved by a cluster of 2, 4 or 8 blocks (impl::exact_cluster), each
/// block its share of the rows. The chunk's max and first NaN / +inf are combined across the
/// cluster through distributed shared memory; each block stores its w into rank 0's stage, and rank
/// 0 alone adds the lanes, as one block does: the same particles, the same order, the same bits.
template <bool Clustered, class Moves, class Move>
__device__ void run_chunk_exact(const Moves& moves, std::size_t n, const double* x, double shift, double truth,
                                chunk_draws draws, chunk_summary* chunks, const Move& move) {
  __shared__ double w_s[detail::chunk];
  __shared__ double part_max;
  __shared__ unsigned long long part_bad;
  extern __shared__ double drawn_w[];  // drawn_w_bytes where draws.any
  const chunk_part part = this_part<Clustered>();
  const int rows = Clustered ? part.rows() : per_thread;
  const int first_row = Clustered ? static_cast<int>(part.rank) * rows : 0;
  const std::size_t begin = std::size_t{part.chunk} * detail::chunk;
  const std::size_t count = min(n - begin, detail::chunk);
  if (draws.any) {
    // this thread's rows with a particle: first_row <= k < end
    const int end = min(static_cast<int>((count + chunk_threads - 1 - threadIdx.x) / chunk_threads), first_row + rows);
    int k = first_row;
    philox_stream s(moves.k, detail::propagation_index + begin + threadIdx.x + std::size_t{chunk_threads} * k,
                    draws.step);
    while (k < end) {
      polar_point p;
      if (polar_try_once(s, p)) {
        const int local = static_cast<int>(threadIdx.x) + chunk_threads * k;
        w_s[local] = p.u;
        drawn_w[local] = p.w;
        ++k;
        s = philox_stream(moves.k, detail::propagation_index + begin + local + chunk_threads, draws.step);
      }
    }
  }
  double my_max = -inf;
  unsigned long long my_bad = detail::no_index;
  for (int k = first_row; k < first_row + rows; ++k) {
    const std::size_t local = threadIdx.x + std::size_t{chunk_threads} * k;
    double lw = -inf;
    if (local < count) {
      double state;
      const polar_point drawn = draws.any ? polar_point{w_s[local], drawn_w[local]} : polar_point{};
      lw = move(begin + local, state, drawn);
      if (!(lw < inf)) my_bad = min(my_bad, static_cast<unsigned long long>(begin + local));
      else if (lw > my_max) my_max = lw;
    }
    w_s[local] = lw;
  }
  block_max_and_first_bad<chunk_threads>(my_max, my_bad);  // now the block's
  if constexpr (Clustered) {  // the chunk's, combined in rank order by every block alike (a zero's sign)
    if (threadIdx.x == 0) {
      part_max = my_max;
      part_bad = my_bad;
    }
    cluster_sync();
    my_max = -inf;
    my_bad = detail::no_index;
    for (unsigned r = 0; r < part.blocks; ++r) {
      const double m = *in_block(&part_max, r);
      my_max = m > my_max ? m : my_max;
      my_bad = min(my_bad, *in_block(&part_bad, r));
    }
  }
  const bool summed = my_bad == detail::no_index && my_max > -inf;
  // Into rank 0's stage (a block's shared memory is another's to write once the block has started,
  // which the cluster_sync above ensures).
  double* const stage = Clustered ? in_block(w_s, 0) : w_s;
  for (int k = first_row; k < first_row + rows; ++k) {
    const int local = static_cast<int>(threadIdx.x) + chunk_threads * k;
    stage[local] = summed ? deterministic_exp_nonpositive(w_s[local] - my_max) : 0.0;
  }
  if constexpr (Clustered) {
    cluster_sync();  // rank 0's stage complete; the cluster's states visible to it (read from L2)
    if (part.rank != 0) return;
  } else {
    __syncthreads();  // also makes this block's states visible to its other threads
  }
  moments sums{};
  for (std::size_t local = threadIdx.x; threadIdx.x < lanes && local < count; local += lanes) {
    const double w = w_s[local];
    if (w > 0.0) {
      const double xi = Clustered ? __ldcg(x + begin + local) : x[begin + local];
      detail::add_particle(sums, w, xi - shift, xi <= truth);
    }
  }
  const moments total = lane_total(sums);
  if (threadIdx.x == 0) chunks[part.chunk] = chunk_summary{my_max, my_bad, total};
}

/// The max of a warp's values, in every lane: one instruction (redux.sync) from sm_80 on.
__device__ inline unsigned warp_max_of(unsigned v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return __reduce_max_sync(~0u, v);
#else
  for (int offset = 16; offset >= 1; offset /= 2) v = max(v, __shfl_xor_sync(~0u, v, offset));
  return v;
#endif
}

/// max(a, b), NaN if either is (max.NaN, from sm_80 on): a thread's max of its log-weights that also
/// tells whether a NaN or +inf was among them, one instruction a particle (a flag kept beside a
/// fmaxf took four).
__device__ inline float max_or_nan(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float m;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(m) : "f"(a), "f"(b));
  return m;
#else
  return a != a || b != b ? __int_as_float(0x7fffffff) : fmaxf(a, b);
#endif
}

/// A fast block's max log-weight, in every thread: a warp's by warp_max_of on cuda::order_key, then
/// the warps' by warp 0; and whether any thread saw a NaN / +inf, on the way.
__device__ inline float chunk_max_fast(float mine, bool bad, bool& any_bad) {
  __shared__ unsigned warp_max[chunk_threads / 32];
  __shared__ unsigned chunk_max;
  const unsigned k = warp_max_of(cuda::order_key(mine));
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = k;
  any_bad = __syncthreads_or(bad);
  if (threadIdx.x < 32) {
    const unsigned m = warp_max_of(threadIdx.x < chunk_threads / 32 ? warp_max[threadIdx.x] : 0u);
    if (threadIdx.x == 0) chunk_max = m;
  }
  __syncthreads();
  return cuda::from_order_key(chunk_max);
}

/// The sums of the lanes [l - l mod 2 Widest, + 2 Widest) of a warp, in each of them: a butterfly,
/// each of the five on its own (a fast block's warps' sums, the fast finish's lanes).
template <int Widest>
__device__ inline moments lanes_sum(moments s) {
#pragma unroll
  for (int offset = Widest; offset >= 1; offset /= 2) {
    s.w += __shfl_xor_sync(~0u, s.w, offset);
    s.w2 += __shfl_xor_sync(~0u, s.w2, offset);
    s.wd += __shfl_xor_sync(~0u, s.wd, offset);
    s.wdd += __shfl_xor_sync(~0u, s.wdd, offset);
    s.below += __shfl_xor_sync(~0u, s.below, offset);
  }
  return s;
}

/// A fast block's sums, in thread 0: each warp's by a butterfly in float (each lane's sums are
/// float already), then the warps' in double by warp 0.
__device__ inline moments chunk_sums_fast(float w, float w2, float wd, float wdd, float below) {
  __shared__ double warp_sums[chunk_threads / 32][5];
  float v[5] = {w, w2, wd, wdd, below};
#pragma unroll
  for (int offset = 16; offset >= 1; offset /= 2) {
#pragma unroll
    for (int j = 0; j < 5; ++j) v[j] += __shfl_xor_sync(~0u, v[j], offset);
  }
  if (threadIdx.x % 32 == 0) {
#pragma unroll
    for (int j = 0; j < 5; ++j) warp_sums[threadIdx.x / 32][j] = v[j];
  }
  __syncthreads();
  moments t{};
  if (threadIdx.x < 32) {
    if (threadIdx.x < chunk_threads / 32) {
      const double* mine = warp_sums[threadIdx.x];
      t = moments{mine[0], mine[1], mine[2], mine[3], mine[4]};
    }
    t = lanes_sum<chunk_threads / 64>(t);
  }
  return t;
}

/// A fast thread's running sums: the max m of its log-weights so far and, relative to it, the sums of
/// w = exp(lw - m), w^2, w d, w d^2 and w 1{x <= truth} (d = x - shift), in float. They stay in
/// shared memory between a block's spans (a thread's own column: no barrier), as do the shift and
/// the true state: in registers across the spans' rounds they made the kernel spill 272 bytes.
struct fast_sums {
  float m, w, w2, wd, wdd, below;

  /// The sums rescaled by f = exp(m - to) (f^2 for w^2): relative to `to` >= m.
  __device__ void rescale(float to) {
    const float f = fast::ex2((m - to) * fast::log2e);  // m = -inf: 0
    w *= f;
    w2 *= f * f;
    wd *= f;
    wdd *= f;
    below *= f;
    m = to;
  }
};
/// What a fast block keeps in shared memory between its spans: each thread's sums (a column of
/// each), the sums' centre and true state, and the block's first NaN / +inf (atomicMin; bad input only).
struct fast_block_state {
  float m[chunk_threads], w[chunk_threads], w2[chunk_threads], wd[chunk_threads], wdd[chunk_threads],
      below[chunk_threads];
  float centre, truth;
  unsigned long long first_bad;
  __device__ fast_sums load() const {
    const unsigned t = threadIdx.x;
    return {m[t], w[t], w2[t], wd[t], wdd[t], below[t]};
  }
  __device__ void store(const fast_sums& s) {
    const unsigned t = threadIdx.x;
    m[t] = s.m;
    w[t] = s.w;
    w2[t] = s.w2;
    wd[t] = s.wd;
    wdd[t] = s.wdd;
    below[t] = s.below;
  }
};

/// The one fast_block_state of a kernel (a __shared__ variable of a template would be one per
/// instantiation: the gather kernel's two, for ticks that resampled and ticks that did not).
__device__ inline fast_block_state& block_state() {
  __shared__ fast_block_state b;
  return b;
}

/// A fast block's part of the particles: row pairs [r_b, r_{b+1}) of R = ceil(N / 1024), r_b =
/// floor(b R / G) for G blocks, G = min(ceil(R / 4), the blocks the GPU runs at once, or
/// filter_options::fast_blocks) (impl's summary_count): a span's worth a block where N is small
/// (blocks of one row pair made the tick at 2^18 2 us slower), else every block at once. A row pair
/// (1024 particles, 1024-aligned) is the unit because its two rows share their Philox blocks
/// (fast::draws_of): the draws do not depend on G. The blocks' shares differ by at most one row
/// pair, so that they end together (4096-particle chunks, a block each, left the last of 10.3 waves
/// a third full at 2^24).
constexpr unsigned row_pair = 2 * chunk_threads;
struct particle_range {
  unsigned begin, end;
};
__device__ inline particle_range this_block_range(unsigned n) {
  const unsigned pairs = (n + row_pair - 1) / row_pair;
  const auto first = static_cast<unsigned>(std::uint64_t{blockIdx.x} * pairs / gridDim.x);
  const auto last = static_cast<unsigned>((std::uint64_t{blockIdx.x} + 1) * pairs / gridDim.x);
  return {first * row_pair, min(n, last * row_pair)};
}

/// Up to 4096 particles of a fast block's range from `begin` (`count` of them; thread t: particles
/// begin + t, + 512, ...: coalesced), moved and added to the thread's running sums. Each thread
/// keeps its particles (state, log-weight) in registers and adds their w = ex2((lw - m) log2 e) (0
/// for -inf), m its running max; no staging, no second read of the states, no barrier.
/// The draws: rounds k and k + 1 (k even) of a thread share a Philox block (fast::draws_of, at the
/// round-k particle's stream), drawn after the rounds' loads went out, so that the Philox work
/// hides their latency (waiting on them was the kernel's first stall: 135.6 -> 125.6 us at 2^24 on
/// an H100, session 20).
/// `Full`: all 4096 particles are there (every span of a block but its last may be), so no round
/// tests whether its particle exists (a branch and its reconvergence, about 4 instructions a particle).
template <bool Full, class Moves, class Load, class Step>
__device__ void fast_span(const Moves& moves, unsigned begin, unsigned count, chunk_draws draws, fast_block_state& b,
                          const Load& load, const Step& step) {
  constexpr float infinity = std::numeric_limits<float>::infinity();
  float x[per_thread], lw[per_thread];
  fast::draw_pair pair[draw_rounds / 2];
  float my_max = -infinity;  // NaN or +inf once a log-weight is: max_or_nan
#pragma unroll
  for (int k = 0; k < per_thread; ++k) {
    const unsigned local = threadIdx.x + chunk_threads * k;
    if (k % load_rounds == 0) {  // the next load_rounds rounds' loads, in flight during the draws
#pragma unroll
      for (int r = k; r < k + load_rounds; ++r) {
        const unsigned ahead = threadIdx.x + chunk_threads * r;
        x[r] = 0.0f;
        lw[r] = -infinity;
        if (Full || ahead < count) {
          const particle_in<float> in = load(begin + ahead);
          x[r] = in.x;
          lw[r] = in.w;
        }
      }
    }
    if (k % draw_rounds == 0 && draws.any) {
#pragma unroll
      for (int p = 0; p < draw_rounds / 2; ++p) {
        const unsigned first = begin + threadIdx.x + chunk_threads * (k + 2 * p);  // round k + 2p's particle
        pair[p] = fast::draws_of(moves.keys, detail::propagation_index + first, draws.step);
      }
    }
    const fast::draw_pair& mine = pair[(k % draw_rounds) / 2];
    const fast::disk_point drawn = draws.any ? (k % 2 == 0 ? mine.first : mine.second) : fast::disk_point{};
    if (Full || local < count) {
      lw[k] = step(begin + local, particle_in<float>{x[k], lw[k]}, drawn, x[k]);
      my_max = max_or_nan(my_max, lw[k]);
    }
  }
  if (!(my_max < infinity)) {  // bad input only: the thread's first (it moves its particles in order)
    for (int k = 0; k < per_thread; ++k) {
      if (!(lw[k] < infinity)) {
        atomicMin(&b.first_bad, std::uint64_t{begin} + threadIdx.x + chunk_threads * k);
        break;
      }
    }
    b.m[threadIdx.x] = std::numeric_limits<float>::quiet_NaN();  // no more sums: the tick is refused
    return;
  }
  if (!(my_max > -infinity)) return;  // nothing to add, or a NaN already
  fast_sums sums = b.load();
  if (!(sums.m == sums.m)) return;
  if (my_max > sums.m) sums.rescale(my_max);
  const float centre = b.centre, truth = b.truth;
  // The PIT's sum only where there is a true state. (w as one fma, lw log2 e - m log2 e, was tried:
  // m log2 e rounded to float puts half its ulp into every exponent, wrong weights from |m| ~ 1e7.)
  const auto add = [&](auto has_truth) {
#pragma unroll
    for (int k = 0; k < per_thread; ++k) {
      const float w = fast::ex2((lw[k] - sums.m) * fast::log2e);  // -inf: 0
      const float d = x[k] - centre;
      sums.w += w;
      sums.w2 = __fmaf_rn(w, w, sums.w2);
      sums.wd = __fmaf_rn(w, d, sums.wd);
      sums.wdd = __fmaf_rn(w * d, d, sums.wdd);
      if constexpr (decltype(has_truth)::value) sums.below += x[k] <= truth ? w : 0.0f;
    }
  };
  if (truth == truth) {
    add(std::true_type{});
  } else {
    add(std::false_type{});
  }
  b.store(sums);
}

/// A fast block: its range (this_block_range) in spans of 4096, then its summary, out[blockIdx.x]:
/// the block's max M and first NaN / +inf by a block reduction, each thread's sums rescaled to M,
/// added across a warp in float and across the warps in double (chunk_sums_fast). Not the exact
/// mode's order or bits (fast mode's statistics are tested statistically); the grid's size (the
/// GPU's multiprocessors) sets the order of the float sums, so their rounding differs between GPUs.
template <class Moves, class Load, class Step>
__device__ void run_range_fast(const Moves& moves, unsigned n, double shift, double truth, chunk_draws draws,
                               chunk_summary* out, const Load& load, const Step& step) {
  constexpr float infinity = std::numeric_limits<float>::infinity();
  fast_block_state& b = block_state();
  b.store(fast_sums{-infinity, 0, 0, 0, 0, 0});
  if (threadIdx.x == 0) {
    b.centre = static_cast<float>(shift);
    b.truth = static_cast<float>(truth);
    b.first_bad = detail::no_index;
  }
  __syncthreads();
  const particle_range range = this_block_range(n);
  for (unsigned begin = range.begin; begin < range.end; begin += detail::chunk) {
    const unsigned count = min(range.end - begin, static_cast<unsigned>(detail::chunk));
    if (count == detail::chunk) {
      fast_span<true>(moves, begin, count, draws, b, load, step);
    } else {
      fast_span<false>(moves, begin, count, draws, b, load, step);
    }
  }
  fast_sums sums = b.load();
  bool any_bad = false;
  const float m = chunk_max_fast(sums.m == sums.m ? sums.m : -infinity, !(sums.m == sums.m), any_bad);
  // chunk_max_fast's barriers made the atomicMins visible
  const unsigned long long first_bad = any_bad ? b.first_bad : detail::no_index;
  if (!any_bad && m > -infinity) sums.rescale(m);
  const moments total = chunk_sums_fast(sums.w, sums.w2, sums.wd, sums.wdd, sums.below);
  if (threadIdx.x == 0) out[blockIdx.x] = chunk_summary{static_cast<double>(m), first_bad, total};
}

/// A chunk of either precision: exact, chunk blockIdx.x (or its cluster's); fast, the block's range.
/// A particle's move comes in two parts: `load(j)` reads what particle j moves from (a particle_in),
/// and `step(j, in, drawn, state)` moves it, writes it out, sets `state` and returns its log-weight.
/// The exact chunk runs them back to back; the fast one issues its rounds' loads before their Philox
/// blocks, whose work then hides their latency.
template <class Moves, class Load, class Step>
__device__ void run_chunk(const Moves& moves, std::size_t n, const typename Moves::real* x, double shift, double truth,
                          chunk_draws draws, chunk_summary* chunks, const Load& load, const Step& step) {
  if constexpr (Moves::fast) {
    run_range_fast(moves, static_cast<unsigned>(n), shift, truth, draws, chunks, load, step);
  } else {
    const auto move = [&](std::size_t j, double& state, const polar_point& drawn) {
      return step(j, load(j), drawn, state);
    };
    run_chunk_exact<Moves::clustered>(moves, n, x, shift, truth, draws, chunks, move);
  }
}

/// c[j] = chunks[first + lanes j] for those below `count`: a finishing thread's batch of summaries,
/// all its loads in flight at once.
template <int Batch>
__device__ inline void load_summaries(const chunk_summary* chunks, std::size_t first, std::size_t count,
                                      chunk_summary (&c)[Batch]) {
#pragma unroll
  for (int j = 0; j < Batch; ++j) {
    if (first + std::size_t{lanes} * j < count) c[j] = chunks[first + std::size_t{lanes} * j];
  }
}

/// The tick's statistics from every chunk's summary, in combine_chunks' order, in one block. One
/// block is bound by the latency of its loads, so a thread loads 16 of its chunks' maxima, or 8 of
/// their summaries, before it uses any (one chunk at a time, finish_tick took 14 us at 2^24: 2 x 16
/// round trips to L2); each lane still adds its chunks in order.
__device__ detail::tick_statistics combine_chunks(const chunk_summary* chunks, std::size_t count, double shift,
                                                  bool has_truth) {
  constexpr int batch = 8, max_batch = 16;
  double M = -inf;
  unsigned long long bad = detail::no_index;
  for (std::size_t first = threadIdx.x; first < count; first += std::size_t{max_batch} * lanes) {
    double m[max_batch];
    unsigned long long b[max_batch];
#pragma unroll
    for (int j = 0; j < max_batch; ++j) {
      const std::size_t c = first + std::size_t{lanes} * j;
      m[j] = c < count ? chunks[c].max : -inf;
      b[j] = c < count ? chunks[c].first_bad : detail::no_index;
    }
#pragma unroll
    for (int j = 0; j < max_batch; ++j) {
      M = m[j] > M ? m[j] : M;
      bad = min(bad, b[j]);
    }
  }
  block_max_and_first_bad<lanes>(M, bad);
  detail::tick_statistics t;
  t.first_bad = bad;
  t.all_zero = t.first_bad == detail::no_index && M == -inf;
  if (t.first_bad != detail::no_index || t.all_zero) return t;
  moments acc{};
  for (std::size_t first = threadIdx.x; first < count; first += std::size_t{batch} * lanes) {
    chunk_summary c[batch];
    load_summaries(chunks, first, count, c);
#pragma unroll
    for (int j = 0; j < batch; ++j) {
      if (first + std::size_t{lanes} * j < count && c[j].max > -inf) {
        detail::add_chunk(acc, c[j].sums, deterministic_exp_nonpositive(c[j].max - M));
      }
    }
  }
  const moments total = lane_total(acc);
  if (threadIdx.x == 0) detail::finish_statistics(t, M, total, shift, has_truth);
  return t;  // complete in thread 0 only
}

/// Sums relative to a max m as relative to M >= m: times e = exp(m - M), w^2's times e^2.
__device__ inline moments rescaled(const moments& s, double e) {
  return {s.w * e, s.w2 * (e * e), s.wd * e, s.wdd * e, s.below * e};
}

/// Fast mode's statistics from its blocks' summaries (a few hundred: one per block the GPU runs at
/// once) in one pass: each thread adds its summaries rescaled to their running max (a rare second
/// exp where a later one is larger), then the block's max and first NaN / +inf by shuffles and one
/// barrier, each thread's sums rescaled to the max, and their total by shuffles and one barrier.
/// (combine_chunks, two passes with CUB's reductions and a tree of eight barriers, keeps the CPU's
/// order for exact mode.) Not the CPU's order: fast mode's statistics are tested statistically.
__device__ detail::tick_statistics combine_fast(const chunk_summary* chunks, std::size_t count, double shift,
                                                bool has_truth) {
  constexpr int batch = 2, warps = lanes / 32;
  __shared__ double warp_max[warps];
  __shared__ unsigned long long warp_bad[warps];
  __shared__ moments warp_sum[warps];
  double m = -inf;
  unsigned long long bad = detail::no_index;
  moments acc{};
  for (std::size_t first = threadIdx.x; first < count; first += std::size_t{batch} * lanes) {
    chunk_summary c[batch];
    load_summaries(chunks, first, count, c);
#pragma unroll
    for (int j = 0; j < batch; ++j) {
      if (first + std::size_t{lanes} * j < count) {
        bad = min(bad, static_cast<unsigned long long>(c[j].first_bad));
        if (c[j].max > m) {
          const double e = m > -inf ? deterministic_exp_nonpositive(m - c[j].max) : 0.0;
          acc = rescaled(acc, e);
          m = c[j].max;
        }
        if (c[j].max > -inf) detail::add_chunk(acc, c[j].sums, deterministic_exp_nonpositive(c[j].max - m));
      }
    }
  }
  double M = m;
  unsigned long long first_bad = bad;
  for (int offset = 16; offset >= 1; offset /= 2) {
    const double other = __shfl_xor_sync(~0u, M, offset);
    M = other > M ? other : M;
    first_bad = min(first_bad, __shfl_xor_sync(~0u, first_bad, offset));
  }
  if (threadIdx.x % 32 == 0) {
    warp_max[threadIdx.x / 32] = M;
    warp_bad[threadIdx.x / 32] = first_bad;
  }
  __syncthreads();
#pragma unroll
  for (int w = 0; w < warps; ++w) {
    M = warp_max[w] > M ? warp_max[w] : M;
    first_bad = min(first_bad, warp_bad[w]);
  }
  detail::tick_statistics t;
  t.first_bad = first_bad;
  t.all_zero = t.first_bad == detail::no_index && M == -inf;
  if (t.first_bad != detail::no_index || t.all_zero) return t;
  const double e = m > -inf ? deterministic_exp_nonpositive(m - M) : 0.0;
  acc = lanes_sum<16>(rescaled(acc, e));
  if (threadIdx.x % 32 == 0) warp_sum[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    moments total{};
    for (int w = 0; w < warps; ++w) total = total + warp_sum[w];
    detail::finish_statistics(t, M, total, shift, has_truth);
  }
  return t;  // complete in thread 0 only
}

/// The tick's statistics from the particle kernels' summaries, as the precision combines them.
template <class Real>
__device__ detail::tick_statistics combine(const chunk_summary* chunks, std::size_t count, double shift,
                                           bool has_truth) {
  if constexpr (std::is_same_v<Real, float>) {
    return combine_fast(chunks, count, shift, has_truth);
  } else {
    return combine_chunks(chunks, count, shift, has_truth);
  }
}

__device__ inline double truth_at(const tick_io& io, std::uint32_t t) {
  return io.truth ? io.truth[t] : std::numeric_limits<double>::quiet_NaN();
}

template <class Moves, class Real = typename Moves::real>
__global__ void __launch_bounds__(chunk_threads, chunk_blocks_per_sm<Moves>)
    initial_weight(Moves moves, std::size_t n, tick_io io, Real* x, Real* lw, chunk_summary* chunks) {
  const auto y = static_cast<Real>(io.y[0]);
  const chunk_draws draws{true, 0};
  const auto nothing = [](auto) { return particle_in<Real>{}; };
  run_chunk(moves, n, x, 0.0, truth_at(io, 0), draws, chunks, nothing,
            [&](auto i, particle_in<Real>, auto drawn, Real& state) {
              state = moves.initial(drawn);
              x[i] = state;
              return lw[i] = moves.log_likelihood(y, state);
            });
}

template <class Moves, class Real = typename Moves::real>
__global__ void __launch_bounds__(chunk_threads, chunk_blocks_per_sm<Moves>)
    first_stage(Moves moves, std::size_t n, const scalars* s, tick_io io, const Real* x, const Real* lw, Real* fs,
                Real* v, chunk_summary* chunks) {
  const auto y = static_cast<Real>(io.y[s->tick]);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  run_chunk(
      moves, n, x, 0.0, nan, chunk_draws{}, chunks, [&](auto i) { return particle_in<Real>{x[i], lw[i]}; },
      [&](auto i, particle_in<Real> in, auto, Real& state) {
        state = in.x;
        const Real f = moves.log_first_stage(y, state);
        fs[i] = f;
        return v[i] = in.w + f;
      });
}

/// Opens the conditional resampler node `next` that follows a finishing kernel in its tick graph iff
/// the ESS test that kernel made says so (a kernel of its own did it before). `Opens` is false outside
/// a graph (the first tick) and where the resampler is gated: Nsight Compute does not profile a
/// graph's kernels that can set a conditional handle, so those kernels lack the call.
template <bool Opens>
__device__ inline void open_resampler(cudaGraphConditionalHandle next, const scalars* s) {
  if constexpr (Opens) cudaGraphSetConditional(next, s->resample ? 1u : 0u);
}

/// Auxiliary: the first stage's log-sum-exp and the ESS test on it, which opens the resampler.
template <class Real, bool Opens>
__global__ void __launch_bounds__(lanes) finish_first_stage(const chunk_summary* chunks, std::size_t count,
                                                              const Real* x, const Real* v, double threshold,
                                                              std::size_t n, scalars* s,
                                                              cudaGraphConditionalHandle next) {
  const double lse_after = s->lse_after;  // read before the chunks, as finish_tick's scalars
  const auto t = combine<Real>(chunks, count, 0.0, false);
  if (threadIdx.x != 0) return;
  if (t.first_bad != detail::no_index || t.all_zero) {
    record_weights(s, t, v, x);
    s->resample = 0;
  } else {
    s->increment_first = t.log_sum_exp - lse_after;
    decide(s, t.ess, t.log_sum_exp, threshold, n);
  }
  open_resampler<Opens>(next, s);
}

/// `Jitters`: whether the kernel has the jitter's code. A fast filter without jitter launches the
/// kernel without it: the compiler loads the jitter's Philox round keys into uniform registers in
/// every round of a chunk, hoisted out of their branch (13 instructions per particle).
template <class Moves, bool Jitters = true, class Real = typename Moves::real>
__global__ void __launch_bounds__(chunk_threads, chunk_blocks_per_sm<Moves>)
    gather_propagate(Moves moves, std::size_t n, double jitter, bool auxiliary, bool beside_resampler, tick_io io,
                     const std::int32_t* ancestors, const cuda::device_status* st, const Real* x, const Real* lw,
                     const Real* fs, Real* x_out, Real* lw_out, scalars* s, chunk_summary* chunks) {
  cuda::detail::let_next_kernel_launch();  // finish_tick, launched early, waits for this kernel's end
  // Beside the conditional resampler node (capture_group): on a tick that resamples, that node's body
  // moves the particles after the resampler, and this launch writes nothing.
  if (beside_resampler && s->resample) return;
  const std::uint32_t tick = s->tick;
  const auto y = static_cast<Real>(io.y[tick]);
  // `st`: the resampler's verdict. A refusal (a rejection bound below a weight) wrote no ancestors:
  // the particles move on unresampled, finish_tick records it, and collect() reports it.
  const bool resampled = s->resample && st->code == 0;
  const chunk_draws draws{true, tick};
  // What a particle moves from, for a tick that resampled or not; j: unsigned in fast mode
  // (fast_span), std::size_t in exact mode.
  const auto load = [&](auto resampled_tick) {
    return [&](auto j) {
      if constexpr (decltype(resampled_tick)::value) {
        const auto a = static_cast<decltype(j)>(ancestors[j]);
        return particle_in<Real>{x[a], auxiliary ? -fs[a] : Real{0}};
      } else {
        return particle_in<Real>{x[j], lw[j]};
      }
    };
  };
  const auto step = [&](auto resampled_tick) {
    return [&](auto j, particle_in<Real> in, auto drawn, Real& state) {
      state = in.x;
      if constexpr (Jitters && decltype(resampled_tick)::value) {
        if (jitter > 0.0) state = moves.jitter(state, jitter, detail::jitter_index + j, tick);
      }
      state = moves.propagate(state, drawn);
      x_out[j] = state;
      return lw_out[j] = in.w + moves.log_likelihood(y, state);
    };
  };
  const double mean = s->mean, truth = truth_at(io, tick);
  if constexpr (Moves::fast) {  // a chunk for each case: no test of `resampled` in every round
    if (resampled) {
      run_chunk(moves, n, x_out, mean, truth, draws, chunks, load(std::true_type{}), step(std::true_type{}));
    } else {
      run_chunk(moves, n, x_out, mean, truth, draws, chunks, load(std::false_type{}), step(std::false_type{}));
    }
  } else {
    run_chunk(
        moves, n, x_out, mean, truth, draws, chunks,
        [&](std::size_t j) { return resampled ? load(std::true_type{})(j) : load(std::false_type{})(j); },
        [&](std::size_t j, particle_in<Real> in, const polar_point& drawn, Real& state) {
          return resampled ? step(std::true_type{})(j, in, drawn, state) : step(std::false_type{})(j, in, drawn, state);
        });
  }
}

/// One block: the resampler's refusal, if any (`st`: its verdict; gather_propagate moved the
/// particles on unresampled); the tick's statistics, its outputs and increment; bootstrap: the next
/// tick's ESS test, which opens the next tick's resampler (`next`, the node after this kernel).
/// Then the tick counter moves on.
template <class Real, bool Opens>
__global__ void __launch_bounds__(lanes) finish_tick(const chunk_summary* chunks, std::size_t count, const Real* x,
                                                       const Real* lw, double threshold, std::size_t n,
                                                       bool auxiliary, tick_io io, const cuda::device_status* st,
                                                       scalars* s, cudaGraphConditionalHandle next) {
  // One kernel on one SM is a chain of latencies: the scalars are read once, up front, and nothing
  // is written before the chunks are read (a store to `s` kept the chunks' loads behind it).
  // Launched early after the particle kernel (capture_tick), it reads the scalars and the true
  // state before it waits for that kernel's end: the particle kernel, a plain launch, only reads
  // them, and every kernel that writes them (the previous finish_tick; auxiliary,
  // finish_first_stage) finished before it started (launch_chunks); the true states are the
  // host's. The summaries and the resampler's verdict after the wait.
  const scalars before = *s;
  const std::uint32_t tick = before.tick;
  const bool first = tick == 0;
  const bool has_truth = io.truth != nullptr && io.truth[tick] == io.truth[tick];
  cuda::detail::wait_for_previous_kernel();
  const auto t = combine<Real>(chunks, count, first ? 0.0 : before.mean, has_truth);
  if (threadIdx.x != 0) return;
  if (!first && before.resample) record_call(s, st);
  io.resampled[tick] = first ? 0 : before.resample;
  if (t.first_bad != detail::no_index || t.all_zero) {
    record_weights(s, t, lw, x);
    s->resample = 0;
  } else {
    // Summed in the CPU filter's order: first stage, then (after - base).
    const double increment = (first || !auxiliary ? 0.0 : before.increment_first) +
                             (t.log_sum_exp - (first ? before.lse_equal : before.lse_base));
    io.increment[tick] = increment;
    io.mean[tick] = t.mean;
    io.sd[tick] = t.sd;
    io.ess[tick] = t.ess;
    io.pit[tick] = t.pit;
    s->log_likelihood = before.log_likelihood + increment;
    s->lse_after = t.log_sum_exp;
    s->max_log_weight = t.max;
    s->mean = t.mean;
    if (!auxiliary) decide(s, t.ess, t.log_sum_exp, threshold, n);
  }
  s->tick = tick + 1;
  open_resampler<Opens>(next, s);
}

/// A captured tick, instantiated; destroyed with its owner.
class tick_graph {
 public:
  tick_graph() = default;
  tick_graph(const tick_graph&) = delete;
  tick_graph& operator=(const tick_graph&) = delete;
  ~tick_graph() { reset(); }
  void reset() {
    if (exec_) (void)cudaGraphExecDestroy(exec_);
    exec_ = nullptr;
  }
  [[nodiscard]] bool ready() const { return exec_ != nullptr; }
  /// Records what `enqueue(stream)` launches on `stream` (which must not be the legacy default
  /// stream) and instantiates it.
  template <class F>
  void capture(cudaStream_t stream, const F& enqueue) {
    reset();
    cudaGraph_t graph = nullptr;
    cuda::check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture (bpf)");
    try {
      enqueue(stream);
    } catch (...) {
      (void)cudaStreamEndCapture(stream, &graph);
      if (graph) (void)cudaGraphDestroy(graph);
      throw;
    }
    cuda::check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture (bpf)");
    const cudaError_t e = cudaGraphInstantiate(&exec_, graph, 0);
    (void)cudaGraphDestroy(graph);
    cuda::check(e, "cudaGraphInstantiate (bpf)");
  }
  void launch(cudaStream_t stream) const { cuda::check(cudaGraphLaunch(exec_, stream), "cudaGraphLaunch (bpf)"); }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace

template <class Model>
struct cuda_filter<Model>::impl {
  Model model;
  filter_options opt;
  cudaStream_t stream;
  resampler_node skip;  ///< how a tick that keeps its weights skips the resampler
  std::shared_ptr<tick_kernels> kernels;  ///< null: the CUDA C kernels below
  /// kernels' slots: the first tick's, then (for parity p) the first stage's and the gather's
  static constexpr int initial_slot = 0, first_stage_slot = 1, gather_slot = 3;
  cudaStream_t capture_stream = nullptr;  ///< private: the legacy default stream cannot be captured
  cudaStream_t body_stream = nullptr;     ///< private: captures the resampler's conditional body
  key k;
  std::size_t n = 0, chunk_count = 0;
  /// The particle kernels' blocks that write a summary each: exact, a chunk's (chunk_count); fast,
  /// every block, a range of row pairs each (this_block_range): min(ceil(R / 4), as many as the GPU
  /// runs at once) for R row pairs.
  std::size_t summary_count = 0;
  unsigned cluster = 1;  ///< blocks per chunk of the particle kernels (exact_cluster())
  std::size_t temp_bytes = 0;
  std::size_t ticks = 0, capacity = 0;
  bool truth_given = false;
  /// The particles' buffers, of double (exact) or float (fast) entries: see with_moves.
  device_vector<unsigned char> x_a, lw_a, x_next_a, lw_next_a, fs_a, v_a;
  device_vector<double> y_a, truth_a;
  device_vector<std::int32_t> ancestors_a;
  device_vector<chunk_summary> chunks_a;
  device_vector<scalars> s_a;
  device_vector<unsigned char> temp_a;
  device_vector<double> increment_a, mean_a, sd_a, ess_a, pit_a;
  device_vector<int> resampled_a;
  scalars* s = nullptr;
  /// Ticks t > 0: graph[t % 2] (the two graphs differ in which buffers hold the particles).
  tick_graph graph[2];
  /// Ticks t > 0 in groups where groups_ticks(): group_graph[t % 2] runs ticks t .. t + group_size -
  /// 1. Two: groups of 4 and 8 made the fast tick at 2^24 slower than groups of 2 (an H200, session
  /// 39: 110.2-111.4 and 111.8-113.7 us against 109.1-111.2).
  static constexpr int group_size = 2;
  tick_graph group_graph[2];

  impl(const Model& m, const filter_options& o, cudaStream_t st, resampler_node rn, std::shared_ptr<tick_kernels> tk)
      : model(m), opt(o), stream(st), skip(resolved(rn, o, tk != nullptr)), kernels(std::move(tk)) {
    detail::check_filter_options(o);
    if (o.particles > 0x7fffffffu) throw invalid_input("the cuda filter supports at most 2^31 - 1 particles");
    if (is_fast() && kernels) {
      throw invalid_input("precision 'fast' runs the cuda backend's own kernels (the ptx backend's are exact only)");
    }
    n = o.particles;
    chunk_count = (n + detail::chunk - 1) / detail::chunk;
    k = {static_cast<std::uint32_t>(o.seed), static_cast<std::uint32_t>(o.seed >> 32)};
    if (!kernels && !is_fast()) {  // the exact drawing kernels' static and dynamic shared memory exceed 48 KiB
      cluster = exact_cluster();
      with_moves([](auto moves) {
        using Moves = decltype(moves);
        for (const void* f : {reinterpret_cast<const void*>(&initial_weight<Moves>),
                              reinterpret_cast<const void*>(&gather_propagate<Moves, true>),
                              reinterpret_cast<const void*>(&gather_propagate<Moves, !Moves::fast>)}) {
          cuda::check(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(drawn_bytes(moves))),
                      "cudaFuncSetAttribute (bpf)");
        }
      });
    }
    // Sizes first: a bad scheme option throws here, before anything is allocated.
    if (is_fast()) {
      resampler_call(nullptr, temp_bytes, static_cast<const float*>(nullptr), nullptr, o.resampling, stream);
    } else {
      resampler_call(nullptr, temp_bytes, static_cast<const double*>(nullptr), nullptr, o.resampling, stream);
    }
    const std::size_t bytes = n * (is_fast() ? sizeof(float) : sizeof(double));
    x_a = device_vector<unsigned char>(bytes);
    lw_a = device_vector<unsigned char>(bytes);
    x_next_a = device_vector<unsigned char>(bytes);
    lw_next_a = device_vector<unsigned char>(bytes);
    const bool auxiliary = o.kind == filter_kind::auxiliary;
    fs_a = device_vector<unsigned char>(auxiliary ? bytes : 0);  // the first stage's buffers
    v_a = device_vector<unsigned char>(auxiliary ? bytes : 0);
    ancestors_a = device_vector<std::int32_t>(n);
    summary_count = chunk_count;
    if (is_fast()) {
      const std::size_t row_pairs = (n + row_pair - 1) / row_pair;
      const auto resident = static_cast<std::size_t>(cuda::detail::multiprocessor_count()) *
                            static_cast<std::size_t>(chunk_blocks_per_sm<decltype(fast::moves_for(model, k))>);
      summary_count = std::min((row_pairs + 3) / 4, o.fast_blocks ? o.fast_blocks : resident);
    }
    chunks_a = device_vector<chunk_summary>(summary_count);
    s_a = device_vector<scalars>(1);
    temp_a = device_vector<unsigned char>(temp_bytes);
    s = s_a.data();
    scalars init{};
    init.lse_equal = detail::log_sum_exp_of_equal(n);
    init.failed_tick = ~0u;
    // In stream order (a pageable source is staged before the call returns).
    cuda::check(cudaMemcpyAsync(s, &init, sizeof init, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (bpf)");
    cuda::check(cudaStreamCreateWithFlags(&capture_stream, cudaStreamNonBlocking), "cudaStreamCreate (bpf)");
    cuda::check(cudaStreamCreateWithFlags(&body_stream, cudaStreamNonBlocking), "cudaStreamCreate (bpf)");
  }

  ~impl() {
    for (auto& g : graph) g.reset();
    for (auto& g : group_graph) g.reset();
    if (capture_stream) (void)cudaStreamDestroy(capture_stream);
    if (body_stream) (void)cudaStreamDestroy(body_stream);
  }
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;

  /// resampler_node::automatic made conditional or gated: gated where the library's resampler is one
  /// kernel, the comb's one-block path (cuda::detail::comb_in_one_block).
  static resampler_node resolved(resampler_node node, const filter_options& o, bool other_kernels) {
    if (node != resampler_node::automatic) return node;
    const bool one_kernel = !other_kernels && cuda::detail::comb_in_one_block(o.resampler, o.particles);
    return one_kernel ? resampler_node::gated : resampler_node::conditional;
  }

  /// filter_precision::fast: float particles, fast::moves_for(model).
  [[nodiscard]] bool is_fast() const { return opt.precision == filter_precision::fast; }

  /// f(moves) with the precision's moves: exact_moves<Model> (double particles) or the model's
  /// fast twin (float particles); typename decltype(moves)::real is the buffers' entry type.
  template <class F>
  void with_moves(const F& f) const {
    if (is_fast()) {
      f(fast::moves_for(model, k));
    } else {
      if (cluster > 1) {
        f(exact_moves<Model, true>{model, k});
      } else {
        f(exact_moves<Model>{model, k});
      }
    }
  }
  template <class Real>
  static Real* as(void* p) {
    return static_cast<Real*>(p);
  }
  /// The dynamic shared memory of the kernels that draw: run_chunk_exact's accepted tries (the fast
  /// chunk keeps its draws in registers).
  template <class Moves>
  static std::size_t drawn_bytes(const Moves&) {
    return Moves::fast ? 0 : drawn_w_bytes;
  }

  /// The exact chunk's cluster for this N on this GPU: the most of 8, 4 and 2 blocks of which the
  /// GPU runs a cluster for every chunk at once (cudaOccupancyMaxActiveClusters for
  /// gather_propagate), else 1 (also without cluster launches, and for device code built for a GPU
  /// before sm_90, whose clustered kernels have no cluster code). Clusters are placed within a GPC,
  /// so fewer fit than blocks per multiprocessor suggest (30 of 8 blocks on an H200, not 33), and a
  /// second wave of clusters doubled the kernel's time.
  [[nodiscard]] unsigned exact_cluster() const {
    if (!cuda::detail::cluster_launch_supported()) return 1;
    const auto kernel = &gather_propagate<exact_moves<Model, true>, true>;
    if (!cuda::detail::compiled_for_sm90(kernel)) return 1;  // JIT-compiled code for an earlier GPU
    cuda::check(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(drawn_w_bytes)),
        "cudaFuncSetAttribute (bpf)");
    for (unsigned c = 8; c > 1; c /= 2) {
      int fit = 0;
      const chunk_launch l(c * static_cast<unsigned>(chunk_count), c, drawn_w_bytes, nullptr);
      if (cudaOccupancyMaxActiveClusters(&fit, kernel, &l.config) != cudaSuccess) {
        (void)cudaGetLastError();  // a size the GPU refuses is not an error of the filter's
        continue;
      }
      if (static_cast<std::size_t>(fit) >= chunk_count) return c;
    }
    return 1;
  }

  /// A launch of `blocks` blocks of chunk_threads in clusters of `c` (none for 1).
  struct chunk_launch {
    cudaLaunchAttribute attribute{};
    cudaLaunchConfig_t config{};
    chunk_launch(unsigned blocks, unsigned c, std::size_t dynamic_bytes, cudaStream_t on) {
      attribute.id = cudaLaunchAttributeClusterDimension;
      attribute.val.clusterDim.x = c;
      attribute.val.clusterDim.y = 1;
      attribute.val.clusterDim.z = 1;
      config.gridDim = dim3(blocks);
      config.blockDim = dim3(chunk_threads);
      config.dynamicSmemBytes = dynamic_bytes;
      config.stream = on;
      config.attrs = &attribute;
      config.numAttrs = c > 1 ? 1 : 0;
    }
    chunk_launch(const chunk_launch&) = delete;
    chunk_launch& operator=(const chunk_launch&) = delete;
  };

  /// Enqueues a particle kernel on `on`: `cluster` blocks per chunk (exact), or summary_count
  /// blocks (fast). A plain launch, never an early one: the finishing kernels after it read the
  /// filter's scalars before they wait for it, safe because every kernel that writes them
  /// (finish_tick, finish_first_stage) has then finished, and the particle kernels only read them.
  template <class... Params, class... Args>
  void launch_chunks(void (*kernel)(Params...), std::size_t dynamic_bytes, cudaStream_t on, const char* what,
                     Args... args) const {
    const auto blocks = static_cast<unsigned>(is_fast() ? summary_count : cluster * chunk_count);
    const chunk_launch l(blocks, cluster, dynamic_bytes, on);
    cuda::check(cudaLaunchKernelEx(&l.config, kernel, static_cast<Params>(args)...), what);
  }

  /// Where the particle kernels leave their summaries, and what the finishing kernels read.
  [[nodiscard]] chunk_summary* summaries() const { return chunks_a.data(); }

  [[nodiscard]] const cuda::device_status* status() const {
    return reinterpret_cast<const cuda::device_status*>(temp_a.data());  // the resampler's verdict
  }

  /// What `kernels` launches for stage `kind` of a tick of parity p (p unused by the first tick).
  [[nodiscard]] move_launch move_for(move_launch::stage kind, int p) const {
    move_launch m;
    m.kind = kind;
    m.n = n;
    m.k = k;
    m.jitter = opt.jitter;
    m.auxiliary = opt.kind == filter_kind::auxiliary;
    m.tick = &s->tick;
    m.resample = &s->resample;
    m.shift = &s->mean;
    m.y = y_a.data();
    m.truth = truth_given ? truth_a.data() : nullptr;
    m.ancestors = ancestors_a.data();
    m.verdict = status();
    m.chunks = chunks_a.data();
    if (kind == move_launch::stage::initial) {  // another backend's kernels: exact, double particles
      m.x_out = as<double>(x_a.data());
      m.lw_out = as<double>(lw_a.data());
      return m;
    }
    const auto [x, lw] = states(p, false);
    m.x = as<double>(x);
    m.lw = as<double>(lw);
    m.fs = as<double>(fs_a.data());
    if (kind == move_launch::stage::first_stage) {
      m.lw_out = as<double>(v_a.data());
    } else {
      const auto [x_out, lw_out] = states(p, true);
      m.x_out = as<double>(x_out);
      m.lw_out = as<double>(lw_out);
    }
    return m;
  }

  [[nodiscard]] tick_io io() const {
    return {y_a.data(),  truth_given ? truth_a.data() : nullptr, increment_a.data(), mean_a.data(), sd_a.data(),
            ess_a.data(), pit_a.data(), resampled_a.data()};
  }

  /// Room for `total` ticks of observations, outputs and, once any were given, true states. Grown
  /// outside the tick loop: it waits for the stream, and the graphs, which hold the old pointers,
  /// are captured again.
  void reserve(std::size_t total, bool with_truth) {
    const bool new_truth = with_truth && !truth_given;
    if (total <= capacity && !new_truth) return;
    cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (bpf)");
    for (auto& g : graph) g.reset();
    for (auto& g : group_graph) g.reset();
    const std::size_t grown = std::max({total, 2 * capacity, std::size_t{64}});
    auto grow = [&](auto& array, std::size_t keep) {
      using X = std::remove_pointer_t<decltype(array.data())>;
      device_vector<X> bigger(grown);
      if (array.data() && keep) {
        // On the filter's stream (a non-blocking one is not ordered with cudaMemcpy's legacy
        // stream), finished before the old array is freed.
        cuda::check(cudaMemcpyAsync(bigger.data(), array.data(), keep * sizeof(X), cudaMemcpyDeviceToDevice, stream),
                    "cudaMemcpyAsync (bpf)");
        cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (bpf)");
      }
      array = std::move(bigger);
    };
    if (total > capacity) {
      for (auto* a : {&y_a, &increment_a, &mean_a, &sd_a, &ess_a, &pit_a}) grow(*a, ticks);
      grow(resampled_a, ticks);
      if (truth_given) grow(truth_a, ticks);
      capacity = grown;
    }
    if (new_truth) {  // NaN for the ticks before: they had none
      truth_given = true;
      device_vector<double> fresh(capacity);
      const std::vector<double> nan(ticks, std::numeric_limits<double>::quiet_NaN());
      if (ticks) {
        cuda::check(cudaMemcpyAsync(fresh.data(), nan.data(), ticks * sizeof(double), cudaMemcpyHostToDevice, stream),
                    "cudaMemcpyAsync (bpf)");
        cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (bpf)");  // before `nan` goes
      }
      truth_a = std::move(fresh);
    }
  }

  /// The particles' buffers (x, lw) a tick t > 0 of parity p = t % 2 reads (next = false) or writes:
  /// tick 0 writes x_a, tick 1 reads it and writes x_next_a, tick 2 reads that, and so on.
  [[nodiscard]] std::pair<void*, void*> states(int p, bool next) const {
    const bool second = (p == 1) == next;
    return second ? std::pair{x_next_a.data(), lw_next_a.data()} : std::pair{x_a.data(), lw_a.data()};
  }

  /// Tick 0, launched on the filter's stream. A bootstrap filter then draws tick 1's ancestors
  /// (gated: the launches return at once if tick 1 keeps its weights), as each tick graph ends with
  /// the next tick's resampler.
  void enqueue_first_tick() {
    with_moves([&](auto moves) {
      using Real = typename decltype(moves)::real;
      Real* const x = as<Real>(x_a.data());
      Real* const lw = as<Real>(lw_a.data());
      if (kernels) {
        kernels->prepare(initial_slot, move_for(move_launch::stage::initial, 0), stream);
        kernels->launch(initial_slot, stream);
      } else {
        launch_chunks(&initial_weight<decltype(moves)>, drawn_bytes(moves), stream, "launch of bpf initial_weight",
                      moves, n, io(), x, lw, summaries());
      }
      const bool auxiliary = opt.kind == filter_kind::auxiliary;
      finish_tick<Real, false><<<1, lanes, 0, stream>>>(summaries(), summary_count, x, lw, opt.ess_threshold, n,
                                                          auxiliary, io(), status(), s, {});
      cuda::check_launch("bpf finish_tick");
      if (!auxiliary) enqueue_resampler(stream, static_cast<const Real*>(lw), gated_at_tick());
    });
  }

  /// The PTX resampler's one-block path's largest N (src/ptx/ancestors.cpp's one_block_items).
  static constexpr std::size_t ptx_one_block_items = 4096;

  /// The resampler's options at a tick: the step (the tick) read on the device when the call runs,
  /// and, for this file's resampler where it takes it, the max log-weight that finish_tick found
  /// (options::device_max_log_weight: no max pass over the weights, a read of 4 or 8 bytes a
  /// particle; checked on the way; the PTX resampler too above 4096 particles, since session 41).
  /// The auxiliary filter's first-stage weights have no such max.
  /// In fast precision systematic and stratified take the weights' exponentials by ex2.approx too
  /// (options::fast_exp: an exact draw for weights within about 2^-22 of the float log-weights'
  /// own, whose rounding is of that order), except on the one-block path (N <= 8192), which has
  /// the deterministic exp only and whose exps cost little. Multinomial-sorted keeps the
  /// deterministic exp: with the fast one it was no faster at 2^20 and 1-3 us faster at 2^24
  /// (docs/results/gpu.md, session 41). (check_filter_options refuses a caller's fast_exp.)
  [[nodiscard]] resample::options at_tick() const {
    resample::options o = opt.resampling;
    o.device_step = &s->tick;
    // the PTX resampler takes the max too (since session 41), except where it is one block (N <=
    // 4096, src/ptx/ancestors.cpp's one_block_items), which finds the max itself: handed the max,
    // it would run the tiles' kernels instead
    const bool comb = cuda::detail::comb_scheme(opt.resampler) && (!kernels || n > ptx_one_block_items);
    const bool given = comb && opt.kind == filter_kind::bootstrap;
    o.device_max_log_weight = given ? &s->max_log_weight : nullptr;  // never the caller's: not these weights' max
    o.fast_exp = !kernels && is_fast() && (opt.resampler == scheme::systematic || opt.resampler == scheme::stratified) &&
                 !cuda::detail::comb_in_one_block(opt.resampler, n);
    return o;
  }
  /// ... and with the ESS test as its gate: launched every tick, the call returns at once on a tick
  /// that keeps its weights.
  [[nodiscard]] resample::options gated_at_tick() const {
    resample::options o = at_tick();
    o.device_gate = &s->resample;
    return o;
  }

  /// Captures a tick t > 0 of parity p (t % 2) on `on` (capturing): the particles move from
  /// states(p, false) to states(p, true). The resampler runs on the ticks that resample, after the
  /// kernel that made the ESS test: auxiliary, finish_first_stage, so in the middle of the tick;
  /// bootstrap, finish_tick, so at the end, for tick t + 1. It is a conditional node (its body
  /// captured on `body`) opened by that kernel, or, gated, launched every tick.
  void capture_tick(int p, cudaStream_t on, cudaStream_t body) {
    with_moves([&](auto moves) { capture_tick(moves, p, on, body); });
  }

  template <class Moves>
  void capture_tick(const Moves& moves, int p, cudaStream_t on, cudaStream_t body) {
    using Real = typename Moves::real;
    const bool auxiliary = opt.kind == filter_kind::auxiliary;
    const bool conditional = skip == resampler_node::conditional;
    Real* const x = as<Real>(states(p, false).first);
    Real* const lw = as<Real>(states(p, false).second);
    Real* const lw_out = as<Real>(states(p, true).second);
    Real* const fs = as<Real>(fs_a.data());
    Real* const v = as<Real>(v_a.data());
    // Where the ESS test is made, it opens the resampler's node (a handle of this graph).
    const cudaGraphConditionalHandle next = conditional ? conditional_handle(on) : cudaGraphConditionalHandle{};
    const auto resampler = [&](const Real* weights) {
      if (conditional) {
        add_conditional_resampler(on, body, next, weights);
      } else {
        enqueue_resampler(on, weights, gated_at_tick());
      }
    };
    if (auxiliary) {
      if (kernels) {
        kernels->launch(first_stage_slot + p, on);
      } else {
        launch_chunks(&first_stage<Moves>, 0, on, "launch of bpf first_stage", moves, n, s, io(), x, lw, fs, v,
                      summaries());
      }
      const auto finish = conditional ? &finish_first_stage<Real, true> : &finish_first_stage<Real, false>;
      finish<<<1, lanes, 0, on>>>(summaries(), summary_count, x, v, opt.ess_threshold, n, s, next);
      cuda::check_launch("bpf finish_first_stage");
      resampler(v);
    }
    launch_gather(moves, p, on, false);
    launch_finish_tick<Real>(p, on, conditional && !auxiliary, next, true);
    if (!auxiliary) resampler(lw_out);
  }

  /// finish_tick for a tick of parity p (its particles in states(p, true)) on `on`, after the
  /// tick's particle kernel; `opens`: the kernel opens the conditional node on `next`. `early`:
  /// launched early (programmatic dependent launch, captured as a programmatic edge), so that it may
  /// start while the particle kernel's last blocks run (it waits for its end before the summaries);
  /// else a plain launch (after a conditional node too, which has no programmatic edge).
  template <class Real>
  void launch_finish_tick(int p, cudaStream_t on, bool opens, cudaGraphConditionalHandle next, bool early) {
    const auto finish = opens ? &finish_tick<Real, true> : &finish_tick<Real, false>;
    Real* const x_out = as<Real>(states(p, true).first);
    Real* const lw_out = as<Real>(states(p, true).second);
    const bool auxiliary = opt.kind == filter_kind::auxiliary;
    if (early) {
      cuda::detail::launch_early("bpf finish_tick", finish, 1, lanes, 0, on, summaries(), summary_count, x_out,
                                 lw_out, opt.ess_threshold, n, auxiliary, io(), status(), s, next);
    } else {
      finish<<<1, lanes, 0, on>>>(summaries(), summary_count, x_out, lw_out, opt.ess_threshold, n, auxiliary, io(),
                                  status(), s, next);
      cuda::check_launch("bpf finish_tick");
    }
  }

  /// The particle kernel of a tick of parity p on `on`; `beside_resampler`: the launch that returns at
  /// once on a tick that resamples (capture_group).
  template <class Moves>
  void launch_gather(const Moves& moves, int p, cudaStream_t on, bool beside_resampler) {
    using Real = typename Moves::real;
    if (kernels) return kernels->launch(gather_slot + p, on);
    // Fast: the kernel without the jitter's code where there is none (the exact one keeps one kernel).
    const auto kernel =
        Moves::fast && opt.jitter <= 0.0 ? &gather_propagate<Moves, !Moves::fast> : &gather_propagate<Moves, true>;
    launch_chunks(kernel, drawn_bytes(moves), on, "launch of bpf gather_propagate", moves, n, opt.jitter,
                  opt.kind == filter_kind::auxiliary, beside_resampler, io(), ancestors_a.data(), status(),
                  as<Real>(states(p, false).first), as<Real>(states(p, false).second), as<Real>(fs_a.data()),
                  as<Real>(states(p, true).first), as<Real>(states(p, true).second), s, summaries());
  }

  /// Whether ticks go several to a graph (capture_group): the fast bootstrap filter with the
  /// conditional resampler node and this file's kernels. Not the exact one: its tick at 2^24 took
  /// 2.5-3.7 us longer in pairs (512.5 against 508.8 us, an H200, session 39), though 0.8 less at
  /// 2^18.
  [[nodiscard]] bool groups_ticks() const {
    return is_fast() && opt.kind == filter_kind::bootstrap && skip == resampler_node::conditional && !kernels;
  }

  /// Captures ticks t (parity p) to t + K - 1 on `on` (capturing) as one graph. A conditional node
  /// at the end of a tick's graph delays the next graph by more than it costs beside other work (an
  /// H200, session 39: a tick at 2^24 took 3.7 us longer with an unopened IF node after its finishing
  /// kernel, 1.6 with one IF node in two beside the next tick's propagation). So each tick's
  /// resampler node but the last runs beside the next tick's particle kernel, which returns at once
  /// on a tick that resamples; the node's body then runs the resampler and that particle kernel
  /// after it. The next finish_tick waits for both (a plain launch: a conditional node has no
  /// programmatic edge). The last tick's resampler node ends the graph, as capture_tick's does. The
  /// same kernels in the same order on every tick as capture_tick's graphs, hence the same bits.
  template <class Moves>
  void capture_group(const Moves& moves, int p, int K, cudaStream_t on, cudaStream_t body) {
    using Real = typename Moves::real;
    launch_gather(moves, p, on, false);
    for (int i = 0; i < K; ++i) {
      const int pi = (p + i) % 2, qi = 1 - pi;
      const cudaGraphConditionalHandle next = conditional_handle(on);
      const Real* const lw_out = as<Real>(states(pi, true).second);
      launch_finish_tick<Real>(pi, on, true, next, i == 0);
      if (i + 1 == K) {
        add_conditional_resampler(on, body, next, lw_out);
        break;
      }
      const cudaGraphNode_t beside = add_conditional(on, body, next, false, [&](cudaStream_t b) {
        enqueue_resampler(b, lw_out, at_tick());
        launch_gather(moves, qi, b, false);
      });
      launch_gather(moves, qi, on, true);
      join(on, beside);
    }
  }

  /// What `on` captures next waits for `node` too.
  static void join(cudaStream_t on, cudaGraphNode_t node) {
    cuda::check(cudaStreamUpdateCaptureDependencies(on, &node, nullptr, 1, cudaStreamAddCaptureDependencies),
                "cudaStreamUpdateCaptureDependencies (bpf)");
  }

  /// The library's resampler on `weights` into ancestors_a, on `on` (captured).
  template <class Real>
  void enqueue_resampler(cudaStream_t on, const Real* weights, const resample::options& call_opt) {
    std::size_t bytes = temp_bytes;
    resampler_call(temp_a.data(), bytes, weights, ancestors_a.data(), call_opt, on);
  }

  /// The resampler's ancestors call (cuda::ancestors' contract: d_temp null sizes it), on the
  /// CUDA C backend or `kernels`' (the PTX backend's).
  void resampler_call(void* d_temp, std::size_t& bytes, const double* lw, std::int32_t* a,
                      const resample::options& call_opt, cudaStream_t on) {
    if (kernels) {
      kernels->ancestors(d_temp, bytes, opt.resampler, lw, n, k, 0, a, call_opt, on);
    } else {
      cuda::ancestors<double, std::int32_t>(d_temp, bytes, opt.resampler, lw, n, k, 0, a, call_opt, on);
    }
  }
  void resampler_call(void* d_temp, std::size_t& bytes, const float* lw, std::int32_t* a,
                      const resample::options& call_opt, cudaStream_t on) {
    cuda::ancestors<float, std::int32_t>(d_temp, bytes, opt.resampler, lw, n, k, 0, a, call_opt, on);
  }

  /// A conditional handle of the graph being captured on `on`.
  [[nodiscard]] static cudaGraphConditionalHandle conditional_handle(cudaStream_t on) {
    cudaStreamCaptureStatus capturing{};
    cudaGraph_t graph = nullptr;
    cudaGraphConditionalHandle handle{};
    cuda::check(cudaStreamGetCaptureInfo(on, &capturing, nullptr, &graph), "cudaStreamGetCaptureInfo (bpf)");
    cuda::check(cudaGraphConditionalHandleCreate(&handle, graph, 0, 0), "cudaGraphConditionalHandleCreate (bpf)");
    return handle;
  }

  /// The resampler as the body of a conditional node on `handle`, after what `on` captured so far;
  /// the body captured on `body`. The kernel before it opens it on the ticks that resample; on the
  /// others nothing of it is launched.
  template <class Real>
  void add_conditional_resampler(cudaStream_t on, cudaStream_t body, cudaGraphConditionalHandle handle,
                                 const Real* weights) {
    add_conditional(on, body, handle, true, [&](cudaStream_t b) { enqueue_resampler(b, weights, at_tick()); });
  }

  /// A conditional (IF) node on `handle` after what `on` captured so far, whose body `fill(body)`
  /// captures on `body`. `follow`: what `on` captures next comes after the node; else it comes
  /// beside it (after what came before the node), and the node is returned for a later join.
  template <class Fill>
  cudaGraphNode_t add_conditional(cudaStream_t on, cudaStream_t body, cudaGraphConditionalHandle handle, bool follow,
                                  const Fill& fill) {
    cudaStreamCaptureStatus capturing{};
    cudaGraph_t graph = nullptr;
    const cudaGraphNode_t* deps = nullptr;
    std::size_t deps_count = 0;
    cuda::check(cudaStreamGetCaptureInfo(on, &capturing, nullptr, &graph, &deps, nullptr, &deps_count),
                "cudaStreamGetCaptureInfo (bpf)");
    cudaGraphNodeParams cond{};
    cond.type = cudaGraphNodeTypeConditional;
    cond.conditional.handle = handle;
    cond.conditional.type = cudaGraphCondTypeIf;
    cond.conditional.size = 1;
    cudaGraphNode_t node = nullptr;
    cuda::check(cudaGraphAddNode(&node, graph, deps, nullptr, deps_count, &cond), "cudaGraphAddNode (bpf conditional)");
    if (follow) {
      cuda::check(cudaStreamUpdateCaptureDependencies(on, &node, nullptr, 1, cudaStreamSetCaptureDependencies),
                  "cudaStreamUpdateCaptureDependencies (bpf)");
    }
    cudaGraph_t inner = cond.conditional.phGraph_out[0];
    cuda::check(cudaStreamBeginCaptureToGraph(body, inner, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal),
                "cudaStreamBeginCaptureToGraph (bpf)");
    try {
      fill(body);
    } catch (...) {
      (void)cudaStreamEndCapture(body, &inner);
      throw;
    }
    cuda::check(cudaStreamEndCapture(body, &inner), "cudaStreamEndCapture (bpf conditional body)");
    return node;
  }

  void tick(std::size_t t) {
    if (t == 0) return enqueue_first_tick();
    const int p = static_cast<int>(t % 2);
    if (!graph[p].ready()) {
      if (kernels) {  // outside the capture: the slots' arguments, in stream order before the graph
        if (opt.kind == filter_kind::auxiliary) {
          kernels->prepare(first_stage_slot + p, move_for(move_launch::stage::first_stage, p), stream);
        }
        kernels->prepare(gather_slot + p, move_for(move_launch::stage::gather_propagate, p), stream);
      }
      graph[p].capture(capture_stream, [&](cudaStream_t on) { capture_tick(p, on, body_stream); });
    }
    graph[p].launch(stream);
  }

  /// Ticks t > 0 to t + group_size - 1 as one graph (groups_ticks).
  void group_of_ticks(std::size_t t) {
    const int p = static_cast<int>(t % 2);
    tick_graph& g = group_graph[p];
    if (!g.ready()) {
      g.capture(capture_stream, [&](cudaStream_t on) {
        with_moves([&](auto moves) { capture_group(moves, p, group_size, on, body_stream); });
      });
    }
    g.launch(stream);
  }
};

template <class Model>
cuda_filter<Model>::cuda_filter(const Model& model, const filter_options& opt, cudaStream_t stream,
                                resampler_node node, std::shared_ptr<tick_kernels> kernels)
    : impl_(std::make_unique<impl>(model, opt, stream, node, std::move(kernels))) {}

template <class Model>
cuda_filter<Model>::~cuda_filter() = default;

template <class Model>
void cuda_filter<Model>::enqueue(std::span<const double> y, std::span<const double> truth) {
  impl& m = *impl_;
  detail::check_observations(y, truth, m.ticks);
  if (m.is_fast()) {  // float observations: one beyond float's range would be an infinity there
    for (std::size_t t = 0; t < y.size(); ++t) {
      if (std::fabs(y[t]) > std::numeric_limits<float>::max()) {
        const std::string value = resample::detail::format_value(y[t]);
        throw invalid_input("observation " + std::to_string(m.ticks + t) + " is " + value +
                                ", beyond float's range (precision 'fast' keeps observations in float)",
                            m.ticks + t);
      }
    }
  }
  if (m.ticks + y.size() > 0xffffffffu) throw invalid_input("the filter supports at most 2^32 - 1 ticks");
  m.reserve(m.ticks + y.size(), !truth.empty());
  // This call's observations and true states (NaN where none are given), in stream order. A
  // pageable source is staged before cudaMemcpyAsync returns, so `slice` may go out of scope.
  cuda::check(cudaMemcpyAsync(m.y_a.data() + m.ticks, y.data(), y.size() * sizeof(double), cudaMemcpyHostToDevice,
                              m.stream),
              "cudaMemcpyAsync (bpf observations)");
  if (m.truth_given) {
    std::vector<double> slice(y.size(), std::numeric_limits<double>::quiet_NaN());
    std::copy(truth.begin(), truth.end(), slice.begin());
    cuda::check(cudaMemcpyAsync(m.truth_a.data() + m.ticks, slice.data(), slice.size() * sizeof(double),
                                cudaMemcpyHostToDevice, m.stream),
                "cudaMemcpyAsync (bpf truth)");
  }
  for (std::size_t t = 0; t < y.size();) {
    if (m.ticks > 0 && t + impl::group_size <= y.size() && m.groups_ticks()) {
      m.group_of_ticks(m.ticks);
      m.ticks += impl::group_size;
      t += impl::group_size;
    } else {
      m.tick(m.ticks);
      ++m.ticks;
      ++t;
    }
  }
}

template <class Model>
unsigned cuda_filter<Model>::blocks_per_chunk() const {
  return impl_->cluster;
}

template <class Model>
unsigned cuda_filter<Model>::ticks_per_graph() const {
  return impl_->groups_ticks() ? static_cast<unsigned>(impl::group_size) : 1u;
}

template <class Model>
filter_run cuda_filter<Model>::collect() {
  impl& m = *impl_;
  cuda::check(cudaStreamSynchronize(m.stream), "cudaStreamSynchronize (bpf collect)");
  scalars s{};
  cuda::check(cudaMemcpy(&s, m.s, sizeof s, cudaMemcpyDeviceToHost), "cudaMemcpy (bpf scalars)");
  if (s.failed_tick != ~0u) {  // the CPU filter's words for refused weights, the library's for the rest
    const auto code = static_cast<cuda::status_code>(s.failed.code);
    if (code == cuda::status_code::bad_log_weight) {
      detail::throw_bad_tick(s.failed_tick, static_cast<std::size_t>(s.failed.index), s.failed.value, s.failed_state);
    }
    if (code == cuda::status_code::all_weights_zero) detail::throw_bad_tick(s.failed_tick, {}, 0.0, 0.0);
    cuda::check_status(&m.s->failed, m.stream);
  }
  const std::size_t count = m.ticks;
  std::vector<double> inc(count), mean(count), sd(count), ess(count), pit(count);
  std::vector<int> resampled(count);
  auto fetch = [&](auto& to, const auto* from) {
    if (count) {
      cuda::check(cudaMemcpy(to.data(), from, count * sizeof(to[0]), cudaMemcpyDeviceToHost), "cudaMemcpy (bpf ticks)");
    }
  };
  const tick_io out = m.io();
  fetch(inc, out.increment);
  fetch(mean, out.mean);
  fetch(sd, out.sd);
  fetch(ess, out.ess);
  fetch(pit, out.pit);
  fetch(resampled, out.resampled);
  filter_run r;
  r.log_likelihood = s.log_likelihood;
  for (std::size_t t = 0; t < count; ++t) {
    tick_summary k;
    k.log_likelihood_increment = inc[t];
    k.mean = mean[t];
    k.sd = sd[t];
    k.ess = ess[t];
    k.resampled = resampled[t] != 0;
    k.pit = pit[t];
    r.ticks.push_back(k);
  }
  return r;
}

template class cuda_filter<sv_model>;
template class cuda_filter<linear_gaussian_model>;

}  // namespace resample::bpf
