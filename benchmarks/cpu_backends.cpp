// The exact core's CPU backends: one call per iteration, every production scheme, `cpu` (serial)
// and `cpu-parallel` (all cores, or RESAMPLE_THREADS threads), N = 2^10 .. 2^24, on the
// paper's weights (y = 2), double log-weights in, int32 ancestors out. Reports items/s and the
// bytes the call must move (8 bytes read + 4 written per particle).
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include <benchmark/benchmark.h>

#include "cpu_reference/paper_weights.hpp"
#include "resample/cpu/resample.hpp"

namespace {

unsigned thread_count() {
  if (const char* t = std::getenv("RESAMPLE_THREADS")) return static_cast<unsigned>(std::max(1, std::atoi(t)));
  return std::max(1u, std::thread::hardware_concurrency());
}

template <class Exec>
void run(benchmark::State& state, const Exec& ex, resample::scheme s, resample::precision p) {
  const auto n = static_cast<std::size_t>(state.range(0));
  resample::reference::default_urbg rng(42);
  const auto lw = resample::reference::paper_log_weights(n, 2.0, rng);
  std::vector<std::int32_t> a(n);
  resample::options opt;
  opt.cdf = p;
  std::uint32_t step = 0;
  for (auto _ : state) {
    resample::cpu::ancestors(ex, s, std::span<const double>(lw), resample::key{1, 0}, step++, std::span<std::int32_t>(a), opt);
    benchmark::DoNotOptimize(a.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(n) * 12);
}

}  // namespace

int main(int argc, char** argv) {
  static const resample::cpu::parallel pool(thread_count());
  for (const auto s : resample::production_schemes) {
    const std::string name(resample::name(s));
    benchmark::RegisterBenchmark(("cpu/" + name).c_str(), [s](benchmark::State& st) {
      run(st, resample::cpu::serial{}, s, resample::precision::exact);
    })->RangeMultiplier(16)->Range(1 << 10, 1 << 24)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("cpu-parallel/" + name).c_str(), [s](benchmark::State& st) {
      run(st, pool, s, resample::precision::exact);
    })->RangeMultiplier(16)->Range(1 << 10, 1 << 24)->Unit(benchmark::kMicrosecond)->UseRealTime();
  }
  for (const auto s : {resample::scheme::systematic, resample::scheme::multinomial}) {
    const std::string name(resample::name(s));
    benchmark::RegisterBenchmark(("cpu/" + name + "/float32_cdf").c_str(), [s](benchmark::State& st) {
      run(st, resample::cpu::serial{}, s, resample::precision::float32);
    })->RangeMultiplier(16)->Range(1 << 10, 1 << 24)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("cpu-parallel/" + name + "/float32_cdf").c_str(), [s](benchmark::State& st) {
      run(st, pool, s, resample::precision::float32);
    })->RangeMultiplier(16)->Range(1 << 10, 1 << 24)->Unit(benchmark::kMicrosecond)->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
