// Time of one call of each serial reference scheme, on the paper's weights (y = 2), vs N.
// The production CPU and GPU backends get their own benchmarks; these are the baseline.
#include <benchmark/benchmark.h>

#include "cpu_reference/paper_weights.hpp"
#include "cpu_reference/schemes.hpp"

namespace {

void reference_scheme(benchmark::State& state, resample::reference::scheme s) {
  const auto n = static_cast<std::size_t>(state.range(0));
  resample::reference::default_urbg rng(42);
  const auto w = resample::reference::weights::from_log(resample::reference::paper_log_weights(n, 2.0, rng));
  for (auto _ : state) {
    auto a = resample::reference::ancestors(s, w, rng);
    benchmark::DoNotOptimize(a.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}

}  // namespace

int main(int argc, char** argv) {
  for (const auto s : resample::reference::all_schemes) {
    benchmark::RegisterBenchmark(("reference/" + std::string(resample::reference::name(s))).c_str(),
                                 reference_scheme, s)
        ->RangeMultiplier(8)
        ->Range(1 << 10, 1 << 19)
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
