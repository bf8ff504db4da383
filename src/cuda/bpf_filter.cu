// The particle filter on the GPU: resample::bpf::cuda_filter (include/resample/bpf/cuda_filter.hpp).
// CPU twin: resample::bpf::particle_filter (particle_filter.hpp), whose tick it follows step for
// step. A tick t > 0 is one CUDA graph, captured once and replayed (the tick, the observation and
// the resampler's step are read from device memory), with no host wait:
//
//   first_stage         (auxiliary only) fs_i = log ghat(y_t | x_i), v_i = lw_i + fs_i, and each
//                       chunk's summary of v (chunk_statistics.hpp)
//   finish_first_stage  (auxiliary only) one block: log-sum-exp and ESS of v; the ESS test
//   cuda::ancestors     a = the scheme's draw on v (auxiliary) or lw, key (seed), step t (from the
//                       device: options::device_step), gated by the ESS test (options::device_gate):
//                       nothing runs on ticks that keep their weights
//   gather_propagate    x'_j = propagate(x_{a_j} (+ jitter), or x_j if not resampling), lw'_j =
//                       (0, -fs_{a_j} or lw_j) + log g(y_t | x'_j); then, in the same kernel, the
//                       block's chunk summary of (lw', x'): max, first NaN / +inf, and the sums of
//                       w, w^2, w d, w d^2, w 1{x <= truth}
//   finish_tick         one block: the chunks combined (chunk_statistics.hpp) -> log-sum-exp, ESS,
//                       mean, sd, PIT, the increment; bootstrap: the next tick's ESS test
//
// A chunk is a block: 256 threads, thread l holding particles 4096 c + l + 256 k (coalesced), and
// the lanes' tree in shared memory (10 KiB) -- the CPU's order, hence its bits. Refusals (a NaN or
// +inf log-weight, every weight zero, a refused resampler call) are kept with their tick, and
// collect() reports the first in the CPU filter's words. The Philox counters are the CPU filter's.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <cub/block/block_reduce.cuh>

#include "resample/bpf/cuda_filter.hpp"
#include "resample/bpf/linear_gaussian_model.hpp"
#include "resample/bpf/sv_model.hpp"
#include "resample/cuda/error.hpp"
#include "resample/cuda/resample.hpp"

namespace resample::bpf {
namespace {

constexpr int threads = detail::lanes;  // a chunk per block, a lane per thread
static_assert(detail::chunk == std::size_t{threads} * detail::per_lane);
constexpr double inf = std::numeric_limits<double>::infinity();

/// The filter's device scalars.
struct scalars {
  std::uint32_t tick;      ///< the tick being run (read by every kernel; advanced by finish_tick)
  int resample;            ///< whether this tick resamples (the ESS test, made on the device)
  double lse_equal;        ///< log sum exp of N zeros (detail::log_sum_exp_of_equal)
  double lse_after;        ///< log sum exp of the weights after the latest tick
  double ess_after;
  double mean;             ///< the latest filtered mean: the shift of the next tick's sums
  double lse_first_stage;  ///< auxiliary: of v
  double lse_base;         ///< what this tick's second-stage increment is measured from
  double increment_first;  ///< auxiliary: log sum exp(v) - log sum exp(lw)
  double log_likelihood;
  unsigned failed_tick;        ///< the first tick with a refusal, or ~0
  cuda::device_status failed;  ///< that refusal (bad weights, or the resampler's verdict)
  double failed_state;         ///< for a bad log-weight: the particle's state, for the message
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

using detail::chunk_summary;
using detail::moments;

__device__ inline void record(scalars* s, const cuda::device_status& st, double state) {
  if (s->failed_tick != ~0u) return;
  s->failed_tick = s->tick;
  s->failed = st;
  s->failed_state = state;
}

/// Keeps a library call's refusal (its verdict `st`); `skipped` (a closed gate) is not one.
__device__ inline void record_call(scalars* s, const cuda::device_status* st) {
  if (st->code == 0 || st->code == static_cast<int>(cuda::status_code::skipped)) return;
  record(s, *st, 0.0);
}

/// Keeps the filter's refusal of a tick's weights: a NaN / +inf at `t.first_bad`, or all zero.
__device__ inline void record_weights(scalars* s, const detail::tick_statistics& t, const double* lw, const double* x) {
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

/// The block's chunk summary (chunk_statistics.hpp) of (lw, x) over the chunk that starts at
/// `begin`; `my_max` / `my_bad` are what this thread saw among its own particles, which it wrote to
/// lw and x itself (so it reads them back from L2 without a fence).
__device__ void summarise_chunk(const double* lw, const double* x, std::size_t begin, std::size_t n, double my_max,
                                unsigned long long my_bad, double shift, double truth, chunk_summary* out) {
  using reduce_max = cub::BlockReduce<double, threads>;
  using reduce_min = cub::BlockReduce<unsigned long long, threads>;
  __shared__ union {
    typename reduce_max::TempStorage max;
    typename reduce_min::TempStorage min;
  } tmp;
  __shared__ moments lane[threads];
  __shared__ double chunk_max;
  __shared__ unsigned long long chunk_bad;
  const double m = reduce_max(tmp.max).Reduce(my_max, [](double a, double b) { return a > b ? a : b; });
  __syncthreads();
  const unsigned long long bad =
      reduce_min(tmp.min).Reduce(my_bad, [](unsigned long long a, unsigned long long b) { return a < b ? a : b; });
  if (threadIdx.x == 0) {
    chunk_max = m;
    chunk_bad = bad;
  }
  __syncthreads();
  moments sums{};
  if (chunk_bad == detail::no_index && chunk_max > -inf) {
    for (std::size_t i = begin + threadIdx.x; i < min(n, begin + detail::chunk); i += threads) {
      const double w = deterministic_exp_nonpositive(lw[i] - chunk_max);
      if (w > 0.0) detail::add_particle(sums, w, x[i] - shift, x[i] <= truth);
    }
  }
  lane[threadIdx.x] = sums;
  for (int h = threads / 2; h >= 1; h /= 2) {
    __syncthreads();
    if (threadIdx.x < h) lane[threadIdx.x] = lane[threadIdx.x] + lane[threadIdx.x + h];
  }
  if (threadIdx.x == 0) *out = chunk_summary{chunk_max, chunk_bad, lane[0]};
}

/// Particle i's contribution to its thread's max and first bad index.
__device__ inline void observe(double lw, std::size_t i, double& my_max, unsigned long long& my_bad) {
  if (!(lw < inf)) my_bad = min(my_bad, static_cast<unsigned long long>(i));
  else if (lw > my_max) my_max = lw;
}

/// The tick's statistics from every chunk's summary, in combine_chunks' order, in one block.
__device__ detail::tick_statistics combine_chunks(const chunk_summary* chunks, std::size_t count, double shift,
                                                  bool has_truth) {
  using reduce_max = cub::BlockReduce<double, threads>;
  using reduce_min = cub::BlockReduce<unsigned long long, threads>;
  __shared__ union {
    typename reduce_max::TempStorage max;
    typename reduce_min::TempStorage min;
  } tmp;
  __shared__ moments lane[threads];
  __shared__ double M_s;
  __shared__ unsigned long long bad_s;
  double m = -inf;
  unsigned long long bad = detail::no_index;
  for (std::size_t c = threadIdx.x; c < count; c += threads) {
    m = chunks[c].max > m ? chunks[c].max : m;
    bad = min(bad, static_cast<unsigned long long>(chunks[c].first_bad));
  }
  m = reduce_max(tmp.max).Reduce(m, [](double a, double b) { return a > b ? a : b; });
  __syncthreads();
  bad = reduce_min(tmp.min).Reduce(bad, [](unsigned long long a, unsigned long long b) { return a < b ? a : b; });
  if (threadIdx.x == 0) {
    M_s = m;
    bad_s = bad;
  }
  __syncthreads();
  detail::tick_statistics t;
  const double M = M_s;
  t.first_bad = bad_s;
  t.all_zero = t.first_bad == detail::no_index && M == -inf;
  if (t.first_bad != detail::no_index || t.all_zero) return t;
  moments acc{};
  for (std::size_t c = threadIdx.x; c < count; c += threads) {
    if (chunks[c].max > -inf) detail::add_chunk(acc, chunks[c].sums, deterministic_exp_nonpositive(chunks[c].max - M));
  }
  lane[threadIdx.x] = acc;
  for (int h = threads / 2; h >= 1; h /= 2) {
    __syncthreads();
    if (threadIdx.x < h) lane[threadIdx.x] = lane[threadIdx.x] + lane[threadIdx.x + h];
  }
  if (threadIdx.x == 0) detail::finish_statistics(t, M, lane[0], shift, has_truth);
  return t;  // complete in thread 0 only
}

__device__ inline double truth_at(const tick_io& io, std::uint32_t t) {
  return io.truth ? io.truth[t] : std::numeric_limits<double>::quiet_NaN();
}

template <class Model>
__global__ void __launch_bounds__(threads) initial_weight(Model model, key k, std::size_t n, tick_io io, double* x,
                                                          double* lw, chunk_summary* chunks) {
  const std::size_t begin = blockIdx.x * detail::chunk;
  const double y = io.y[0];
  double my_max = -inf;
  unsigned long long my_bad = detail::no_index;
  for (std::size_t i = begin + threadIdx.x; i < min(n, begin + detail::chunk); i += threads) {
    philox_stream rng(k, detail::propagation_index + i, 0);
    x[i] = model.initial(rng);
    lw[i] = model.log_likelihood(y, x[i]);
    observe(lw[i], i, my_max, my_bad);
  }
  summarise_chunk(lw, x, begin, n, my_max, my_bad, 0.0, truth_at(io, 0), chunks + blockIdx.x);
}

template <class Model>
__global__ void __launch_bounds__(threads) first_stage(Model model, std::size_t n, const scalars* s, tick_io io,
                                                       const double* x, const double* lw, double* fs, double* v,
                                                       chunk_summary* chunks) {
  const std::size_t begin = blockIdx.x * detail::chunk;
  const double y = io.y[s->tick];
  double my_max = -inf;
  unsigned long long my_bad = detail::no_index;
  for (std::size_t i = begin + threadIdx.x; i < min(n, begin + detail::chunk); i += threads) {
    fs[i] = model.log_first_stage(y, x[i]);
    v[i] = lw[i] + fs[i];
    observe(v[i], i, my_max, my_bad);
  }
  summarise_chunk(v, x, begin, n, my_max, my_bad, 0.0, std::numeric_limits<double>::quiet_NaN(), chunks + blockIdx.x);
}

/// Auxiliary: the first stage's log-sum-exp and the ESS test on it.
__global__ void __launch_bounds__(threads) finish_first_stage(const chunk_summary* chunks, std::size_t count,
                                                              const double* x, const double* v, double threshold,
                                                              std::size_t n, scalars* s) {
  const auto t = combine_chunks(chunks, count, 0.0, false);
  if (threadIdx.x != 0) return;
  if (t.first_bad != detail::no_index || t.all_zero) {
    record_weights(s, t, v, x);
    s->resample = 0;
    return;
  }
  s->lse_first_stage = t.log_sum_exp;
  s->increment_first = t.log_sum_exp - s->lse_after;
  decide(s, t.ess, t.log_sum_exp, threshold, n);
}

template <class Model>
__global__ void __launch_bounds__(threads)
    gather_propagate(Model model, key k, std::size_t n, double jitter, bool auxiliary, tick_io io,
                     const std::int32_t* ancestors, const cuda::device_status* st, const double* x, const double* lw,
                     const double* fs, double* x_out, double* lw_out, scalars* s, chunk_summary* chunks) {
  const std::uint32_t tick = s->tick;
  const double y = io.y[tick];
  // `st`: the resampler's verdict. A refusal (a rejection bound below a weight) wrote no ancestors:
  // it is recorded, and the particles move on unresampled until collect() reports it.
  const bool resampled = s->resample && st->code == 0;
  if (blockIdx.x == 0 && threadIdx.x == 0 && s->resample) record_call(s, st);
  const std::size_t begin = blockIdx.x * detail::chunk;
  double my_max = -inf;
  unsigned long long my_bad = detail::no_index;
  for (std::size_t j = begin + threadIdx.x; j < min(n, begin + detail::chunk); j += threads) {
    double state, weight;
    if (resampled) {
      const auto a = static_cast<std::size_t>(ancestors[j]);
      state = x[a];
      if (jitter > 0.0) {
        philox_stream rng(k, detail::jitter_index + j, tick);
        state = resample::detail::fused(jitter, standard_normal(rng), state);
      }
      weight = auxiliary ? -fs[a] : 0.0;
    } else {
      state = x[j];
      weight = lw[j];
    }
    philox_stream rng(k, detail::propagation_index + j, tick);
    state = model.propagate(state, rng);
    weight += model.log_likelihood(y, state);
    x_out[j] = state;
    lw_out[j] = weight;
    observe(weight, j, my_max, my_bad);
  }
  summarise_chunk(lw_out, x_out, begin, n, my_max, my_bad, s->mean, truth_at(io, tick), chunks + blockIdx.x);
}

/// One block: the tick's statistics, its outputs and increment; bootstrap: the next tick's ESS
/// test. Then the tick counter moves on.
__global__ void __launch_bounds__(threads) finish_tick(const chunk_summary* chunks, std::size_t count, const double* x,
                                                       const double* lw, double threshold, std::size_t n,
                                                       bool auxiliary, tick_io io, scalars* s) {
  const std::uint32_t tick = s->tick;
  const bool first = tick == 0;
  const bool has_truth = io.truth != nullptr && io.truth[tick] == io.truth[tick];
  const double shift = first ? 0.0 : s->mean;
  const auto t = combine_chunks(chunks, count, shift, has_truth);
  if (threadIdx.x != 0) return;
  io.resampled[tick] = first ? 0 : s->resample;
  if (t.first_bad != detail::no_index || t.all_zero) {
    record_weights(s, t, lw, x);
    s->resample = 0;
  } else {
    // Summed in the CPU filter's order: first stage, then (after - base).
    const double increment = (first || !auxiliary ? 0.0 : s->increment_first) +
                             (t.log_sum_exp - (first ? s->lse_equal : s->lse_base));
    io.increment[tick] = increment;
    io.mean[tick] = t.mean;
    io.sd[tick] = t.sd;
    io.ess[tick] = t.ess;
    io.pit[tick] = t.pit;
    s->log_likelihood += increment;
    s->lse_after = t.log_sum_exp;
    s->ess_after = t.ess;
    s->mean = t.mean;
    if (!auxiliary) decide(s, t.ess, t.log_sum_exp, threshold, n);
  }
  s->tick = tick + 1;
}

unsigned chunks_for(std::size_t n) { return static_cast<unsigned>((n + detail::chunk - 1) / detail::chunk); }

/// A device array, freed with its owner (so a constructor that throws half-way leaks nothing).
template <class X>
class device_array {
 public:
  device_array() = default;
  explicit device_array(std::size_t count) {
    if (count) cuda::check(cudaMalloc(reinterpret_cast<void**>(&p_), count * sizeof(X)), "cudaMalloc (bpf)");
  }
  device_array(device_array&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  device_array& operator=(device_array&& o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~device_array() {
    if (p_) (void)cudaFree(p_);
  }
  [[nodiscard]] X* get() const { return p_; }

 private:
  X* p_ = nullptr;
};

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
  cudaStream_t capture_stream = nullptr;  ///< private: the legacy default stream cannot be captured
  key k;
  std::size_t n = 0, chunk_count = 0;
  std::size_t temp_bytes = 0;
  std::size_t ticks = 0, capacity = 0;
  bool truth_given = false;
  device_array<double> x_a, lw_a, x_next_a, lw_next_a, fs_a, v_a, y_a, truth_a;
  device_array<std::int32_t> ancestors_a;
  device_array<chunk_summary> chunks_a;
  device_array<scalars> s_a;
  device_array<unsigned char> temp_a;
  device_array<double> increment_a, mean_a, sd_a, ess_a, pit_a;
  device_array<int> resampled_a;
  scalars* s = nullptr;
  /// Ticks t > 0: graph[t % 2] (the two graphs differ in which buffers hold the particles).
  tick_graph graph[2];

  impl(const Model& m, const filter_options& o, cudaStream_t st) : model(m), opt(o), stream(st) {
    detail::check_filter_options(o);
    if (o.particles > 0x7fffffffu) throw invalid_input("the cuda filter supports at most 2^31 - 1 particles");
    n = o.particles;
    chunk_count = chunks_for(n);
    k = {static_cast<std::uint32_t>(o.seed), static_cast<std::uint32_t>(o.seed >> 32)};
    // Sizes first: a bad scheme option throws here, before anything is allocated.
    cuda::ancestors<double, std::int32_t>(nullptr, temp_bytes, o.resampler, nullptr, n, k, 0, nullptr, o.resampling,
                                          stream);
    x_a = device_array<double>(n);
    lw_a = device_array<double>(n);
    x_next_a = device_array<double>(n);
    lw_next_a = device_array<double>(n);
    const bool auxiliary = o.kind == filter_kind::auxiliary;
    fs_a = device_array<double>(auxiliary ? n : 0);  // the first stage's buffers
    v_a = device_array<double>(auxiliary ? n : 0);
    ancestors_a = device_array<std::int32_t>(n);
    chunks_a = device_array<chunk_summary>(chunk_count);
    s_a = device_array<scalars>(1);
    temp_a = device_array<unsigned char>(temp_bytes);
    s = s_a.get();
    scalars init{};
    init.lse_equal = detail::log_sum_exp_of_equal(n);
    init.failed_tick = ~0u;
    // In stream order (a pageable source is staged before the call returns).
    cuda::check(cudaMemcpyAsync(s, &init, sizeof init, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (bpf)");
    cuda::check(cudaStreamCreateWithFlags(&capture_stream, cudaStreamNonBlocking), "cudaStreamCreate (bpf)");
  }

  ~impl() {
    for (auto& g : graph) g.reset();
    if (capture_stream) (void)cudaStreamDestroy(capture_stream);
  }
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;

  [[nodiscard]] tick_io io() const {
    return {y_a.get(),  truth_given ? truth_a.get() : nullptr, increment_a.get(), mean_a.get(), sd_a.get(),
            ess_a.get(), pit_a.get(), resampled_a.get()};
  }

  /// Room for `total` ticks of observations, outputs and, once any were given, true states. Grown
  /// outside the tick loop: it waits for the stream, and the graphs, which hold the old pointers,
  /// are captured again.
  void reserve(std::size_t total, bool with_truth) {
    const bool new_truth = with_truth && !truth_given;
    if (total <= capacity && !new_truth) return;
    cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (bpf)");
    for (auto& g : graph) g.reset();
    const std::size_t grown = std::max({total, 2 * capacity, std::size_t{64}});
    auto grow = [&](auto& array, std::size_t keep) {
      using X = std::remove_pointer_t<decltype(array.get())>;
      device_array<X> bigger(grown);
      if (array.get() && keep) {
        cuda::check(cudaMemcpy(bigger.get(), array.get(), keep * sizeof(X), cudaMemcpyDeviceToDevice), "cudaMemcpy (bpf)");
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
      device_array<double> fresh(capacity);
      const std::vector<double> nan(ticks, std::numeric_limits<double>::quiet_NaN());
      if (ticks) {
        cuda::check(cudaMemcpy(fresh.get(), nan.data(), ticks * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy (bpf)");
      }
      truth_a = std::move(fresh);
    }
  }

  /// The particles' buffers (x, lw) a tick t > 0 of parity p = t % 2 reads (next = false) or writes:
  /// tick 0 writes x_a, tick 1 reads it and writes x_next_a, tick 2 reads that, and so on.
  [[nodiscard]] std::pair<double*, double*> states(int p, bool next) const {
    const bool second = (p == 1) == next;
    return second ? std::pair{x_next_a.get(), lw_next_a.get()} : std::pair{x_a.get(), lw_a.get()};
  }

  void enqueue_first_tick() {
    initial_weight<<<chunks_for(n), threads, 0, stream>>>(model, k, n, io(), x_a.get(), lw_a.get(), chunks_a.get());
    cuda::check_launch("bpf initial_weight");
    finish_tick<<<1, threads, 0, stream>>>(chunks_a.get(), chunk_count, x_a.get(), lw_a.get(), opt.ess_threshold, n,
                                           opt.kind == filter_kind::auxiliary, io(), s);
    cuda::check_launch("bpf finish_tick");
  }

  /// A tick t > 0 of parity p (t % 2): the particles move from states(p, false) to states(p, true).
  void enqueue_tick(int p, cudaStream_t on) {
    const bool auxiliary = opt.kind == filter_kind::auxiliary;
    const auto [x, lw] = states(p, false);
    const auto [x_out, lw_out] = states(p, true);
    const unsigned grid = chunks_for(n);
    const double* weights = lw;
    if (auxiliary) {
      first_stage<<<grid, threads, 0, on>>>(model, n, s, io(), x, lw, fs_a.get(), v_a.get(), chunks_a.get());
      cuda::check_launch("bpf first_stage");
      finish_first_stage<<<1, threads, 0, on>>>(chunks_a.get(), chunk_count, x, v_a.get(), opt.ess_threshold, n, s);
      cuda::check_launch("bpf finish_first_stage");
      weights = v_a.get();
    }
    // Drawn only where the ESS test said so, at step t: both read from the device when the call runs.
    resample::options gated = opt.resampling;
    gated.device_gate = &s->resample;
    gated.device_step = &s->tick;
    std::size_t bytes = temp_bytes;
    cuda::ancestors<double, std::int32_t>(temp_a.get(), bytes, opt.resampler, weights, n, k, 0, ancestors_a.get(), gated,
                                          on);
    const auto* status = reinterpret_cast<const cuda::device_status*>(temp_a.get());
    gather_propagate<<<grid, threads, 0, on>>>(model, k, n, opt.jitter, auxiliary, io(), ancestors_a.get(), status, x,
                                               lw, fs_a.get(), x_out, lw_out, s, chunks_a.get());
    cuda::check_launch("bpf gather_propagate");
    finish_tick<<<1, threads, 0, on>>>(chunks_a.get(), chunk_count, x_out, lw_out, opt.ess_threshold, n, auxiliary, io(),
                                       s);
    cuda::check_launch("bpf finish_tick");
  }

  void tick(std::size_t t) {
    if (t == 0) return enqueue_first_tick();
    const int p = static_cast<int>(t % 2);
    if (!graph[p].ready()) graph[p].capture(capture_stream, [&](cudaStream_t on) { enqueue_tick(p, on); });
    graph[p].launch(stream);
  }
};

template <class Model>
cuda_filter<Model>::cuda_filter(const Model& model, const filter_options& opt, cudaStream_t stream)
    : impl_(std::make_unique<impl>(model, opt, stream)) {}

template <class Model>
cuda_filter<Model>::~cuda_filter() = default;

template <class Model>
void cuda_filter<Model>::enqueue(std::span<const double> y, std::span<const double> truth) {
  impl& m = *impl_;
  detail::check_observations(y, truth, m.ticks);
  if (m.ticks + y.size() > 0xffffffffu) throw invalid_input("the filter supports at most 2^32 - 1 ticks");
  m.reserve(m.ticks + y.size(), !truth.empty());
  // This call's observations and true states (NaN where none are given), in stream order. A
  // pageable source is staged before cudaMemcpyAsync returns, so `slice` may go out of scope.
  cuda::check(cudaMemcpyAsync(m.y_a.get() + m.ticks, y.data(), y.size() * sizeof(double), cudaMemcpyHostToDevice,
                              m.stream),
              "cudaMemcpyAsync (bpf observations)");
  if (m.truth_given) {
    std::vector<double> slice(y.size(), std::numeric_limits<double>::quiet_NaN());
    std::copy(truth.begin(), truth.end(), slice.begin());
    cuda::check(cudaMemcpyAsync(m.truth_a.get() + m.ticks, slice.data(), slice.size() * sizeof(double),
                                cudaMemcpyHostToDevice, m.stream),
                "cudaMemcpyAsync (bpf truth)");
  }
  for (std::size_t t = 0; t < y.size(); ++t) {
    m.tick(m.ticks);
    ++m.ticks;
  }
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
