// The CUDA backend, timed with CUDA events (UseManualTime): one call per iteration on device
// memory (float log-weights in, int32 ancestors out, the paper's weights), launch included.
//
//   cuda/<scheme>/float/exact/<N>       every scheme, N = 2^10 .. 2^26 (SSP, sequential: to 2^16)
//   cuda/<scheme>/float/given_max/<N>   systematic, stratified, multinomial-sorted, N = 2^20, 2^24
//                                       and 2^26, the paper's weights with their max handed over
//                                       (options::device_max_log_weight: no max pass, 8 bytes a
//                                       particle to move)
//   cuda/<scheme>/float/fast_exp/<N>    the same schemes, N = 2^20 and 2^24: options::fast_exp (the
//                                       weights by ex2.approx; not the CPU's bits)
//   cuda/<scheme>/float/fast_given_max/<N>  ... and the max handed over (the fast particle filter's call)
//   cuda/<scheme>/float/skewed/<N>      systematic, stratified, multinomial-sorted, N = 2^20 and
//                                       2^24: two particles hold every weight (heavy runs)
//   cuda/<scheme>/float/heavy<K>/<N>    the same schemes, N = 2^24: K = 32 or 512 particles of
//                                       equal weight, every other -inf
//   cuda/<scheme>/float/equal/<N>       the same schemes, N = 2^20 and 2^24: every log-weight 0, so
//                                       every r = N C / Q is an integer
//   cuda/batched/<scheme>/4096x1024     4096 systems of 1024 particles: a warp each (systematic,
//                                       stratified), a block each (the chains)
//   cuda/graph/systematic/<N>           the call captured once in a CUDA graph, the graph replayed
//   cuda/metropolis_y/<scheme>/<y>      N = 2^20, B from the eps rule, weights of dispersion y
//   cuda/metropolis_B/<scheme>/<B>      N = 2^20, y = 2, B given
//   cuda/copy/<N>                       cudaMemcpy device to device: the bandwidth yardstick
//
// Counters: bytes_moved (the roofline's bytes: 12 per particle for one system -- the log-weights
// read twice, once for the max and once for the CDF, and the ancestors written; 8 for the batched
// call, whose systems stay on chip between passes), copy_GBps (measured here, once) and
// pct_copy_bw = bytes_moved / time / copy_GBps.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <benchmark/benchmark.h>

#include "cpu_reference/paper_weights.hpp"
#include "cuda_timing.hpp"
#include "resample/cuda/host.hpp"

namespace {

using resample::scheme;
namespace cuda = resample::cuda;
using resample::bench::device_max;
using resample::bench::event_timer;
using resample::bench::report;

/// Log-weights on the device, made once per (kind, N, parameter) and kept for the whole run.
const float* cached_weights(char kind, std::size_t n, double parameter,
                            const std::function<std::vector<float>()>& make) {
  static std::map<std::tuple<char, std::size_t, double>, std::unique_ptr<cuda::host::device_vector<float>>> cache;
  auto& slot = cache[{kind, n, parameter}];
  if (!slot) {
    const std::vector<float> f = make();
    slot = std::make_unique<cuda::host::device_vector<float>>(std::span<const float>(f));
  }
  return slot->data();
}

/// The paper's log-weights ln phi(x + y), x ~ N(0, 1).
const float* device_weights(std::size_t n, double y) {
  return cached_weights('p', n, y, [n, y] {
    resample::reference::default_urbg rng(42);
    const auto lw = resample::reference::paper_log_weights(n, y, rng);
    return std::vector<float>(lw.begin(), lw.end());
  });
}

/// Degenerate log-weights: one particle at 0 in the middle, 0.5 below it beside it, and every
/// other -inf, so that two particles share all N offspring (a heavy run far longer than a tile).
const float* skewed_weights(std::size_t n) {
  return cached_weights('s', n, 0.0, [n] {
    std::vector<float> f(n, -std::numeric_limits<float>::infinity());
    f[n / 2] = 0.0f;
    f[n / 2 + 1] = -0.5f;
    return f;
  });
}

/// K particles of equal weight, spread evenly, and every other -inf: K heavy runs of N / K.
const float* heavy_weights(std::size_t n, std::size_t K) {
  return cached_weights('h', n, static_cast<double>(K), [n, K] {
    std::vector<float> f(n, -std::numeric_limits<float>::infinity());
    for (std::size_t j = 0; j < K; ++j) f[j * (n / K) + 5 * j] = 0.0f;
    return f;
  });
}

/// Equal log-weights (0): every particle's r an integer, the estimate's hardest case.
const float* equal_weights(std::size_t n) {
  return cached_weights('e', n, 0.0, [n] { return std::vector<float>(n, 0.0f); });
}

/// The paper's weights of dispersion y, as single's `weights`.
std::function<const float*(std::size_t)> paper(double y) {
  return [y](std::size_t n) { return device_weights(n, y); };
}

/// One call per iteration on the log-weights `weights(N)` gives.
void single(benchmark::State& state, scheme s, const std::function<const float*(std::size_t)>& weights,
            resample::options opt, bool given_max = false) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const float* lw = weights(n);
  if (given_max) opt.device_max_log_weight = device_max(lw, n);
  cuda::host::device_vector<std::int32_t> a(n);
  cuda::workspace ws;
  ws.ancestors(s, lw, n, resample::key{1, 0}, 0, a.data(), opt);  // allocates once
  const auto status = ws.check();
  event_timer t;
  std::uint32_t step = 1;
  double total = 0;
  for (auto _ : state) {
    const double sec = t.seconds(nullptr, [&] { ws.ancestors(s, lw, n, resample::key{1, 0}, step++, a.data(), opt); });
    state.SetIterationTime(sec);
    total += sec;
  }
  ws.check();
  report(state, n, given_max ? 8 : 12, total);  // with the max given, the log-weights are read once
  if (s == scheme::metropolis || s == scheme::megopolis) state.counters["B"] = static_cast<double>(status.steps);
}

void batched(benchmark::State& state, scheme s) {
  const std::size_t systems = 4096, size = 1024, n = systems * size;
  const float* lw = device_weights(n, 2.0);
  std::vector<std::uint64_t> offsets(systems + 1);
  for (std::size_t b = 0; b <= systems; ++b) offsets[b] = b * size;
  const cuda::host::device_vector<std::uint64_t> d_off{std::span<const std::uint64_t>(offsets)};
  cuda::host::device_vector<std::int32_t> a(n);
  cuda::workspace ws;
  ws.ancestors_batched(s, lw, d_off.data(), systems, n, resample::key{1, 0}, 0, a.data());
  ws.check();
  event_timer t;
  std::uint32_t step = 1;
  double total = 0;
  for (auto _ : state) {
    const double sec = t.seconds(
        nullptr, [&] { ws.ancestors_batched(s, lw, d_off.data(), systems, n, resample::key{1, 0}, step++, a.data()); });
    state.SetIterationTime(sec);
    total += sec;
  }
  ws.check();
  report(state, n, 8, total);
}

void graph(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const float* lw = device_weights(n, 2.0);
  cuda::host::device_vector<std::int32_t> a(n);
  cudaStream_t stream;
  cuda::check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cuda::workspace ws(stream);
  ws.ancestors(scheme::systematic, lw, n, resample::key{1, 0}, 0, a.data());
  ws.check();
  cudaGraph_t g;
  cuda::check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  ws.ancestors(scheme::systematic, lw, n, resample::key{1, 0}, 1, a.data());
  cuda::check(cudaStreamEndCapture(stream, &g), "cudaStreamEndCapture");
  cudaGraphExec_t exec;
  cuda::check(cudaGraphInstantiate(&exec, g, 0), "cudaGraphInstantiate");
  event_timer t;
  double total = 0;
  for (auto _ : state) {
    const double sec = t.seconds(stream, [&] { cuda::check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch"); });
    state.SetIterationTime(sec);
    total += sec;
  }
  ws.check();
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  cudaStreamDestroy(stream);
  report(state, n, 12, total);
}

void copy(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  cuda::host::device_vector<float> x(n);
  cuda::host::device_vector<float> y(n);
  event_timer t;
  double total = 0;
  for (auto _ : state) {
    const double sec = t.seconds(nullptr, [&] {
      cuda::check(cudaMemcpyAsync(y.data(), x.data(), n * sizeof(float), cudaMemcpyDeviceToDevice), "cudaMemcpyAsync");
    });
    state.SetIterationTime(sec);
    total += sec;
  }
  report(state, n, 8, total);
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda::device_available()) {
    std::fprintf(stderr, "bench_cuda: no CUDA device\n");
    return 0;
  }
  for (const auto s : resample::production_schemes) {
    const std::string name(resample::name(s));
    const std::int64_t largest = s == scheme::ssp ? 1 << 16 : 1 << 26;
    benchmark::RegisterBenchmark(("cuda/" + name + "/float/exact").c_str(), [s](benchmark::State& st) {
      single(st, s, paper(2.0), {});
    })->RangeMultiplier(4)->Range(1 << 10, largest)->UseManualTime()->Unit(benchmark::kMicrosecond);
  }
  for (const auto s : {scheme::systematic, scheme::stratified, scheme::multinomial_sorted}) {
    benchmark::RegisterBenchmark(("cuda/" + std::string(resample::name(s)) + "/float/given_max").c_str(),
                                 [s](benchmark::State& st) { single(st, s, paper(2.0), {}, true); })
        ->Arg(1 << 20)->Arg(1 << 24)->Arg(1 << 26)->UseManualTime()->Unit(benchmark::kMicrosecond);
    resample::options fast;
    fast.fast_exp = true;
    benchmark::RegisterBenchmark(("cuda/" + std::string(resample::name(s)) + "/float/fast_exp").c_str(),
                                 [s, fast](benchmark::State& st) { single(st, s, paper(2.0), fast); })
        ->Arg(1 << 20)->Arg(1 << 24)->UseManualTime()->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("cuda/" + std::string(resample::name(s)) + "/float/fast_given_max").c_str(),
                                 [s, fast](benchmark::State& st) { single(st, s, paper(2.0), fast, true); })
        ->Arg(1 << 20)->Arg(1 << 24)->UseManualTime()->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("cuda/" + std::string(resample::name(s)) + "/float/skewed").c_str(),
                                 [s](benchmark::State& st) { single(st, s, skewed_weights, {}); })
        ->Arg(1 << 20)->Arg(1 << 24)->UseManualTime()->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("cuda/" + std::string(resample::name(s)) + "/float/equal").c_str(),
                                 [s](benchmark::State& st) { single(st, s, equal_weights, {}); })
        ->Arg(1 << 20)->Arg(1 << 24)->UseManualTime()->Unit(benchmark::kMicrosecond);
    for (const int K : {32, 512}) {  // more heavy runs than the comb's 32 slots, or as many
      benchmark::RegisterBenchmark(
          ("cuda/" + std::string(resample::name(s)) + "/float/heavy" + std::to_string(K)).c_str(),
          [s, K](benchmark::State& st) {
            single(st, s, [K](std::size_t n) { return heavy_weights(n, K); }, {});
          })
          ->Arg(1 << 24)->UseManualTime()->Unit(benchmark::kMicrosecond);
    }
  }
  for (const auto s : {scheme::systematic, scheme::stratified, scheme::metropolis, scheme::megopolis, scheme::rejection}) {
    benchmark::RegisterBenchmark(("cuda/batched/" + std::string(resample::name(s)) + "/4096x1024").c_str(),
                                 [s](benchmark::State& st) { batched(st, s); })
        ->UseManualTime()->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("cuda/graph/systematic", graph)->Arg(1 << 12)->Arg(1 << 16)->Arg(1 << 20)->UseManualTime()->Unit(benchmark::kMicrosecond);
  for (const auto s : {scheme::metropolis, scheme::megopolis}) {
    const std::string name(resample::name(s));
    for (const double y : {0.0, 1.0, 2.0, 4.0}) {
      benchmark::RegisterBenchmark(("cuda/metropolis_y/" + name + "/y=" + std::to_string(static_cast<int>(y))).c_str(),
                                   [s, y](benchmark::State& st) { single(st, s, paper(y), {}); })
          ->Arg(1 << 20)->UseManualTime()->Unit(benchmark::kMicrosecond);
    }
    for (const std::uint64_t B : {8, 32, 128, 512}) {
      resample::options opt;
      opt.metropolis_steps = B;
      benchmark::RegisterBenchmark(("cuda/metropolis_B/" + name + "/B=" + std::to_string(B)).c_str(),
                                   [s, opt](benchmark::State& st) { single(st, s, paper(2.0), opt); })
          ->Arg(1 << 20)->UseManualTime()->Unit(benchmark::kMicrosecond);
    }
  }
  benchmark::RegisterBenchmark("cuda/copy", copy)->RangeMultiplier(4)->Range(1 << 10, 1 << 26)->UseManualTime()->Unit(benchmark::kMicrosecond);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
