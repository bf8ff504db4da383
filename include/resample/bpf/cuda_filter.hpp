// The particle filter of particle_filter.hpp on the GPU (the cuda backend), for sv_model and
// linear_gaussian_model.
//
//   resample::bpf::cuda_filter<resample::bpf::sv_model> f(model, opt, stream);
//   f.enqueue(y, truth);               // every tick enqueued on `stream`; no host wait per tick
//   resample::bpf::filter_run r = f.collect();   // waits once, checks, copies the results back
//
// It follows the CPU filter step for step with the same Philox counters, the same deterministic
// densities, the exact resamplers and the same summation order for the tick's statistics
// (chunk_statistics.hpp), so every output is the CPU's bits: log-likelihood, increments, ESS,
// resampling decisions, mean, sd and PIT. A tick is a CUDA graph (captured at the first tick that
// needs it, again when enqueue() outgrows the buffers) that reads its tick number from the device;
// the ESS test is decided on the device and opens the graph's conditional resampler node (or, with
// resampler_node::gated, the resampler's device gate).
#pragma once

#include <memory>
#include <span>

#include <cuda_runtime_api.h>

#include "resample/bpf/particle_filter.hpp"

namespace resample::bpf {

/// How a tick's graph skips the resampler on the ticks that do not resample. Both give the same
/// bits.
enum class resampler_node {
  /// A conditional (IF) graph node opened by the ESS test: nothing of the resampler is launched on
  /// the other ticks. The default.
  conditional,
  /// The resampler's kernels are launched at every tick and return at once when the ESS test
  /// closed their device gate (options::device_gate): launches that the conditional node saves (not
  /// timed). For tools that do not follow conditional nodes: compute-sanitizer's racecheck and
  /// synccheck stop on them (docs/results/bpf.md).
  gated,
};

template <class Model>
class cuda_filter {
 public:
  /// Allocates the device buffers for opt.particles particles (N < 2^31). Throws invalid_input for
  /// bad options and cuda_error for a failed CUDA call.
  cuda_filter(const Model& model, const filter_options& opt, cudaStream_t stream = nullptr,
              resampler_node node = resampler_node::conditional);
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

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// The whole series through a new cuda_filter (like run_filter on the CPU).
template <class Model>
filter_run run_cuda_filter(const Model& model, std::span<const double> y, const filter_options& opt,
                           std::span<const double> truth = {}, cudaStream_t stream = nullptr,
                           resampler_node node = resampler_node::conditional) {
  if (y.empty()) throw invalid_input("no observations: T = 0");
  cuda_filter<Model> f(model, opt, stream, node);
  f.enqueue(y, truth);
  return f.collect();
}

}  // namespace resample::bpf
