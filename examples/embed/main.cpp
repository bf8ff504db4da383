// Systematic resampling of four weights with the serial reference, then the permutation that keeps
// every surviving particle in place.
#include <cstdio>
#include <limits>
#include <vector>

#include <cpu_reference/reference.hpp>

int main() {
  namespace ref = resample::reference;
  const std::vector<double> log_w = {-1.0, 0.5, -std::numeric_limits<double>::infinity(), 0.0};
  const auto w = ref::weights::from_log(log_w);  // throws resample::invalid_input on bad input
  ref::default_urbg rng(42);
  const auto a = ref::permute_parallel(ref::ancestors(ref::scheme::systematic, w, rng));
  for (const auto ancestor : a) std::printf("%zu ", ancestor);
  std::printf("\n");
  return a.size() == log_w.size() ? 0 : 1;
}
