// The production backends as test parameters: each property is written once and instantiated
// for `serial` and for `parallel` with several thread counts (Ginkgo's "EqualsReference" style).
// Compiled with RESAMPLE_TEST_CUDA, the same tests run `serial` against `cuda` instead (and skip,
// with the reason, where no GPU is present); with RESAMPLE_TEST_PTX as well, against `ptx`.
#pragma once

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "resample/cpu/resample.hpp"
#ifdef RESAMPLE_TEST_CUDA
#include <gtest/gtest.h>

#include "resample/cuda/host.hpp"
#endif
#ifdef RESAMPLE_TEST_PTX
#include "resample/ptx/host.hpp"
#endif

namespace resample::test {

/// A backend by name: "serial", or "parallel-T" with T threads and blocks as small as 64 particles
/// so that even small N is split.
struct backend {
  std::string name;
  unsigned threads = 0;  // 0: serial
  bool cuda = false;
  bool ptx = false;

  template <class T, class Index>
  void ancestors(scheme s, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> a,
                 const options& opt = {}) const {
#ifdef RESAMPLE_TEST_CUDA
    if (cuda) return resample::cuda::host::ancestors(s, lw, k, step, a, opt);
#endif
#ifdef RESAMPLE_TEST_PTX
    if (ptx) return resample::ptx::host::ancestors(s, lw, k, step, a, opt);
#endif
    if (threads == 0) {
      cpu::ancestors(cpu::serial{}, s, lw, k, step, a, opt);
    } else {
      const cpu::parallel ex(threads, 64);
      cpu::ancestors(ex, s, lw, k, step, a, opt);
    }
  }
};

#if defined(RESAMPLE_TEST_CUDA) && defined(RESAMPLE_TEST_PTX)
inline std::vector<backend> all_backends() { return {{"serial", 0}, {"ptx", 0, false, true}}; }
#elif defined(RESAMPLE_TEST_CUDA)
inline std::vector<backend> all_backends() { return {{"serial", 0}, {"cuda", 0, true}}; }
#endif
#ifdef RESAMPLE_TEST_CUDA
/// The backends compared at large N.
inline std::vector<backend> large_n_backends() { return all_backends(); }
#define RESAMPLE_SKIP_WITHOUT_GPU() \
  if (!resample::cuda::device_available()) GTEST_SKIP() << "no CUDA device: the cuda backend is not tested here"
#else
inline std::vector<backend> all_backends() {
  return {{"serial", 0}, {"parallel_1", 1}, {"parallel_2", 2}, {"parallel_3", 3}, {"parallel_7", 7}, {"parallel_16", 16}};
}
inline std::vector<backend> large_n_backends() { return {{"serial", 0}, {"parallel_3", 3}}; }
#define RESAMPLE_SKIP_WITHOUT_GPU() (void)0
#endif

/// The scheme's name as a test name ('-' is not allowed there).
inline std::string scheme_id(scheme s) {
  std::string id(name(s));
  std::replace(id.begin(), id.end(), '-', '_');
  return id;
}

}  // namespace resample::test
