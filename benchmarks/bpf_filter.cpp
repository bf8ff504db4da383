// The particle filter, per tick: the SV model with Student-t noise (nu = 5 both; mu -4.5, rho 0.97,
// sigma 0.15, the seed project's base scenario), bootstrap filter, systematic resampling when
// ESS < N/2, on data simulated from the model.
//
//   bpf/cuda/<N>           N = 2^10 .. 2^26; 32 ticks per iteration, timed with CUDA events; the
//                          default resampler_node::automatic (gated up to 2^13, conditional above)
//   bpf/ptx/<N>            the same filter with the PTX backend's kernels (resample/ptx/filter.hpp):
//                          the per-particle kernel and the resampler in PTX
//   bpf/cuda-fast/<N>      the cuda filter with filter_precision::fast (float particles, approximate
//                          exp / log; the resampler exact on the float log-weights)
//   bpf/cuda[-fast]/gated/<N>  N = 2^18, 2^24, with resampler_node::gated (the resampler's kernels
//                          launched every tick, returning at once on ticks that keep their
//                          weights): for Nsight Compute, which cannot time the kernels of a graph
//                          with a conditional node (up to 2^13 the plain rows are gated already)
//   bpf/cpu-parallel/<N>   N = 2^10 .. 2^20, all cores; wall time
//
// Counters: us_per_tick (the mean over the iterations: for cuda they include the first capture of
// the tick graphs and their recapture when the buffers double, but not the loading of the kernels,
// done once per variant by an untimed small filter), items_per_second (particle-ticks),
// and for cuda copy_GBps (measured here), pct_copy_bw_24B: the budget of 24 bytes per
// particle-tick over the time, as a share of the measured copy bandwidth, and resampled_share: the
// share of the timed ticks that resampled (each such tick runs the resampler's passes too).
#include <chrono>
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "resample/bpf/particle_filter.hpp"
#include "resample/bpf/simulate.hpp"
#include "resample/bpf/sv_model.hpp"
#include "resample/cpu/executor.hpp"

#if defined(RESAMPLE_BENCH_CUDA)
#include "cuda_timing.hpp"
#include "resample/bpf/cuda_filter.hpp"
#include "resample/ptx/filter.hpp"
#endif

namespace {

constexpr std::size_t ticks_per_iteration = 32;

const resample::bpf::sv_model& model() {
  static const resample::bpf::sv_model m({.mu = -4.5, .rho = 0.97, .sigma = 0.15, .nu_state = 5, .nu_obs = 5});
  return m;
}

const std::vector<double>& observations() {
  static const auto y = resample::bpf::simulate(model(), 1 << 16, 3).observations;
  return y;
}

resample::bpf::filter_options options(std::size_t n) {
  resample::bpf::filter_options o;
  o.particles = n;
  o.seed = 1;
  return o;
}

void cpu_parallel(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  static resample::cpu::parallel ex(std::max(1u, std::thread::hardware_concurrency()), 1024);  // as resample bpf
  resample::bpf::particle_filter pf(model(), ex, options(n));
  const auto& y = observations();
  std::size_t t = 0;
  double total = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    pf.step(y[t++ % y.size()]);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.SetIterationTime(s);
    total += s;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
  state.counters["us_per_tick"] = 1e6 * total / static_cast<double>(state.iterations());
  state.counters["threads"] = ex.threads();
}

#if defined(RESAMPLE_BENCH_CUDA)
enum class gpu_variant { cuda, ptx, cuda_fast };

void cuda_filter(benchmark::State& state, gpu_variant variant, resample::bpf::resampler_node node) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const bool ptx = variant == gpu_variant::ptx;
  auto opt = options(n);
  if (variant == gpu_variant::cuda_fast) opt.precision = resample::bpf::filter_precision::fast;
  const auto kernels = [&] { return ptx ? resample::ptx::tick_kernels_for(model()) : nullptr; };
  // The process's first filter of a variant pays once for loading its kernels (the PTX module's JIT
  // compilation among them: 35 ms per tick at 2^10 over a 0.1 s run): paid here, untimed.
  static bool warmed[3] = {};
  if (!warmed[static_cast<int>(variant)]) {
    auto small = opt;
    small.particles = 1024;
    resample::bpf::run_cuda_filter(model(), std::span<const double>(observations()).first(4), small, {}, nullptr,
                                   node, kernels());
    warmed[static_cast<int>(variant)] = true;
  }
  resample::bpf::cuda_filter<resample::bpf::sv_model> f(model(), opt, nullptr, node, kernels());
  resample::bench::event_timer timer;
  const auto& y = observations();
  std::size_t t = 0;
  double total = 0;
  for (auto _ : state) {
    if (t + ticks_per_iteration > y.size()) t = 0;
    const double s = timer.seconds(nullptr, [&] { f.enqueue(std::span<const double>(y).subspan(t, ticks_per_iteration)); });
    t += ticks_per_iteration;
    state.SetIterationTime(s);
    total += s;
  }
  const auto run = f.collect();  // throws if anything went wrong on the device
  const auto resampled = std::count_if(run.ticks.begin(), run.ticks.end(), [](const auto& k) { return k.resampled; });
  const double per_tick = total / static_cast<double>(state.iterations() * ticks_per_iteration);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * ticks_per_iteration * n));
  state.counters["us_per_tick"] = 1e6 * per_tick;
  state.counters["copy_GBps"] = resample::bench::copy_bandwidth();
  state.counters["pct_copy_bw_24B"] = 100.0 * 24.0 * static_cast<double>(n) / per_tick / 1e9 / resample::bench::copy_bandwidth();
  state.counters["resampled_share"] = static_cast<double>(resampled) / static_cast<double>(run.ticks.size());
}
#endif

const int registered = [] {
  benchmark::RegisterBenchmark("bpf/cpu-parallel", cpu_parallel)->RangeMultiplier(4)->Range(1 << 10, 1 << 20)
      ->UseManualTime()->Unit(benchmark::kMicrosecond);
#if defined(RESAMPLE_BENCH_CUDA)
  for (const auto variant : {gpu_variant::cuda, gpu_variant::ptx, gpu_variant::cuda_fast}) {
    const char* name = variant == gpu_variant::cuda  ? "bpf/cuda"
                       : variant == gpu_variant::ptx ? "bpf/ptx"
                                                     : "bpf/cuda-fast";
    benchmark::RegisterBenchmark(name, cuda_filter, variant, resample::bpf::resampler_node::automatic)
        ->RangeMultiplier(4)->Range(1 << 10, 1 << 26)->UseManualTime()->Unit(benchmark::kMicrosecond);
    if (variant != gpu_variant::ptx) {
      const auto gated = resample::bpf::resampler_node::gated;
      benchmark::RegisterBenchmark((std::string(name) + "/gated").c_str(), cuda_filter, variant, gated)
          ->Arg(1 << 18)->Arg(1 << 24)->UseManualTime()->Unit(benchmark::kMicrosecond);
    }
  }
#endif
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
