// The particle filter on the GPU: resample::bpf::cuda_filter (include/resample/bpf/cuda_filter.hpp).
// CPU twin: resample::bpf::particle_filter (particle_filter.hpp), whose tick it follows step for
// step. A tick t > 0 is, on one stream, with no host wait:
//
//   first_stage        (auxiliary only) fs_i = log ghat(y_t | x_i), v_i = lw_i + fs_i; then the
//                      library's weight_statistics(v) (log-sum-exp and ESS) into device scalars
//   decide             one thread: resample iff threshold >= 1 or ESS < threshold N; the
//                      log-sum-exp the increment is measured from
//   cuda::ancestors    a = the scheme's draw on v (auxiliary) or lw, key (seed), step t, gated by
//                      the decision (options::device_gate): nothing runs on ticks that keep weights
//   gather_propagate   x'_j = propagate(x_{a_j} (+ jitter), or x_j if not resampling), lw'_j =
//                      (0, -fs_{a_j} or lw_j) + log g(y_t | x'_j); the resampler's verdict recorded
//   weight_statistics  log-sum-exp and ESS of lw' (the library's exact sums, the CPU's bits)
//   summary_partials   sum w, w (x - c), w (x - c)^2, w 1{x <= truth}, w = exp(lw - LSE), per
//                      block of a fixed grid (grid-stride)
//   finish_tick        one block: those sums in block order -> mean, sd, PIT; the increment; the
//                      verdict of weight_statistics recorded (NaN / +inf, every weight zero)
//
// The library's checks are the filter's: the first refused call is kept with its tick, and
// collect() reports it in the CPU filter's words.
//
// The other particle kernels are one thread per particle, 256 per block. The Philox counters are
// the CPU filter's (particle_filter.hpp), so the draws are the same.
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

constexpr int threads = 256;
constexpr std::size_t summary_blocks = 1056;  // 8 per SM on an H100; a fixed grid keeps the sums' order fixed

/// The filter's device scalars.
struct scalars {
  double lse_equal;        ///< log sum exp of N zeros (detail::log_sum_exp_of_equal)
  double lse_after;        ///< log sum exp of the weights after the latest tick
  double ess_after;
  double lse_first_stage;  ///< auxiliary: of v
  double ess_first_stage;
  double lse_base;         ///< what this tick's second-stage increment is measured from
  double increment_first;  ///< auxiliary: log sum exp(v) - log sum exp(lw)
  double log_likelihood;
  int resample;
  unsigned failed_tick;          ///< the first tick a library call refused, or ~0
  cuda::device_status failed;    ///< that call's verdict (the refused weights, or the resampler's)
  double failed_state;           ///< for a bad log-weight: the particle's state, for the message
};

/// Per-tick outputs, on the device until collect().
struct tick_outputs {
  double* increment;
  double* mean;
  double* sd;
  double* ess;
  double* pit;
  int* resampled;
};

struct partial {
  double w, wx, wxx, below;
};

__host__ __device__ inline partial operator+(const partial& a, const partial& b) {
  return {a.w + b.w, a.wx + b.wx, a.wxx + b.wxx, a.below + b.below};
}

/// Keeps the first refusal of a library call of the filter (its verdict `st`, at `tick`); the
/// library's own checks are the filter's, so no kernel of the filter tests the weights again.
__device__ inline void record_failure(scalars* s, const cuda::device_status* st, std::uint32_t tick, const double* x) {
  if (st->code == 0 || st->code == static_cast<int>(cuda::status_code::skipped) || s->failed_tick != ~0u) return;
  s->failed_tick = tick;
  s->failed = *st;
  s->failed_state = st->code == static_cast<int>(cuda::status_code::bad_log_weight) ? x[st->index] : 0.0;
}

template <class Model>
__global__ void __launch_bounds__(threads) initial_weight(Model model, key k, std::size_t n, double y, double* x,
                                                          double* lw) {
  const std::size_t i = blockIdx.x * std::size_t{threads} + threadIdx.x;
  if (i >= n) return;
  philox_stream rng(k, detail::propagation_index + i, 0);
  x[i] = model.initial(rng);
  lw[i] = model.log_likelihood(y, x[i]);
}

template <class Model>
__global__ void __launch_bounds__(threads) first_stage(Model model, std::size_t n, double y, const double* x,
                                                       const double* lw, double* fs, double* v) {
  const std::size_t i = blockIdx.x * std::size_t{threads} + threadIdx.x;
  if (i >= n) return;
  fs[i] = model.log_first_stage(y, x[i]);
  v[i] = lw[i] + fs[i];
}

/// `st`: the status of the last weight_statistics call (the first stage's, for the auxiliary
/// filter). After a refusal nothing is resampled: the ancestors would not be drawn.
__global__ void decide(scalars* s, const cuda::device_status* st, const double* x, std::uint32_t tick, double threshold,
                       std::size_t n, bool auxiliary) {
  if (auxiliary) record_failure(s, st, tick, x);
  const double ess = auxiliary ? s->ess_first_stage : s->ess_after;
  const bool resample =
      s->failed_tick == ~0u && (threshold >= 1.0 || ess < threshold * static_cast<double>(n));
  s->resample = resample;
  s->increment_first = auxiliary ? s->lse_first_stage - s->lse_after : 0.0;
  s->lse_base = resample ? s->lse_equal : (auxiliary ? s->lse_first_stage : s->lse_after);
}

template <class Model>
__global__ void __launch_bounds__(threads)
    gather_propagate(Model model, key k, std::size_t n, std::uint32_t tick, double y, double jitter, bool auxiliary,
                     const std::int32_t* ancestors, const cuda::device_status* st, const double* x, const double* lw,
                     const double* fs, double* x_out, double* lw_out, scalars* s) {
  const std::size_t j = blockIdx.x * std::size_t{threads} + threadIdx.x;
  if (j >= n) return;
  // `st`: the resampler's verdict. A refusal (a rejection bound below a weight) wrote no ancestors:
  // it is recorded, and the particles move on unresampled until collect() reports it.
  if (j == 0 && s->resample) record_failure(s, st, tick, x);
  double state, weight;
  if (s->resample && st->code == 0) {
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
}

/// Shifted sums (x - c, c = x_0) keep the variance free of cancellation. Grid-stride over a fixed
/// grid (summary_blocks), so finish_tick adds few partials, in block order.
__global__ void __launch_bounds__(threads) summary_partials(std::size_t n, const double* x, const double* lw,
                                                            const scalars* s, const double* truth, std::uint32_t tick,
                                                            partial* out) {
  using reduce = cub::BlockReduce<partial, threads>;
  __shared__ typename reduce::TempStorage temp;
  const double lse = s->lse_after, shift = x[0];
  const double below = truth != nullptr ? truth[tick] : std::numeric_limits<double>::quiet_NaN();
  partial p{0, 0, 0, 0};
  for (std::size_t i = blockIdx.x * std::size_t{threads} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * threads) {
    const double w = deterministic_exp(lw[i] - lse);
    const double d = x[i] - shift;
    p.w += w;
    p.wx = resample::detail::fused(w, d, p.wx);
    p.wxx = resample::detail::fused(w * d, d, p.wxx);
    if (x[i] <= below) p.below += w;
  }
  const partial sum = reduce(temp).Reduce(p, [](const partial& a, const partial& b) { return a + b; });
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

/// `st`: the status of this tick's weight_statistics; a refusal (NaN, +inf, every weight zero) is
/// recorded.
__global__ void __launch_bounds__(threads) finish_tick(std::size_t blocks, const partial* partials, const double* x,
                                                       const double* truth, const cuda::device_status* st, scalars* s,
                                                       tick_outputs out, std::uint32_t tick, bool first) {
  using reduce = cub::BlockReduce<partial, threads>;
  __shared__ typename reduce::TempStorage temp;
  partial p{0, 0, 0, 0};
  for (std::size_t b = threadIdx.x; b < blocks; b += threads) p = p + partials[b];
  const partial sum = reduce(temp).Reduce(p, [](const partial& a, const partial& b) { return a + b; });
  if (threadIdx.x != 0) return;
  record_failure(s, st, tick, x);
  const bool has_truth = truth != nullptr && truth[tick] == truth[tick];
  const double shift = sum.wx / sum.w;
  out.mean[tick] = x[0] + shift;
  out.sd[tick] = std::sqrt(fmax(sum.wxx / sum.w - shift * shift, 0.0));
  out.pit[tick] = has_truth ? sum.below / sum.w : std::numeric_limits<double>::quiet_NaN();
  // Summed in the CPU filter's order: first stage, then (after - base).
  const double increment = (first ? 0.0 : s->increment_first) + (s->lse_after - (first ? s->lse_equal : s->lse_base));
  out.increment[tick] = increment;
  out.ess[tick] = s->ess_after;
  out.resampled[tick] = first ? 0 : s->resample;
  s->log_likelihood += increment;
}

unsigned grid_for(std::size_t n) { return static_cast<unsigned>((n + threads - 1) / threads); }

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

}  // namespace

template <class Model>
struct cuda_filter<Model>::impl {
  Model model;
  filter_options opt;
  cudaStream_t stream;
  key k;
  std::size_t n = 0, blocks = 0;
  std::size_t temp_bytes = 0;
  std::size_t ticks = 0, capacity = 0;
  bool truth_given = false;
  device_array<double> x_a, lw_a, x_next_a, lw_next_a, fs_a, v_a, truth_a;
  device_array<std::int32_t> ancestors_a;
  device_array<partial> partials_a;
  device_array<scalars> s_a;
  device_array<unsigned char> temp_a;
  device_array<double> increment_a, mean_a, sd_a, ess_a, pit_a;
  device_array<int> resampled_a;
  // Raw views of the arrays above; x / lw and x_next / lw_next swap every tick.
  double *x = nullptr, *lw = nullptr, *x_next = nullptr, *lw_next = nullptr;
  scalars* s = nullptr;
  void* temp = nullptr;

  impl(const Model& m, const filter_options& o, cudaStream_t st) : model(m), opt(o), stream(st) {
    detail::check_filter_options(o);
    if (o.particles > 0x7fffffffu) throw invalid_input("the cuda filter supports at most 2^31 - 1 particles");
    n = o.particles;
    blocks = std::min<std::size_t>(grid_for(n), summary_blocks);
    k = {static_cast<std::uint32_t>(o.seed), static_cast<std::uint32_t>(o.seed >> 32)};
    // Sizes first: a bad scheme option throws here, before anything is allocated.
    std::size_t bytes = 0;
    cuda::ancestors<double, std::int32_t>(nullptr, bytes, o.resampler, nullptr, n, k, 0, nullptr, o.resampling, stream);
    temp_bytes = bytes;
    cuda::weight_statistics<double>(nullptr, bytes, nullptr, n, nullptr, nullptr, stream);
    temp_bytes = std::max(temp_bytes, bytes);
    x_a = device_array<double>(n);
    lw_a = device_array<double>(n);
    x_next_a = device_array<double>(n);
    lw_next_a = device_array<double>(n);
    const bool auxiliary = o.kind == filter_kind::auxiliary;
    fs_a = device_array<double>(auxiliary ? n : 0);  // the first stage's buffers
    v_a = device_array<double>(auxiliary ? n : 0);
    ancestors_a = device_array<std::int32_t>(n);
    partials_a = device_array<partial>(blocks);
    s_a = device_array<scalars>(1);
    temp_a = device_array<unsigned char>(temp_bytes);
    x = x_a.get();
    lw = lw_a.get();
    x_next = x_next_a.get();
    lw_next = lw_next_a.get();
    s = s_a.get();
    temp = temp_a.get();
    scalars init{};
    init.lse_equal = detail::log_sum_exp_of_equal(n);
    init.failed_tick = ~0u;
    // In stream order (a pageable source is staged before the call returns).
    cuda::check(cudaMemcpyAsync(s, &init, sizeof init, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (bpf)");
  }

  [[nodiscard]] tick_outputs outputs() const {
    return {increment_a.get(), mean_a.get(), sd_a.get(), ess_a.get(), pit_a.get(), resampled_a.get()};
  }

  /// Room for `total` ticks of outputs and, once any were given, of true states. Grown outside the
  /// tick loop: it waits for the stream (the ticks before have read their true states by then).
  void reserve(std::size_t total, bool with_truth) {
    const bool new_truth = with_truth && !truth_given;
    truth_given = truth_given || with_truth;
    if (total <= capacity && !new_truth) return;
    const std::size_t grown = std::max({total, 2 * capacity, std::size_t{64}});
    cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (bpf)");
    auto grow = [&](auto& array) {
      using X = std::remove_pointer_t<decltype(array.get())>;
      device_array<X> bigger(grown);
      if (array.get() && ticks) {
        cuda::check(cudaMemcpy(bigger.get(), array.get(), ticks * sizeof(X), cudaMemcpyDeviceToDevice), "cudaMemcpy (bpf)");
      }
      array = std::move(bigger);
    };
    if (total > capacity) {
      grow(increment_a);
      grow(mean_a);
      grow(sd_a);
      grow(ess_a);
      grow(pit_a);
      grow(resampled_a);
    }
    capacity = std::max(capacity, grown);
    if (truth_given) truth_a = device_array<double>(capacity);  // only ticks to come read it
  }

  void tick(double y, std::uint32_t t, bool has_truth) {
    const unsigned grid = grid_for(n);
    const bool auxiliary = opt.kind == filter_kind::auxiliary;
    if (t == 0) {
      initial_weight<<<grid, threads, 0, stream>>>(model, k, n, y, x, lw);
      cuda::check_launch("bpf initial_weight");
    } else {
      const double* weights = lw;
      if (auxiliary) {
        first_stage<<<grid, threads, 0, stream>>>(model, n, y, x, lw, fs_a.get(), v_a.get());
        cuda::check_launch("bpf first_stage");
        cuda::weight_statistics<double>(temp, temp_bytes, v_a.get(), n, &s->lse_first_stage, &s->ess_first_stage, stream);
        weights = v_a.get();
      }
      const auto* status = static_cast<const cuda::device_status*>(temp);  // of the library call just before
      decide<<<1, 1, 0, stream>>>(s, status, x, t, opt.ess_threshold, n, auxiliary);
      cuda::check_launch("bpf decide");
      // Drawn only where decide() said so: the gate is the device's decision, read when the call runs.
      resample::options gated = opt.resampling;
      gated.device_gate = &s->resample;
      cuda::ancestors<double, std::int32_t>(temp, temp_bytes, opt.resampler, weights, n, k, t, ancestors_a.get(), gated,
                                            stream);
      gather_propagate<<<grid, threads, 0, stream>>>(model, k, n, t, y, opt.jitter, auxiliary, ancestors_a.get(), status,
                                                     x, lw, fs_a.get(), x_next, lw_next, s);
      cuda::check_launch("bpf gather_propagate");
      std::swap(x, x_next);
      std::swap(lw, lw_next);
    }
    cuda::weight_statistics<double>(temp, temp_bytes, lw, n, &s->lse_after, &s->ess_after, stream);
    const double* truth = has_truth ? truth_a.get() : nullptr;
    summary_partials<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(n, x, lw, s, truth, t, partials_a.get());
    cuda::check_launch("bpf summary_partials");
    finish_tick<<<1, threads, 0, stream>>>(blocks, partials_a.get(), x, truth, static_cast<const cuda::device_status*>(temp),
                                           s, outputs(), t, t == 0);
    cuda::check_launch("bpf finish_tick");
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
  if (m.truth_given) {
    // This call's true states (NaN where none are given), in stream order. A pageable source is
    // staged before cudaMemcpyAsync returns, so `slice` may go out of scope.
    std::vector<double> slice(y.size(), std::numeric_limits<double>::quiet_NaN());
    std::copy(truth.begin(), truth.end(), slice.begin());
    cuda::check(cudaMemcpyAsync(m.truth_a.get() + m.ticks, slice.data(), slice.size() * sizeof(double),
                                cudaMemcpyHostToDevice, m.stream),
                "cudaMemcpyAsync (bpf truth)");
  }
  for (std::size_t t = 0; t < y.size(); ++t) {
    m.tick(y[t], static_cast<std::uint32_t>(m.ticks), m.truth_given);
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
  const tick_outputs out = m.outputs();
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
