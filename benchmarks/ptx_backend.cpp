// The hand-written PTX backend against the CUDA C one, in the same run on the same device, timed
// with CUDA events (UseManualTime): one call per iteration on device memory (float log-weights in,
// int32 ancestors out, the paper's weights, y = 2), launches included.
//
//   ptx/<op>/<N>, cuda/<op>/<N>   op: systematic, stratified (ancestors), systematic_offspring
//                                 (the offspring form), log_sum_exp; the conversions of a
//                                 systematic draw: ancestors_to_offspring, offspring_to_cumulative,
//                                 cumulative_to_ancestors, permute; the chains: metropolis,
//                                 megopolis, rejection (ancestors; B from eps = 0.01) and
//                                 megopolis_permuted (PTX: the claims fused into the chain kernel;
//                                 CUDA C: ancestors, then permute); multinomial (Code 2: the exact
//                                 C written, then a binary search per draw); multinomial_sorted (the
//                                 points per stratum, then the comb); residual; ssp (its pairing on
//                                 one thread, as in the cuda backend: N to 2^16 only);
//                                 systematic_fast, stratified_fast, multinomial_sorted_fast
//                                 (options::fast_exp, the weights by ex2.approx; both backends
//                                 since session 41); systematic_given_max (the largest log-weight
//                                 handed over, options::device_max_log_weight: no max pass; PTX
//                                 since session 41);
//                                 N = 2^12 .. 2^24
//
// Counters: bytes_moved (the roofline's bytes: 12 per particle for the resamplers -- the
// log-weights read twice, for the max and for the CDF, and the result written; 4 for
// log-sum-exp; 8 for a conversion, its input read and its output written), copy_GBps (measured
// here, once) and pct_copy_bw = bytes_moved / time / copy_GBps.
#include <algorithm>
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



/// A systematic draw of the same weights in its three forms (the conversions' inputs).
struct draw_forms {
  cuda::host::device_vector<std::int32_t> a, o, O;
};
const draw_forms& device_draw(std::size_t n) {
  static std::map<std::size_t, std::unique_ptr<draw_forms>> cache;
  auto& slot = cache[n];
  if (!slot) {
    slot = std::make_unique<draw_forms>();
    slot->a = cuda::host::device_vector<std::int32_t>(n);
    slot->o = cuda::host::device_vector<std::int32_t>(n);
    slot->O = cuda::host::device_vector<std::int32_t>(n);
    cuda::workspace ws;
    ws.ancestors(scheme::systematic, device_weights(n), n, {1, 0}, 0, slot->a.data());
    ws.ancestors_to_offspring(slot->a.data(), n, slot->o.data());
    ws.offspring_to_cumulative(slot->o.data(), n, slot->O.data());
    ws.check();
  }
  return *slot;
}

enum class backend { ptx, cuda };
enum class op {
  systematic,
  stratified,
  systematic_offspring,
  log_sum_exp,
  ancestors_to_offspring,
  offspring_to_cumulative,
  cumulative_to_ancestors,
  permute,
  metropolis,
  megopolis,
  rejection,
  megopolis_permuted,
  multinomial,
  multinomial_sorted,
  residual,
  ssp,
  systematic_fast,  // options::fast_exp
  stratified_fast,
  multinomial_sorted_fast,
  systematic_given_max  // options::device_max_log_weight
};

bool is_fast(op o) { return o == op::systematic_fast || o == op::stratified_fast || o == op::multinomial_sorted_fast; }

/// One call of `o` on `b`: two-phase temp storage sized once, then timed enqueues.
void run(benchmark::State& state, backend b, op o) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const float* lw = device_weights(n);
  cuda::host::device_vector<std::int32_t> a(n);
  cuda::host::device_vector<double> result(1);
  resample::options opt;
  opt.fast_exp = is_fast(o);
  if (o == op::systematic_given_max) opt.device_max_log_weight = resample::bench::device_max(lw, n);
  const scheme s = o == op::stratified || o == op::stratified_fast ? scheme::stratified
                   : o == op::metropolis             ? scheme::metropolis
                   : o == op::megopolis || o == op::megopolis_permuted ? scheme::megopolis
                   : o == op::rejection              ? scheme::rejection
                   : o == op::multinomial            ? scheme::multinomial
                   : o == op::multinomial_sorted || o == op::multinomial_sorted_fast ? scheme::multinomial_sorted
                   : o == op::residual               ? scheme::residual
                   : o == op::ssp                    ? scheme::ssp
                                                     : scheme::systematic;
  cuda::host::device_vector<std::int32_t> drawn(o == op::megopolis_permuted && b == backend::cuda ? n : 1);
  std::uint32_t step = 0;
  const bool conversion = o == op::ancestors_to_offspring || o == op::offspring_to_cumulative ||
                          o == op::cumulative_to_ancestors || o == op::permute;
  const draw_forms* forms = conversion ? &device_draw(n) : nullptr;
  const auto enqueue = [&](void* temp, std::size_t& bytes) {
    if (o == op::ancestors_to_offspring) {
      if (b == backend::ptx) ptx::ancestors_to_offspring<std::int32_t>(temp, bytes, forms->a.data(), n, a.data());
      else cuda::ancestors_to_offspring<std::int32_t>(temp, bytes, forms->a.data(), n, a.data());
    } else if (o == op::offspring_to_cumulative) {
      if (b == backend::ptx) ptx::offspring_to_cumulative<std::int32_t>(temp, bytes, forms->o.data(), n, a.data());
      else cuda::offspring_to_cumulative<std::int32_t>(temp, bytes, forms->o.data(), n, a.data());
    } else if (o == op::cumulative_to_ancestors) {
      if (b == backend::ptx) ptx::cumulative_offspring_to_ancestors<std::int32_t>(temp, bytes, forms->O.data(), n, a.data());
      else cuda::cumulative_offspring_to_ancestors<std::int32_t>(temp, bytes, forms->O.data(), n, a.data());
    } else if (o == op::permute) {
      if (b == backend::ptx) ptx::permute<std::int32_t>(temp, bytes, forms->a.data(), n, a.data());
      else cuda::permute<std::int32_t>(temp, bytes, forms->a.data(), n, a.data());
    } else if (o == op::systematic_offspring) {
      if (b == backend::ptx) ptx::offspring<float, std::int32_t>(temp, bytes, s, lw, n, {1, 0}, step, a.data());
      else cuda::offspring<float, std::int32_t>(temp, bytes, s, lw, n, {1, 0}, step, a.data());
    } else if (o == op::log_sum_exp) {
      if (b == backend::ptx) ptx::log_sum_exp<float>(temp, bytes, lw, n, result.data());
      else cuda::log_sum_exp<float>(temp, bytes, lw, n, result.data());
    } else if (o == op::megopolis_permuted) {
      if (b == backend::ptx) {
        ptx::permuted_ancestors<float, std::int32_t>(temp, bytes, s, lw, n, {1, 0}, step, a.data());
      } else {  // one temp storage big enough for both calls
        std::size_t draw_bytes = bytes, permute_bytes = bytes;
        cuda::ancestors<float, std::int32_t>(temp, draw_bytes, s, lw, n, {1, 0}, step, drawn.data());
        cuda::permute<std::int32_t>(temp, permute_bytes, drawn.data(), n, a.data());
        if (temp == nullptr) bytes = std::max(draw_bytes, permute_bytes);
      }
    } else if (b == backend::ptx) {
      ptx::ancestors<float, std::int32_t>(temp, bytes, s, lw, n, {1, 0}, step, a.data(), opt);
    } else {
      cuda::ancestors<float, std::int32_t>(temp, bytes, s, lw, n, {1, 0}, step, a.data(), opt);
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
  report(state, n, o == op::log_sum_exp ? 4 : conversion || o == op::systematic_given_max ? 8 : 12, total);
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda::device_available()) {
    std::fprintf(stderr, "bench_ptx: no CUDA device\n");
    return 0;
  }
  const std::pair<op, const char*> ops[] = {{op::systematic, "systematic"},
                                            {op::stratified, "stratified"},
                                            {op::systematic_offspring, "systematic_offspring"},
                                            {op::log_sum_exp, "log_sum_exp"},
                                            {op::ancestors_to_offspring, "ancestors_to_offspring"},
                                            {op::offspring_to_cumulative, "offspring_to_cumulative"},
                                            {op::cumulative_to_ancestors, "cumulative_to_ancestors"},
                                            {op::permute, "permute"},
                                            {op::metropolis, "metropolis"},
                                            {op::megopolis, "megopolis"},
                                            {op::rejection, "rejection"},
                                            {op::megopolis_permuted, "megopolis_permuted"},
                                            {op::multinomial, "multinomial"},
                                            {op::multinomial_sorted, "multinomial_sorted"},
                                            {op::residual, "residual"},
                                            {op::ssp, "ssp"},
                                            {op::systematic_fast, "systematic_fast"},
                                            {op::stratified_fast, "stratified_fast"},
                                            {op::multinomial_sorted_fast, "multinomial_sorted_fast"},
                                            {op::systematic_given_max, "systematic_given_max"}};
  for (const auto& [o, name] : ops) {
    for (const auto& [b, prefix] : {std::pair{backend::ptx, "ptx/"}, std::pair{backend::cuda, "cuda/"}}) {
      benchmark::RegisterBenchmark((std::string(prefix) + name).c_str(),
                                   [b = b, o = o](benchmark::State& st) { run(st, b, o); })
          // SSP's pairing runs on one thread (about half a microsecond a particle): to 2^16 only
          ->RangeMultiplier(16)->Range(1 << 12, o == op::ssp ? 1 << 16 : 1 << 24)->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
