// The particle filter of particle_filter.hpp on the GPU (the cuda backend), for sv_model and
// linear_gaussian_model.
//
//   resample::bpf::cuda_filter<resample::bpf::sv_model> f(model, opt, stream);
//   f.enqueue(y, truth);               // every tick enqueued on `stream`; no host wait per tick
//   resample::bpf::filter_run r = f.collect();   // waits once, checks, copies the results back
//
// In the default precision (filter_precision::exact) it follows the CPU filter step for step with
// the same Philox counters, the same deterministic densities, the exact resamplers and the same
// summation order for the tick's statistics (chunk_statistics.hpp), so every output is the CPU's
// bits: log-likelihood, increments, ESS, resampling decisions, mean, sd and PIT. With
// filter_precision::fast (its own kernels only) the particles are float and the moves approximate
// (bpf/fast_moves.cuh), and systematic and stratified resampling above 8192 particles take the
// weights' exponentials by ex2.approx (options::fast_exp): the same model, not the same bits. A tick is a CUDA graph (captured at the first tick that
// needs it, again when enqueue() outgrows the buffers) that reads its tick number from the device;
// the ESS test is decided on the device and opens the graph's conditional resampler node (or, with
// resampler_node::gated, the resampler's device gate). The fast bootstrap filter runs its ticks two
// to a graph, the first tick's resampler node beside the second tick's particle kernel (docs/bpf.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include <cuda_runtime_api.h>

#include "resample/bpf/particle_filter.hpp"
#include "resample/core/options.hpp"
#include "resample/core/philox.hpp"

namespace resample::bpf {

/// How a tick's graph skips the resampler on the ticks that do not resample. All give the same
/// bits.
enum class resampler_node {
  /// A conditional (IF) graph node opened by the ESS test: nothing of the resampler is launched on
  /// the other ticks.
  conditional,
  /// The resampler's kernels are launched at every tick and return at once when the ESS test
  /// closed their device gate (options::device_gate): launches that the conditional node saves (not
  /// timed). For tools that do not follow conditional nodes: compute-sanitizer's racecheck and
  /// synccheck stop on them (docs/results/bpf.md).
  gated,
  /// The default: gated where the resampler is one kernel (the CUDA C kernels' systematic and
  /// stratified up to 8,192 particles, whose one block then returns at once), which costs less than
  /// the conditional node (an exact tick of 4,096 particles: 16.6 against 18.6 us on an H200);
  /// conditional otherwise.
  automatic,
};

/// One launch of a tick's particle kernel (device pointers), for tick_kernels. The stages are the
/// CUDA C kernels of src/cuda/bpf_filter.cu:
///   initial           tick 0: x_out = a draw from the prior, lw_out = log g(y[0] | x_out)
///   first_stage       auxiliary: fs = log ghat(y[t] | x), lw_out = v = lw + fs (summarised with x)
///   gather_propagate  x_out = propagate(x[a] (+ jitter) or x), lw_out = (0, -fs[a] or lw) + log g
/// each with its chunks' summaries (chunk_statistics.hpp) into `chunks`; t = *tick, the shift of
/// gather_propagate's sums is *shift, it gathers when *resample != 0 and the resampler's status at
/// `verdict` has code 0.
struct move_launch {
  enum class stage : std::uint32_t { initial = 0, first_stage = 1, gather_propagate = 2 };
  stage kind = stage::initial;
  std::size_t n = 0;
  key k{};
  double jitter = 0;
  bool auxiliary = false;
  const std::uint32_t* tick = nullptr;
  const int* resample = nullptr;
  const double* shift = nullptr;
  const double* y = nullptr;
  const double* truth = nullptr;  ///< null, or NaN where a tick has none
  const std::int32_t* ancestors = nullptr;
  const void* verdict = nullptr;
  const double* x = nullptr;
  const double* lw = nullptr;
  double* fs = nullptr;
  double* x_out = nullptr;
  double* lw_out = nullptr;
  void* chunks = nullptr;
};

/// The per-particle kernels of a cuda_filter's tick when another backend supplies them (the PTX
/// backend: resample::ptx::tick_kernels_for in resample/ptx/filter.hpp): the particle kernel of
/// each stage and the resampler. The filter keeps its graph, its finishing kernels (one block
/// each) and its conditional node.
class tick_kernels {
 public:
  virtual ~tick_kernels() = default;
  /// Slot `slot` (0 .. 4) will launch `m`. Called outside any capture; what the backend stages in
  /// device memory it writes in order on `stream`.
  virtual void prepare(int slot, const move_launch& m, cudaStream_t stream) = 0;
  /// Enqueues slot `slot`'s kernel on `stream` (which may be capturing).
  virtual void launch(int slot, cudaStream_t stream) = 0;
  /// resample::cuda::ancestors' contract (sizing when d_temp is null; options::device_step and
  /// options::device_gate read on the device; the call's status at the start of d_temp).
  virtual void ancestors(void* d_temp, std::size_t& temp_bytes, scheme s, const double* lw, std::size_t n, key k,
                         std::uint32_t step, std::int32_t* a, const options& opt, cudaStream_t stream) = 0;
};

template <class Model>
class cuda_filter {
 public:
  /// Allocates the device buffers for opt.particles particles (N < 2^31). Throws invalid_input for
  /// bad options and cuda_error for a failed CUDA call. `kernels`: null for the CUDA C kernels, or
  /// another backend's (resample/ptx/filter.hpp); it must have been made for `model`.
  cuda_filter(const Model& model, const filter_options& opt, cudaStream_t stream = nullptr,
              resampler_node node = resampler_node::automatic, std::shared_ptr<tick_kernels> kernels = nullptr);
  ~cuda_filter();
  cuda_filter(const cuda_filter&) = delete;
  cuda_filter& operator=(const cuda_filter&) = delete;

  /// Enqueues one tick per observation (after those enqueued before); `truth` is empty or one true
  /// state per observation. Observations are checked on the host first (invalid_input naming the
  /// first non-finite one; nothing is enqueued then).
  void enqueue(std::span<const double> y, std::span<const double> truth = {});
  /// Waits for the stream and returns every tick enqueued so far; throws invalid_input if a
  /// log-weight went NaN or +inf (naming the tick and particle, as the CPU filter does).
  filter_run collect();
  /// How many thread blocks move each chunk of 4096 particles: in exact precision with the CUDA C
  /// kernels, 2, 4 or 8 (a thread-block cluster) where the GPU can run that many for every chunk at
  /// once, so that few chunks still fill it; otherwise 1. The results do not depend on it.
  [[nodiscard]] unsigned blocks_per_chunk() const;
  /// How many ticks t > 0 one tick graph runs where enqueue() has them: 2 for the fast bootstrap
  /// filter with the conditional resampler node and the CUDA C kernels (docs/bpf.md, "Two ticks to a
  /// graph"), otherwise 1. The results do not depend on it.
  [[nodiscard]] unsigned ticks_per_graph() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// The whole series through a new cuda_filter (like run_filter on the CPU).
template <class Model>
filter_run run_cuda_filter(const Model& model, std::span<const double> y, const filter_options& opt,
                           std::span<const double> truth = {}, cudaStream_t stream = nullptr,
                           resampler_node node = resampler_node::automatic,
                           std::shared_ptr<tick_kernels> kernels = nullptr) {
  if (y.empty()) throw invalid_input("no observations: T = 0");
  cuda_filter<Model> f(model, opt, stream, node, std::move(kernels));
  f.enqueue(y, truth);
  return f.collect();
}

}  // namespace resample::bpf
