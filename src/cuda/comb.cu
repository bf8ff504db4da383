// Systematic (Code 5), stratified (Code 4) and multinomial-sorted resampling on the exact CDF,
// fused with Code 8.
//
//   comb_pass: block t takes particles [2048 t, 2048 (t + 1)): 256 threads x 8 consecutive items
//   in vector loads. Each warp's 256 particles by warp_comb, from estimated weights and the warp's
//   exact C (tile offset + the tile pass's warp offset), the deterministic exp and a 128-bit warp
//   scan only in a warp where the estimate leaves a particle undecided. O^i by comb_estimate /
//   comb_run (systematic: one u for all strata, drawn on the host; stratified: u_K of the stratum K
//   that r_i falls in; multinomial-sorted: the c_K points of that stratum, c_K and the points below
//   it read from P, written by sorted_points.cu: the Philox blocks over a thread's span of ranks
//   into its column of shared memory, then each particle's points compared in 32-bit integers), kept
//   in registers; a^j = i for O^{i-1} <= j < O^i by each warp for its own particles
//   (warp::ancestor_writer: run starts marked, a warp max-scan, 16-byte stores; 1,536 bytes a
//   warp), the O before a warp's first particle from the warp before it through a named barrier
//   of the two warps, so that no warp waits for its whole block; a heavy particle's whole rows of
//   offspring (16384 or more) published for every warp still running to fill (heavy_run). CPU twins:
//   resample::cpu::systematic_ancestors / stratified_ancestors (comb_ancestors.hpp), exact_comb per
//   particle, and multinomial_sorted_ancestors (sorted_points_below per particle): comb_run gives
//   their bits.
//
//   options::fast_exp (`fast`): the tile pass and the comb take the weights by ex2.approx
//   (detail/fast_exp.cuh, ptx/fast_exp.ptx's instructions) in place of the deterministic and the
//   estimated exp, so the draw is exact for those weights, and (where the driver's JIT assembles
//   ex2.approx as nvcc does; tested) the ptx backend's fast draw on the same GPU; not the CPU's
//   bits. At every N through the tiles' kernels; the comb's eps 2^-40, as the PTX comb's.
//
//   small_comb_pass (N <= 8192, systematic and stratified): the whole call in one block of 1024
//   threads x 4 items (block::resampler: max and Q by block reductions, the system kept in
//   registers up to 4096 particles, then the comb): one launch instead of four, for the latency of
//   small systems.
//
// Passes over the log-weights: max, tile sums, comb (3 reads, 1 write of the ancestors);
// multinomial-sorted also writes and reads P (4 bytes per stratum).
#include "detail/pipeline.cuh"
#include "detail/schemes.hpp"
#include "detail/warp_comb.cuh"
#include "resample/core/comb_run.hpp"
#include "resample/core/sorted_points.hpp"
#include "resample/cuda/block/resampler.cuh"

namespace resample::cuda::detail {
namespace {

constexpr int sorted_scratch_words = 32;  // per thread: multinomial-sorted's span of ranks, 8 Philox blocks

/// A thread's column of shared memory as count_points_below's scratch: slot s at s x block_threads,
/// so that the lanes of a warp, each at a slot of its own, read 32 different banks.
struct column_points {
  static constexpr int capacity = sorted_scratch_words;
  std::uint32_t* column;
  __device__ std::uint32_t& operator[](int s) const { return column[s * block_threads]; }
};

enum class comb_kind { systematic, stratified, multinomial_sorted };

/// A heavy particle's whole rows of offspring (warp::ancestor_writer's fill), handed from the warp
/// that found them to the warps still running: at 2^24 with two particles owning every offspring,
/// their one warp alone stored them in 1.1 ms (session 22, H200) against 75 us for the whole comb
/// on random weights. A warp publishes the run in a slot, then its bit in
/// device_status::heavy_runs_ready (release: a fence, then the atomic). Each warp, when its
/// block's particles are written, takes chunks of every published run by an atomic count until
/// none is left; the run's publisher is one of those warps, so every run is finished. A warp
/// reads the bits before its own Code 8 (the read's latency hidden, not added to every block's
/// end) and its block's own publications after it, so that when no later block is left (at 2^20
/// the whole grid is resident at once) the finding block's eight warps share the run.
struct heavy_run {
  unsigned long long first;    // a's index of its first slot (16-byte aligned)
  std::uint32_t count;         // slots, a multiple of 128 (below 2^32)
  std::uint32_t chunks_taken;  // chunks claimed, by atomicAdd; beside count, for one 8-byte read of both
  std::uint32_t owner;         // the particle
};
constexpr std::uint32_t heavy_slots = 32;    // a bit each in heavy_runs_ready; later runs, their warp's stores
constexpr std::uint32_t heavy_min = 16384;   // shorter fills are the warp's own (about 1 us at most)
constexpr std::uint32_t heavy_chunk = 8192;  // slots a warp takes at once (32 KB of int32)

/// warp_writer's `defer`: a fill of heavy_min slots or more published, while slots last.
struct publish_heavy_run {
  device_status* st;
  heavy_run* runs;
  __device__ bool operator()(std::size_t first, std::uint32_t count, std::uint32_t owner) const {
    if (count < heavy_min) return false;
    std::uint32_t slot = heavy_slots;
    if ((threadIdx.x & 31) == 0) {
      const std::uint32_t s = atomicAdd(&st->heavy_runs_reserved, 1u);
      if (s < heavy_slots) {
        runs[s] = heavy_run{first, count, 0, owner};
        __threadfence();
        atomicOr(&st->heavy_runs_ready, 1u << s);
        slot = s;
      }
    }
    return __shfl_sync(0xffffffffu, slot, 0) < heavy_slots;
  }
};

/// A warp's share of the published heavy runs (all lanes, converged), when `look` (some run was
/// published before the warp's Code 8, or by its block): chunk by chunk until each run's chunks are
/// all claimed. Runs published later are left to later warps and to their publishers. Lane 0
/// alone reads the bits, the runs and the claims (after its acquire load) and hands them to the
/// lanes. Every warp of the grid may look at every published run: a warp that finds a run spent
/// clears its bit, so that later warps skip it, and reads the count before it claims (unread,
/// 26,000 failed same-address claims per run cost 110 us at 2^24, session 22). A warp takes the runs
/// in an order of its own, from run (its place in the grid mod 32) on, so that the warps spread
/// over the runs: lowest first, all met at the same run, and 512 heavy particles took 241 us at
/// 2^24 against 219 (session 23, H200; with the 32 runs read at once, one per lane, 32 heavy
/// particles took 269 against 235, not kept).
template <class Index>
__device__ void fill_heavy_runs(device_status* st, heavy_run* runs, Index* a, bool look) {
  if (!look) return;
  const bool leader = (threadIdx.x & 31) == 0;
  std::uint32_t ready = 0;
  if (leader) {
    // acquire: the runs whose bits were read. A __threadfence after a plain read was a full fence,
    // which waits for the warp's own stores (its Code 8) too: 15% of the comb's stall samples with 32
    // heavy particles at 2^24 (session 23).
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(ready) : "l"(&st->heavy_runs_ready) : "memory");
  }
  ready = __shfl_sync(0xffffffffu, ready, 0);
  const unsigned place = (blockIdx.x * (block_threads / 32) + threadIdx.x / 32) & 31;
  while (ready != 0) {
    const std::uint32_t turned = __funnelshift_r(ready, ready, place);  // bit j: run (j + place) % 32
    const int s = static_cast<int>((__ffs(static_cast<int>(turned)) - 1 + place) & 31u);
    ready &= ~(1u << s);
    unsigned long long first = 0;
    std::uint32_t owner = 0;
    for (bool read = false;;) {
      std::uint32_t c = 0, count = 0;
      bool claimed = false;
      if (leader) {
        const unsigned long long both = __ldcg(reinterpret_cast<const unsigned long long*>(&runs[s].count));
        count = static_cast<std::uint32_t>(both);
        const std::uint32_t chunks = count / heavy_chunk + (count % heavy_chunk != 0 ? 1u : 0u);
        if (static_cast<std::uint32_t>(both >> 32) < chunks) {
          c = atomicAdd(&runs[s].chunks_taken, 1u);
          claimed = c < chunks;
        }
        if (!claimed) {
          atomicAnd(&st->heavy_runs_ready, ~(1u << s));
        } else if (!read) {
          first = __ldcg(&runs[s].first);
          owner = __ldcg(&runs[s].owner);
        }
      }
      if (!__shfl_sync(0xffffffffu, claimed, 0)) break;
      if (!read) {
        first = __shfl_sync(0xffffffffu, first, 0);
        owner = __shfl_sync(0xffffffffu, owner, 0);
        read = true;
      }
      c = __shfl_sync(0xffffffffu, c, 0);
      count = __shfl_sync(0xffffffffu, count, 0);
      const std::uint32_t from = c * heavy_chunk;
      warp_writer::fill_rows(a + first + from, min(heavy_chunk, count - from), owner);
    }
  }
}

/// Four blocks per multiprocessor (64 registers, a few bytes spilled) where three (80 registers)
/// had been: at 2^24 the comb took 66, 134 and 249 us (systematic, stratified, multinomial-sorted)
/// against 73, 144 and 258 (docs/results/gpu.md, session 21).
inline constexpr int comb_blocks_per_multiprocessor = 4;

template <class T, class Index, comb_kind Kind, bool Fast>
__global__ void __launch_bounds__(block_threads, comb_blocks_per_multiprocessor)
    comb_pass(const T* __restrict__ lw, std::size_t n, device_status* st, const u128* offsets,
              const u128* warp_offsets, key k, step_source step_from, std::uint32_t host_U,
              const std::uint32_t* __restrict__ P, heavy_run* heavy, Index* a) {
  const std::size_t begin = blockIdx.x * std::size_t{tile_items};
  T x[items_per_thread];
  block::load_blocked(lw, begin + threadIdx.x * items_per_thread, n, x);  // while the passes before end
  wait_for_previous_kernel();
  if (st->code != 0) return;
  const std::uint32_t step = step_from.get();
  // systematic's u: drawn on the host, unless the step is only known on the device
  const std::uint32_t U =
      step_from.device && Kind == comb_kind::systematic ? philox_stream(k, shared_index, step).next() : host_U;
  // Multinomial-sorted's scratch, a column per thread (during the comb); each warp's Code 8 stage
  // (after it), and each warp's last O for the warp after it.
  constexpr int scratch_words = Kind == comb_kind::multinomial_sorted ? sorted_scratch_words * block_threads : 1;
  __shared__ alignas(16) std::uint32_t scratch[scratch_words];
  __shared__ warp_writer::TempStorage stages[warps_per_tile];
  __shared__ std::uint32_t warp_last[warps_per_tile];
  const u128 offset = offsets[blockIdx.x];
  const int fraction = st->fraction;
  const double max_lw = st->max_log_w;
  std::uint32_t O[items_per_thread];
  const auto emit = [&O](int m, std::uint64_t value) { O[m] = static_cast<std::uint32_t>(value); };
  const u128 C_warp = offset + warp_offsets[blockIdx.x * std::size_t{warps_per_tile} + (threadIdx.x >> 5)];
  using estimate = comb_estimate<items_per_thread>;
  using run = comb_run<items_per_thread>;
  std::uint64_t tile_O_begin = 0;  // the O before the tile, exact (lane 0 of warp 0 only)
  if constexpr (Kind == comb_kind::multinomial_sorted) {
    const sorted_points layout(n);
    const exact_comb comb(st->total, layout.strata());
    const auto strata = [P](std::uint64_t K) {
      const std::uint32_t below = P[K];
      return stratum_points{below, P[K + 1] - below};
    };
    column_points column{scratch + threadIdx.x};
    warp_comb<Fast>(
        x, max_lw, fraction, comb, C_warp, 0.0,
        [&](const estimate& e, std::uint64_t(&out)[items_per_thread]) {
          return e.multinomial_sorted(k, step, strata, column, out);
        },
        [&](const run& r, auto sink) { r.multinomial_sorted(k, step, layout, strata, column, sink); }, emit);
    if (threadIdx.x == 0 && begin != 0) tile_O_begin = sorted_points_below(comb, layout, offset, k, step, strata);
  } else if constexpr (Kind == comb_kind::stratified) {
    const exact_comb comb(st->total, n);
    warp_comb<Fast>(
        x, max_lw, fraction, comb, C_warp, 0.0,
        [&](const estimate& e, std::uint64_t(&out)[items_per_thread]) { return e.stratified(k, step, out); },
        [&](const run& r, auto sink) { r.stratified(k, step, sink); }, emit);
    if (threadIdx.x == 0 && begin != 0) tile_O_begin = comb.stratified(offset, k, step);
  } else {
    const exact_comb comb(st->total, n);
    warp_comb<Fast>(
        x, max_lw, fraction, comb, C_warp, U * resample::detail::two_to_minus_32,
        [](const estimate& e, std::uint64_t(&out)[items_per_thread]) { return e.systematic(out); },
        [U](const run& r, auto sink) { r.systematic(U, sink); }, emit);
    if (threadIdx.x == 0 && begin != 0) tile_O_begin = comb.systematic(offset, U);
  }
  // Code 8, warp by warp. A warp's runs start where the warp before it ends: warp w - 1 publishes
  // its last O and arrives at barrier w, which warp w waits on (a named barrier of two warps, so
  // no warp waits for the rest of its block); the tile's first warp has the exact O before the tile.
  const int lane = static_cast<int>(threadIdx.x & 31), warp = static_cast<int>(threadIdx.x >> 5);
  if (lane == 31) warp_last[warp] = O[items_per_thread - 1];
  if (warp + 1 < warps_per_tile) asm volatile("bar.arrive %0, 64;" : : "r"(warp + 1) : "memory");
  std::uint32_t O_begin;
  if (warp == 0) {
    O_begin = __shfl_sync(0xffffffffu, static_cast<std::uint32_t>(tile_O_begin), 0);
  } else {
    asm volatile("bar.sync %0, 64;" : : "r"(warp) : "memory");
    O_begin = warp_last[warp - 1];
  }
  std::uint32_t start = __shfl_up_sync(0xffffffffu, O[items_per_thread - 1], 1);  // the O before this lane's run
  if (lane == 0) start = O_begin;
  const std::uint32_t O_end = __shfl_sync(0xffffffffu, O[items_per_thread - 1], 31);
  // lane 0's read, not yet waited for: a shuffle here would add its latency before the writes
  const std::uint32_t seen = lane == 0 ? *static_cast<const volatile std::uint32_t*>(&st->heavy_runs_ready) : 0;
  const bool published = warp_writer::write(stages[warp], O, start, O_begin, O_end,
                                            begin + std::size_t{32} * items_per_thread * warp, a,
                                            publish_heavy_run{st, heavy});
  // the block's publications (a block's warps leave the multiprocessor together anyway)
  const bool mine = __syncthreads_or(published) != 0;
  fill_heavy_runs(st, heavy, a, __any_sync(0xffffffffu, seen != 0) || mine);
}

constexpr int small_threads = 1024;
constexpr int small_items = 4;  // resident (read once) up to small_threads x small_items, of comb_one_block_n

template <class T, class Index, bool Stratified>
__global__ void __launch_bounds__(small_threads)
    small_comb_pass(const T* __restrict__ lw, std::size_t n, key k, step_source step_from, Index* a, device_status* st,
                    const int* gate, const double* given_max) {
  if (gate && *gate == 0) {
    if (threadIdx.x == 0) {
      *st = device_status{};
      st->code = static_cast<int>(status_code::skipped);
    }
    return;
  }
  using resampler = block::resampler<T, Index, small_threads, small_items>;
  __shared__ typename resampler::TempStorage tmp;
  resampler r(tmp);
  auto s = r.summarise(lw, n);
  // options::device_max_log_weight: this block found the max itself, so the option is only checked
  // (the first log-weight above it found by one thread: bad input only), after NaN and +inf and
  // before all weights zero, as finish_pass orders them. `s` is the same in every thread.
  __shared__ std::size_t above;
  const bool checked = s.code == status_code::ok || s.code == status_code::all_weights_zero;
  if (given_max && checked && static_cast<double>(s.max_log_w) != *given_max) {
    if (threadIdx.x == 0) {
      const double m = *given_max;
      std::size_t i = 0;
      while (i < n && static_cast<double>(lw[i]) <= m) ++i;
      above = i;
    }
    __syncthreads();
    s.code = status_code::max_not_largest;
    s.index = above;
  }
  if (threadIdx.x == 0) {  // the whole verdict: no memset needed
    st->code = static_cast<int>(s.code);
    st->n = n;
    st->fraction = s.fraction;
    st->total = s.total;
    st->max_log_w = s.code == status_code::ok ? static_cast<double>(s.max_log_w) : 0.0;
    st->index = s.index;
    st->value = s.code == status_code::bad_log_weight || (s.code == status_code::max_not_largest && s.index < n)
                    ? static_cast<double>(lw[s.index])
                    : 0.0;
    if (given_max) st->max_given = *given_max;
    st->exp_mode = 0;  // the deterministic exp (fast calls do not take this path)
  }
  if (s.code != status_code::ok) return;
  const std::uint32_t step = step_from.get();
  if (Stratified) r.stratified(lw, n, s, k, step, a);
  else r.systematic(lw, n, s, k, step, a);
}

/// The comb kernel for scheme s (Kind) and exp mode (Fast).
template <class T, class Index, comb_kind Kind>
void launch_comb(bool fast, unsigned grid, cudaStream_t stream, const T* lw, std::size_t n, device_status* st,
                 const u128* sums, const u128* warp_offsets, key k, step_source step, std::uint32_t U,
                 const std::uint32_t* P, heavy_run* heavy, Index* a) {
  launch_early("comb_pass", fast ? comb_pass<T, Index, Kind, true> : comb_pass<T, Index, Kind, false>, grid,
               block_threads, 0, stream, lw, n, st, sums, warp_offsets, k, step, U, P, heavy, a);
}

}  // namespace

template <class T, class Index>
std::size_t comb_ancestors(void* d_temp, scheme s, const T* lw, std::size_t n, key k, step_source step, Index* a,
                           const int* gate, const double* given_max, bool fast, cudaStream_t stream) {
  const std::size_t tiles = tile_count(n);
  const bool sorted = s == scheme::multinomial_sorted;
  carve c(d_temp);
  auto* st = c.take<device_status>(1);
  auto* sums = c.take<u128>(tiles);
  auto* warp_offsets = c.take<u128>(tiles * warps_per_tile);
  auto* heavy = c.take<heavy_run>(heavy_slots);
  std::uint32_t* P = sorted ? c.take<std::uint32_t>(sorted_points(n).strata() + 1) : nullptr;
  void* points_temp = sorted ? c.take<char>(points_before_strata(nullptr, n, k, step, st, P, stream)) : nullptr;
  if (d_temp == nullptr) return c.bytes();
  if (comb_in_one_block(s, n) && !fast) {  // block::resampler has the deterministic exp only
    if (s == scheme::stratified) {
      small_comb_pass<T, Index, true><<<1, small_threads, 0, stream>>>(lw, n, k, step, a, st, gate, given_max);
    } else {
      small_comb_pass<T, Index, false><<<1, small_threads, 0, stream>>>(lw, n, k, step, a, st, gate, given_max);
    }
    check_launch("small_comb_pass");
    return c.bytes();
  }
  summarise(lw, n, std::numeric_limits<double>::quiet_NaN(), st, sums, nullptr, {}, stream, gate, warp_offsets,
            given_max, fast);
  const unsigned grid = static_cast<unsigned>(tiles);
  if (sorted) {
    points_before_strata(points_temp, n, k, step, st, P, stream);
    launch_comb<T, Index, comb_kind::multinomial_sorted>(fast, grid, stream, lw, n, st, sums, warp_offsets, k, step,
                                                         0u, P, heavy, a);
  } else if (s == scheme::stratified) {
    launch_comb<T, Index, comb_kind::stratified>(fast, grid, stream, lw, n, st, sums, warp_offsets, k, step, 0u,
                                                 nullptr, heavy, a);
  } else {
    // systematic's u, drawn once on the host (0 and unused when the step is on the device)
    const std::uint32_t U = step.device ? 0 : philox_stream(k, shared_index, step.value).next();
    launch_comb<T, Index, comb_kind::systematic>(fast, grid, stream, lw, n, st, sums, warp_offsets, k, step, U,
                                                 nullptr, heavy, a);
  }
  return c.bytes();
}

#define RESAMPLE_INSTANTIATE(T, Index)                                                                            \
  template std::size_t comb_ancestors<T, Index>(void*, scheme, const T*, std::size_t, key, step_source, Index*, \
                                                const int*, const double*, bool, cudaStream_t);
RESAMPLE_FOR_EACH_WEIGHT_AND_INDEX(RESAMPLE_INSTANTIATE)
#undef RESAMPLE_INSTANTIATE

}  // namespace resample::cuda::detail
