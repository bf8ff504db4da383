// Systematic resampling of four weights with the serial reference, then the permutation that keeps
// every surviving particle in place; then the same scheme on the exact core's two CPU backends.
#include <cstdio>
#include <limits>
#include <vector>

#include <cpu_reference/reference.hpp>
#include <resample/cpu/resample.hpp>

int main() {
  namespace ref = resample::reference;
  const std::vector<double> log_w = {-1.0, 0.5, -std::numeric_limits<double>::infinity(), 0.0};
  const auto w = ref::weights::from_log(log_w);  // throws resample::invalid_input on bad input
  ref::default_urbg rng(42);
  const auto a = ref::permute_parallel(ref::ancestors(ref::scheme::systematic, w, rng));
  for (const auto ancestor : a) std::printf("%zu ", ancestor);
  // The exact core: the same draw from the serial and the parallel backend, bit for bit.
  std::vector<std::int32_t> serial(log_w.size()), parallel(log_w.size());
  resample::cpu::ancestors(resample::cpu::serial{}, resample::scheme::systematic, std::span<const double>(log_w),
                           resample::key{42, 0}, 0, std::span<std::int32_t>(serial));
  resample::cpu::ancestors(resample::cpu::parallel(2), resample::scheme::systematic, std::span<const double>(log_w),
                           resample::key{42, 0}, 0, std::span<std::int32_t>(parallel));
  for (const auto ancestor : serial) std::printf("%d ", ancestor);
  std::printf("\n");
  return a.size() == log_w.size() && serial == parallel ? 0 : 1;
}
