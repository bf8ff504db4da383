// Many particle systems in one call: one thread block per system, built from block/resampler.cuh.
// System b (lw[offsets[b], offsets[b+1])) is resampled exactly as a call of its own with key
// {seed, stream + b}: the bits of resample::cpu::ancestors_batched.
//
//   open_batched:       up to open_one_block_up_to systems, one block writes the whole status and
//                       checks the offsets (they must run from 0 to N and increase: the CPU's host
//                       check, on the device); beyond, a memset and check_offsets_pass's grid.
//   batched_warp_pass:  systematic and stratified when the systems average at most
//                       warp_systems_up_to particles: warp w resamples system w with
//                       warp/resampler.cuh (no block barriers; many systems in flight per SM).
//   batched_pass:       otherwise block b summarises its system (max, validation, Q), derives B
//                       (Metropolis) or the bound (rejection), and resamples.
//                       In both, a system with bad input records the first offending global index
//                       and writes nothing; the others are resampled (each system is a call of its
//                       own). The two comb kernels give the same bits: the choice is speed only.
//   batched_verdict:    the first failing system's error, in the CPU's message (local index), by
//                       the last block of the resampling kernel to finish (one launch fewer).
#include "detail/pipeline.cuh"
#include "detail/schemes.hpp"
#include "resample/cuda/block/resampler.cuh"
#include "resample/cuda/resample.hpp"
#include "resample/cuda/warp/resampler.cuh"

namespace resample::cuda {
namespace detail {
namespace {

constexpr std::size_t open_one_block_up_to = std::size_t{1} << 16;
constexpr int open_threads = 1024;

/// The offsets' two rules (the CPU's host check): they run from 0 to N, and system b is not empty.
__device__ inline bool offsets_span_wrong(const std::uint64_t* offsets, std::size_t systems, std::size_t n) {
  return offsets[0] != 0 || offsets[systems] != n;
}
__device__ inline bool system_empty(const std::uint64_t* offsets, std::size_t b) {
  return offsets[b + 1] <= offsets[b];
}

__global__ void __launch_bounds__(open_threads)
    open_batched(const std::uint64_t* offsets, std::size_t systems, std::size_t n, device_status* st) {
  unsigned long long bad = 0;  // ~b for the first empty system b, under max
  for (std::size_t b = threadIdx.x; b < systems; b += open_threads) {
    if (system_empty(offsets, b)) bad = max(bad, ~static_cast<unsigned long long>(b));
  }
  using reduce = cub::BlockReduce<unsigned long long, open_threads>;
  __shared__ typename reduce::TempStorage tmp;
  bad = reduce(tmp).Reduce(bad, max_u64{});
  if (threadIdx.x == 0) {
    device_status s{};
    if (offsets_span_wrong(offsets, systems, n)) s.code = static_cast<int>(status_code::batch_offsets);
    s.first_bad = bad;
    *st = s;
  }
}

__global__ void check_offsets_pass(const std::uint64_t* offsets, std::size_t systems, std::size_t n,
                                   device_status* st) {
  const std::size_t b = blockIdx.x * std::size_t{block_threads} + threadIdx.x;
  if (b == 0 && offsets_span_wrong(offsets, systems, n)) st->code = static_cast<int>(status_code::batch_offsets);
  if (b < systems && system_empty(offsets, b)) flag_first(&st->first_bad, b);
}

/// The options a batched kernel needs, as plain data.
struct options_view {
  bool has_bound;
  double bound;
  bool steps_given;
  std::uint64_t steps;
  double eps;
};

/// A failing system's report, packed so that one atomicMax keeps the lowest global index with
/// its kind: (2^56 - 1 - index) << 8 | kind. Kept in device_status::first_above.
__device__ inline unsigned long long pack_failure(std::size_t index, status_code why) {
  return ((((1ULL << 56) - 1) - index) << 8) | static_cast<unsigned long long>(why);
}

/// The first failing system's error (the status's slots: before batched_pass), by one thread.
template <class T>
__device__ void batched_verdict(const T* lw, const std::uint64_t* offsets, std::size_t systems, std::size_t n,
                                double bound, device_status* st) {
  volatile device_status* v = st;  // written by other blocks' atomics: read past L1
  st->n = n;
  st->bound = bound;
  if (v->code != 0) return;  // batch_offsets
  const unsigned long long first_bad = v->first_bad, first_above = v->first_above;
  if (first_bad != 0) {
    st->code = static_cast<int>(status_code::batch_system_empty);
    st->index = ~first_bad;
    return;
  }
  if (first_above == 0) return;
  const std::size_t g = ((1ULL << 56) - 1) - (first_above >> 8);
  std::size_t lo = 0, hi = systems;  // the system holding g: offsets[lo] <= g < offsets[lo + 1]
  while (hi - lo > 1) {
    const std::size_t mid = (lo + hi) / 2;
    if (offsets[mid] <= g) lo = mid;
    else hi = mid;
  }
  st->code = static_cast<int>(first_above & 0xff);
  st->index = g - offsets[lo];
  st->value = static_cast<double>(lw[g]);
  st->n = offsets[lo + 1] - offsets[lo];
}

/// A resampling kernel's end, in every thread of every block: the last block to get here writes
/// the verdict. The barrier orders the block's failure atomics before thread 0's fence and count
/// (the fence is cumulative over what the barrier made visible to it); the last block's fence
/// after the count orders its reads of the status after every block's.
template <class T>
__device__ void verdict_if_last(const T* lw, const std::uint64_t* offsets, std::size_t systems, std::size_t n,
                                double bound, device_status* st) {
  __syncthreads();
  if (threadIdx.x != 0) return;
  __threadfence();
  if (atomicAdd(&st->blocks_done, 1u) != gridDim.x - 1) return;
  __threadfence();
  batched_verdict(lw, offsets, systems, n, bound, st);
}

// Slots of device_status used by the batched call: first_bad = ~(first empty system) from
// open_batched or check_offsets_pass; first_above = the packed first failure from the resampling
// kernels; blocks_done = their blocks finished (verdict_if_last).
// One kernel for the comb schemes and one for the chains: together they needed 128 registers, two
// blocks per SM, and a block's latency (a system is small) then set the pace; apart, three (comb,
// 80 registers) or four (chains) fit.
template <class T, class Index, bool Comb>
__global__ void __launch_bounds__(block_threads, Comb ? 3 : 4)
    batched_pass(scheme s, const T* __restrict__ lw, const std::uint64_t* offsets, std::size_t systems,
                 std::size_t total, key k, std::uint32_t step, Index* a, options_view opt, device_status* st) {
  using resampler = block::resampler<T, Index, block_threads>;
  __shared__ typename resampler::TempStorage tmp;
  wait_for_previous_kernel();  // the opening's status
  [&] {  // the block's system; its returns are the block's, all threads together
    if (st->code != 0 || st->first_bad != 0) return;
    resampler r(tmp);
    const std::size_t begin = offsets[blockIdx.x];
    const std::size_t n = offsets[blockIdx.x + 1] - begin;
    const T* x = lw + begin;
    Index* out = a + begin;
    const key system_key{k.seed, k.stream + static_cast<std::uint32_t>(blockIdx.x)};
    const auto sm = r.summarise(x, n);
    std::size_t fail = n;
    status_code why = sm.code;
    double log_bound = static_cast<double>(sm.max_log_w);
    if (sm.code == status_code::bad_log_weight) fail = sm.index;
    else if (sm.code == status_code::all_weights_zero) fail = 0;
    else if (s == scheme::rejection && opt.has_bound && static_cast<double>(sm.max_log_w) > opt.bound) {
      log_bound = opt.bound;
      why = status_code::above_bound;
      for (std::size_t i = 0; i < n; ++i) {  // the first one, as the CPU
        if (static_cast<double>(x[i]) > opt.bound) {
          fail = i;
          break;
        }
      }
    } else if (opt.has_bound) {
      log_bound = opt.bound;
    }
    if (fail < n) {
      if (threadIdx.x == 0) atomicMax(&st->first_above, pack_failure(begin + fail, why));
      return;
    }
    if constexpr (Comb) {
      if (s == scheme::stratified) r.stratified(x, n, sm, system_key, step, out);
      else r.systematic(x, n, sm, system_key, step, out);
    } else if (s == scheme::rejection) {
      r.rejection(x, n, log_bound, system_key, step, out);
    } else {
      const std::uint64_t steps =
          opt.steps_given ? opt.steps : metropolis_steps_from_sum(sm.total, n, sm.fraction, opt.eps);
      r.metropolis(x, n, steps, s == scheme::megopolis, system_key, step, out);
    }
  }();
  verdict_if_last(lw, offsets, systems, total, opt.bound, st);
}

/// The warp kernel's systems: at most this many particles on average (beyond, a system is worth a
/// block), 4 warps per block.
constexpr std::size_t warp_systems_up_to = 8192;
constexpr int warps_per_block = 4;

// Four blocks (16 warps) per SM: 128 registers, a 100-byte spill, 37 KB of shared memory per block
// (the resident weights). Measured on the H100 at 4096 x 1024 (systematic / stratified, us): 49.1
// / 68.7; three blocks 53.5 / 72.6, five 50.8 / 75.0; the weights in registers instead (168
// registers, three blocks) 57.0 / 79.9 in the same run.
template <class T, class Index>
__global__ void __launch_bounds__(32 * warps_per_block, 4)
    batched_warp_pass(bool stratified, const T* __restrict__ lw, const std::uint64_t* offsets, std::size_t systems,
                      std::size_t total, key k, std::uint32_t step, Index* a, double bound, device_status* st) {
  using resampler = warp::resampler<T, Index, 8, 4>;  // 8 items per lane, 1024 particles resident
  __shared__ typename resampler::TempStorage tmp[warps_per_block];
  wait_for_previous_kernel();  // the opening's status
  [&] {  // the warp's system; its returns are the warp's (no block barriers inside)
    if (st->code != 0 || st->first_bad != 0) return;
    const std::size_t b = blockIdx.x * std::size_t{warps_per_block} + threadIdx.x / 32;
    if (b >= systems) return;
    resampler r(tmp[threadIdx.x / 32]);
    const std::size_t begin = offsets[b];
    const std::size_t n = offsets[b + 1] - begin;
    const T* x = lw + begin;
    const key system_key{k.seed, k.stream + static_cast<std::uint32_t>(b)};
    const auto sm = r.summarise(x, n);
    if (sm.code != status_code::ok) {
      const std::size_t fail = sm.code == status_code::bad_log_weight ? sm.index : 0;
      if (threadIdx.x % 32 == 0) atomicMax(&st->first_above, pack_failure(begin + fail, sm.code));
      return;
    }
    if (stratified) r.stratified(x, n, sm, system_key, step, a + begin);
    else r.systematic(x, n, sm, system_key, step, a + begin);
  }();
  verdict_if_last(lw, offsets, systems, total, bound, st);
}

}  // namespace
}  // namespace detail

template <class T, class Index>
void ancestors_batched(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, const std::uint64_t* offsets,
                       std::size_t systems, std::size_t n, key k, std::uint32_t step, Index* a, const options& opt,
                       cudaStream_t stream) {
  if (systems == 0) throw_bad_batch_offsets();
  if (s != scheme::systematic && s != scheme::stratified && s != scheme::metropolis && s != scheme::megopolis &&
      s != scheme::rejection) {
    throw invalid_input("the cuda backend's batched call supports systematic, stratified, metropolis, megopolis and "
                        "rejection; got " + std::string(name(s)));
  }
  check_scheme_options(s, opt);
  if (opt.fast_exp) throw invalid_input("options::fast_exp is not supported by the batched call");
  if (opt.device_gate) throw invalid_input("options::device_gate is not supported by the batched call");
  if (opt.device_max_log_weight) {
    throw invalid_input("options::device_max_log_weight is not supported by the batched call");
  }
  if (opt.device_step) throw invalid_input("options::device_step is not supported by the batched call");
  if (n >= (std::size_t{1} << 56)) throw invalid_input("batched call: N must be below 2^56");
  if (systems > 0x7fffffffULL) throw invalid_input("batched call: too many systems for one grid");
  detail::carve c(d_temp);
  auto* st = c.take<device_status>(1);
  if (detail::measure_only(d_temp, temp_bytes, c.bytes())) return;
  const detail::options_view view{opt.rejection_log_bound.has_value(), opt.rejection_log_bound.value_or(0.0),
                                  opt.metropolis_steps.has_value(), opt.metropolis_steps.value_or(0),
                                  opt.metropolis_eps};
  if (systems <= detail::open_one_block_up_to) {
    detail::open_batched<<<1, detail::open_threads, 0, stream>>>(offsets, systems, n, st);
    check_launch("open_batched");
  } else {
    check(cudaMemsetAsync(st, 0, sizeof(device_status), stream), "cudaMemsetAsync (status)");
    detail::check_offsets_pass<<<detail::grid_for(systems), detail::block_threads, 0, stream>>>(offsets, systems, n,
                                                                                               st);
    check_launch("check_offsets_pass");
  }
  const bool comb = s == scheme::systematic || s == scheme::stratified;
  if (comb && n <= systems * detail::warp_systems_up_to) {
    const auto blocks = static_cast<unsigned>((systems + detail::warps_per_block - 1) / detail::warps_per_block);
    detail::launch_early("batched_warp_pass", detail::batched_warp_pass<T, Index>, blocks, 32 * detail::warps_per_block,
                         0, stream, s == scheme::stratified, lw, offsets, systems, n, k, step, a, view.bound, st);
  } else if (comb) {
    detail::launch_early("batched_pass", detail::batched_pass<T, Index, true>, static_cast<unsigned>(systems),
                         detail::block_threads, 0, stream, s, lw, offsets, systems, n, k, step, a, view, st);
  } else {
    detail::launch_early("batched_pass", detail::batched_pass<T, Index, false>, static_cast<unsigned>(systems),
                         detail::block_threads, 0, stream, s, lw, offsets, systems, n, k, step, a, view, st);
  }
}

#define RESAMPLE_INSTANTIATE(T, Index)                                                                           \
  template void ancestors_batched<T, Index>(void*, std::size_t&, scheme, const T*, const std::uint64_t*,        \
                                            std::size_t, std::size_t, key, std::uint32_t, Index*, const options&, \
                                            cudaStream_t);
RESAMPLE_FOR_EACH_WEIGHT_AND_INDEX(RESAMPLE_INSTANTIATE)
#undef RESAMPLE_INSTANTIATE

}  // namespace resample::cuda
