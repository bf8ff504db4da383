// The central contract (DESIGN §3): for the same log-weights, key and step, every backend returns
// the same ancestors bit for bit. Here `serial` against `parallel` with 1, 2, 3, 7 and 16 threads
// (or, built as cuda_parity_test, against `cuda`; as ptx_parity_test, against `ptx`),
// for every scheme, for float and double log-weights, int32 and int64 indices, and sizes from 1 to
// 2^22, many of them no multiple of anything.
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "backend_support.hpp"
#include "support/test_weights.hpp"

namespace resample {
namespace {

constexpr std::size_t parity_sizes[] = {1, 2, 31, 32, 33, 63, 64, 65, 1000, 4095, 4096, 4097, 65537, 100003};

using test::log_weights;

template <class T, class Index>
void expect_parity_on(scheme s, const std::vector<T>& lw, const std::vector<test::backend>& backends = test::all_backends(),
                      const options& opt = {}, const char* what = "") {
  const std::size_t n = lw.size();
  const std::span<const T> view(lw);
  std::vector<Index> expected(n);
  backends[0].ancestors(s, view, key{7, 3}, 11, std::span<Index>(expected), opt);
  for (std::size_t b = 1; b < backends.size(); ++b) {
    std::vector<Index> got(n);
    backends[b].ancestors(s, view, key{7, 3}, 11, std::span<Index>(got), opt);
    ASSERT_EQ(got, expected) << test::scheme_id(s) << " N = " << n << " " << what << " on " << backends[b].name;
  }
}

template <class T, class Index>
void expect_parity(scheme s, std::size_t n, bool with_zeros, const std::vector<test::backend>& backends = test::all_backends(),
                   const options& opt = {}) {
  expect_parity_on<T, Index>(s, log_weights<T>(n, 2.0, static_cast<unsigned>(n), with_zeros), backends, opt);
}

class ParityTest : public testing::TestWithParam<scheme> {
 protected:
  void SetUp() override { RESAMPLE_SKIP_WITHOUT_GPU(); }
};

TEST_P(ParityTest, DoubleInt32) {
  for (const std::size_t n : parity_sizes) expect_parity<double, std::int32_t>(GetParam(), n, false);
}
TEST_P(ParityTest, FloatInt64) {
  for (const std::size_t n : parity_sizes) expect_parity<float, std::int64_t>(GetParam(), n, false);
}
TEST_P(ParityTest, WithZeroWeights) {
  for (const std::size_t n : parity_sizes) {
    if (n >= 2) expect_parity<double, std::int64_t>(GetParam(), n, true);
  }
}
// Every log-weight equal (every r = N C / Q an integer) and every weight on two particles (r = 0
// before them, N after): where the comb's estimates meet an integer, which the points of the strata
// beside it decide (stratified and multinomial-sorted, core/comb_run.hpp). The chains only on the
// equal ones: on the skewed ones a rejection draw would take about N / 2 tries.
TEST_P(ParityTest, EqualAndSkewedWeights) {
  const scheme s = GetParam();
  for (const std::size_t n : {2, 33, 1000, 4097, 65537, 100003}) {
    expect_parity_on<float, std::int32_t>(s, std::vector<float>(n, 0.0f), test::all_backends(), {}, "equal");
    if (s == scheme::metropolis || s == scheme::megopolis || s == scheme::rejection) continue;
    std::vector<double> skewed(n, -std::numeric_limits<double>::infinity());
    skewed[n / 2] = 0.0;
    skewed[(n / 2 + 1) % n] = -0.5;
    expect_parity_on<double, std::int64_t>(s, skewed, test::all_backends(), {}, "skewed");
  }
}
// 2^22 particles on serial and 3 threads (B = 3 for the Metropolis types: parity does not depend on B).
TEST_P(ParityTest, LargeN) {
  options opt;
  opt.metropolis_steps = 3;
  expect_parity<float, std::int32_t>(GetParam(), std::size_t{1} << 22, false, test::large_n_backends(), opt);
}

INSTANTIATE_TEST_SUITE_P(Schemes, ParityTest, testing::ValuesIn(production_schemes),
                         [](const testing::TestParamInfo<scheme>& p) { return test::scheme_id(p.param); });

#ifndef RESAMPLE_TEST_CUDA  // the CPU backends' own API (tests/gpu/cuda_backend_test.cpp has the cuda one)
TEST(Parity, OffspringPermuteLogSumExpEss) {
  const auto lw = log_weights<double>(100003, 4.0, 5, true);
  const std::span<const double> view(lw);
  std::vector<std::int64_t> a(lw.size());
  cpu::ancestors(cpu::serial{}, scheme::multinomial, view, key{1, 1}, 0, std::span<std::int64_t>(a));
  const cpu::parallel par(7, 64);
  std::vector<std::int64_t> o1(a.size()), o2(a.size()), c1(a.size()), c2(a.size());
  cpu::ancestors_to_offspring(cpu::serial{}, std::span<const std::int64_t>(a), std::span<std::int64_t>(o1));
  cpu::ancestors_to_offspring(par, std::span<const std::int64_t>(a), std::span<std::int64_t>(o2));
  EXPECT_EQ(o1, o2);
  cpu::permute(cpu::serial{}, std::span<const std::int64_t>(a), std::span<std::int64_t>(c1));
  cpu::permute(par, std::span<const std::int64_t>(a), std::span<std::int64_t>(c2));
  EXPECT_EQ(c1, c2);
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (o1[i] > 0) {
      ASSERT_EQ(c1[i], static_cast<std::int64_t>(i));
    }
  }
  EXPECT_EQ(cpu::log_sum_exp(cpu::serial{}, view), cpu::log_sum_exp(par, view));
  EXPECT_EQ(cpu::effective_sample_size(cpu::serial{}, view), cpu::effective_sample_size(par, view));
}

TEST(Parity, BatchedEqualsSeparateCalls) {
  const auto lw = log_weights<double>(5000, 2.0, 9, false);
  const std::vector<std::size_t> offsets = {0, 1, 1000, 1033, 4999, 5000};
  std::vector<std::int32_t> batched(lw.size());
  cpu::ancestors_batched(cpu::parallel(4, 64), scheme::systematic, std::span<const double>(lw), offsets, key{2, 10}, 5,
                         std::span<std::int32_t>(batched));
  for (std::size_t b = 0; b + 1 < offsets.size(); ++b) {
    const std::size_t size = offsets[b + 1] - offsets[b];
    std::vector<std::int32_t> alone(size);
    cpu::ancestors(cpu::serial{}, scheme::systematic, std::span<const double>(lw).subspan(offsets[b], size),
                   key{2, 10 + static_cast<std::uint32_t>(b)}, 5, std::span<std::int32_t>(alone));
    EXPECT_EQ(std::vector<std::int32_t>(batched.begin() + static_cast<std::ptrdiff_t>(offsets[b]),
                                        batched.begin() + static_cast<std::ptrdiff_t>(offsets[b + 1])),
              alone)
        << "system " << b;
  }
}

#endif

}  // namespace
}  // namespace resample
