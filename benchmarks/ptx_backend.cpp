// The hand-written PTX backend against the CUDA C one, in the same run on the same device, timed
// with CUDA events (UseManualTime): one call per iteration on device memory (float log-weights in,
// int32 ancestors out, the paper's weights, y = 2), launches included.
//
//   ptx/<op>/<N>, cuda/<op>/<N>   op: systematic, stratified (ancestors), log_sum_exp;
//                                 N = 2^12 .. 2^24
//
// Counters: bytes_moved (the roofline's bytes: 12 per particle for the resamplers -- the
// log-weights read twice, for the max and for the CDF, and the ancestors written; 4 for
// log-sum-exp), copy_GBps (measured here, once) and pct_copy_bw = bytes_moved / time / copy_GBps.
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "cpu_reference/paper_weights.hpp"
#include "cuda_timing.hpp"
#include "resample/cuda/host.hpp"
#include "resample/cuda/resample.hpp"
#include "resample/ptx/resample.hpp"

namespace {

using resample::scheme;
namespace cuda = resample::cuda;
namespace ptx = resample::ptx;
using resample::bench::event_timer;
using resample::bench::report;

const float* device_weights(std::size_t n) {
  static std::map<std::size_t, std::unique_ptr<cuda::host::device_vector<float>>> cache;
  auto& slot = cache[n];
  if (!slot) {
    resample::reference::default_urbg rng(42);
    const auto lw = resample::reference::paper_log_weights(n, 2.0, rng);
    const std::vector<float> f(lw.begin(), lw.end());
    slot = std::make_unique<cuda::host::device_vector<float>>(std::span<const float>(f));
  }
  return slot->data();
}

enum class backend { ptx, cuda };
enum class op { systematic, stratified, log_sum_exp };

/// One call of `o` on `b`: two-phase temp storage sized once, then timed enqueues.
void run(benchmark::State& state, backend b, op o) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const float* lw = device_weights(n);
  cuda::host::device_vector<std::int32_t> a(n);
  cuda::host::device_vector<double> result(1);
  const scheme s = o == op::stratified ? scheme::stratified : scheme::systematic;
  std::uint32_t step = 0;
  const auto enqueue = [&](void* temp, std::size_t& bytes) {
    if (o == op::log_sum_exp) {
      if (b == backend::ptx) ptx::log_sum_exp<float>(temp, bytes, lw, n, result.data());
      else cuda::log_sum_exp<float>(temp, bytes, lw, n, result.data());
    } else if (b == backend::ptx) {
      ptx::ancestors<float, std::int32_t>(temp, bytes, s, lw, n, {1, 0}, step, a.data());
    } else {
      cuda::ancestors<float, std::int32_t>(temp, bytes, s, lw, n, {1, 0}, step, a.data());
    }
  };
  std::size_t bytes = 0;
  enqueue(nullptr, bytes);
  const cuda::host::device_vector<char> temp(bytes);
  enqueue(temp.data(), bytes);  // the first call loads the PTX module
  (void)cuda::check_status(temp.data(), nullptr);
  event_timer t;
  double total = 0;
  for (auto _ : state) {
    ++step;
    const double sec = t.seconds(nullptr, [&] { enqueue(temp.data(), bytes); });
    state.SetIterationTime(sec);
    total += sec;
  }
  (void)cuda::check_status(temp.data(), nullptr);
  report(state, n, o == op::log_sum_exp ? 4 : 12, total);
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda::device_available()) {
    std::fprintf(stderr, "bench_ptx: no CUDA device\n");
    return 0;
  }
  const std::pair<op, const char*> ops[] = {
      {op::systematic, "systematic"}, {op::stratified, "stratified"}, {op::log_sum_exp, "log_sum_exp"}};
  for (const auto& [o, name] : ops) {
    for (const auto& [b, prefix] : {std::pair{backend::ptx, "ptx/"}, std::pair{backend::cuda, "cuda/"}}) {
      benchmark::RegisterBenchmark((std::string(prefix) + name).c_str(),
                                   [b = b, o = o](benchmark::State& st) { run(st, b, o); })
          ->RangeMultiplier(16)->Range(1 << 12, 1 << 24)->UseManualTime()->Unit(benchmark::kMicrosecond);
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
