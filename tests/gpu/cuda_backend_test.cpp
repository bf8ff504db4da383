// The cuda backend's API beyond the shared parity tests (cuda_parity_test, cuda_backend_api_test):
// the offspring and cumulative forms, the conversions, Code 7's permutation, log-sum-exp, ESS and
// the batched call, each equal bit for bit to resample::cpu; the raw two-phase API (temp sizes,
// a stream, nothing written on bad input, capture in a CUDA graph and replay); sizes around the
// 2048-particle tile and large N; skewed weights that put every offspring in one tile.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "backend_support.hpp"
#include "resample/core/sorted_points.hpp"
#include "support/test_weights.hpp"

namespace resample {
namespace {

constexpr std::size_t sizes[] = {1, 2, 31, 32, 33, 255, 256, 257, 2047, 2048, 2049, 6143, 10000, 100003};

using test::log_weights;

template <class X>
std::span<const X> view(const std::vector<X>& v) {
  return std::span<const X>(v);
}

class CudaForms : public testing::TestWithParam<scheme> {
 protected:
  void SetUp() override { RESAMPLE_SKIP_WITHOUT_GPU(); }
};

TEST_P(CudaForms, OffspringAndCumulativeEqualCpu) {
  const scheme s = GetParam();
  for (const std::size_t n : sizes) {
    const auto lw = log_weights(n, 2.0, static_cast<unsigned>(n), n > 2);
    std::vector<std::int64_t> o_cpu(n), o_gpu(n), O_cpu(n), O_gpu(n);
    cpu::offspring(cpu::serial{}, s, view(lw), key{4, 4}, 9, std::span<std::int64_t>(o_cpu));
    cuda::host::offspring(s, view(lw), key{4, 4}, 9, std::span<std::int64_t>(o_gpu));
    ASSERT_EQ(o_gpu, o_cpu) << "N = " << n;
    cpu::cumulative_offspring(cpu::serial{}, s, view(lw), key{4, 4}, 9, std::span<std::int64_t>(O_cpu));
    cuda::host::cumulative_offspring(s, view(lw), key{4, 4}, 9, std::span<std::int64_t>(O_gpu));
    ASSERT_EQ(O_gpu, O_cpu) << "N = " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Schemes, CudaForms, testing::ValuesIn(production_schemes),
                         [](const testing::TestParamInfo<scheme>& p) { return test::scheme_id(p.param); });

TEST(CudaConversions, EqualCpuOnRandomAncestors) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  for (const std::size_t n : sizes) {
    reference::default_urbg rng(static_cast<unsigned>(n) + 1);
    // Clustered ancestors (many losers, long chases) and uniform ones.
    for (const std::size_t spread : {std::size_t{1} + n / 16, n}) {
      std::vector<std::int32_t> a(n);
      for (auto& x : a) x = static_cast<std::int32_t>(rng() % spread);
      std::vector<std::int32_t> o_cpu(n), o_gpu(n), O_cpu(n), O_gpu(n), back_cpu(n), back_gpu(n), c_cpu(n), c_gpu(n);
      cpu::ancestors_to_offspring(cpu::serial{}, view(a), std::span<std::int32_t>(o_cpu));
      cuda::host::ancestors_to_offspring(view(a), std::span<std::int32_t>(o_gpu));
      ASSERT_EQ(o_gpu, o_cpu) << "N = " << n;
      cpu::offspring_to_cumulative(cpu::serial{}, view(o_cpu), std::span<std::int32_t>(O_cpu));
      cuda::host::offspring_to_cumulative(view(o_cpu), std::span<std::int32_t>(O_gpu));
      ASSERT_EQ(O_gpu, O_cpu) << "N = " << n;
      cpu::cumulative_offspring_to_ancestors(cpu::serial{}, view(O_cpu), std::span<std::int32_t>(back_cpu));
      cuda::host::cumulative_offspring_to_ancestors(view(O_cpu), std::span<std::int32_t>(back_gpu));
      ASSERT_EQ(back_gpu, back_cpu) << "N = " << n;
      cpu::permute(cpu::serial{}, view(a), std::span<std::int32_t>(c_cpu));
      cuda::host::permute(view(a), std::span<std::int32_t>(c_gpu));
      ASSERT_EQ(c_gpu, c_cpu) << "N = " << n << ", spread " << spread;
    }
  }
}

TEST(CudaConversions, BadInputNamesTheFirstIndexAndWritesNothing) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  std::vector<std::int64_t> a(5000, 3);
  a[4000] = 5000;
  a[4500] = -1;
  std::vector<std::int64_t> out(a.size(), -7);
  try {
    cuda::host::permute(view(a), std::span<std::int64_t>(out));
    ADD_FAILURE() << "accepted an ancestor outside [0, N)";
  } catch (const invalid_input& e) {
    EXPECT_STREQ(e.what(), "ancestor at index 4000 is 5000, outside [0, 5000)");
    EXPECT_EQ(e.index(), 4000u);
  }
  EXPECT_THROW(cuda::host::ancestors_to_offspring(view(a), std::span<std::int64_t>(out)), invalid_input);
  EXPECT_EQ(out, std::vector<std::int64_t>(a.size(), -7));
  std::vector<std::int64_t> O = {0, 2, 1, 3};
  try {
    cuda::host::cumulative_offspring_to_ancestors(view(O), std::span<std::int64_t>(out).first(4));
    ADD_FAILURE() << "accepted decreasing cumulative offspring";
  } catch (const invalid_input& e) {
    EXPECT_STREQ(e.what(), "cumulative offspring decrease at index 2");
  }
  O = {0, 1, 2, 3};
  try {
    cuda::host::cumulative_offspring_to_ancestors(view(O), std::span<std::int64_t>(out).first(4));
    ADD_FAILURE() << "accepted cumulative offspring that end below N";
  } catch (const invalid_input& e) {
    EXPECT_STREQ(e.what(), "cumulative offspring end at 3, not at N = 4");
    EXPECT_EQ(e.index(), 3u);
  }
}

TEST(CudaReductions, LogSumExpAndEssEqualCpu) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  for (const std::size_t n : sizes) {
    const auto lw = log_weights(n, 4.0, static_cast<unsigned>(n) + 7, n > 2);
    EXPECT_EQ(cuda::host::log_sum_exp(view(lw)), cpu::log_sum_exp(cpu::serial{}, view(lw))) << "N = " << n;
    EXPECT_EQ(cuda::host::effective_sample_size(view(lw)), cpu::effective_sample_size(cpu::serial{}, view(lw)))
        << "N = " << n;
    const std::vector<float> lwf(lw.begin(), lw.end());
    EXPECT_EQ(cuda::host::log_sum_exp(view(lwf)), cpu::log_sum_exp(cpu::serial{}, view(lwf))) << "N = " << n;
  }
}

class CudaBatched : public testing::TestWithParam<scheme> {
 protected:
  void SetUp() override { RESAMPLE_SKIP_WITHOUT_GPU(); }
};

TEST_P(CudaBatched, EqualsCpuBatched) {
  auto lw = log_weights(20000, 2.0, 9, true);
  lw[0] = -1.0;  // system 0 is this one particle: give it a weight
  const std::vector<std::size_t> offsets = {0, 1, 2, 1000, 1033, 3081, 4999, 5000, 12000, 20000};
  std::vector<std::int32_t> cpu_a(lw.size()), gpu_a(lw.size());
  options opt;
  opt.metropolis_steps = 20;
  cpu::ancestors_batched(cpu::serial{}, GetParam(), view(lw), offsets, key{2, 10}, 5, std::span<std::int32_t>(cpu_a), opt);
  cuda::host::ancestors_batched(GetParam(), view(lw), offsets, key{2, 10}, 5, std::span<std::int32_t>(gpu_a), opt);
  EXPECT_EQ(gpu_a, cpu_a);
  // Many equal systems, the benchmark shape, with the eps rule.
  const auto many = log_weights(64 * 1024, 1.0, 3);
  std::vector<std::size_t> even(65);
  for (std::size_t b = 0; b <= 64; ++b) even[b] = b * 1024;
  std::vector<std::int64_t> cpu_m(many.size()), gpu_m(many.size());
  cpu::ancestors_batched(cpu::serial{}, GetParam(), view(many), even, key{5, 0}, 1, std::span<std::int64_t>(cpu_m));
  cuda::host::ancestors_batched(GetParam(), view(many), even, key{5, 0}, 1, std::span<std::int64_t>(gpu_m));
  EXPECT_EQ(gpu_m, cpu_m);
}

INSTANTIATE_TEST_SUITE_P(Schemes, CudaBatched,
                         testing::Values(scheme::systematic, scheme::stratified, scheme::metropolis, scheme::megopolis,
                                         scheme::rejection),
                         [](const testing::TestParamInfo<scheme>& p) { return std::string(name(p.param)); });

TEST(CudaBatched, BadSystemIsReportedWithItsLocalIndex) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  auto lw = log_weights(3000, 1.0, 4);
  lw[2100] = std::numeric_limits<double>::quiet_NaN();
  lw[2900] = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::size_t> offsets = {0, 1000, 2000, 3000};
  std::vector<std::int32_t> a(lw.size(), -7);
  try {
    cuda::host::ancestors_batched(scheme::systematic, view(lw), offsets, key{}, 0, std::span<std::int32_t>(a));
    ADD_FAILURE() << "accepted a NaN";
  } catch (const invalid_input& e) {
    EXPECT_STREQ(e.what(), "log-weight at index 100 is NaN");
  }
  const std::vector<std::size_t> empty = {0, 1000, 1000, 3000};
  EXPECT_THROW(cuda::host::ancestors_batched(scheme::systematic, view(lw), empty, key{}, 0, std::span<std::int32_t>(a)),
               invalid_input);
  EXPECT_THROW(cuda::host::ancestors_batched(scheme::residual, view(lw), offsets, key{}, 0, std::span<std::int32_t>(a)),
               invalid_input);
}

// The offsets checked on the device: by one block up to 2^16 systems, by a grid beyond (70000
// systems of 3 particles). An empty system is named, with nothing written; offsets that do not end
// at N are refused; good offsets give the CPU's bits.
TEST(CudaBatched, OffsetsCheckedOnTheDeviceForFewAndManySystems) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  cuda::workspace ws;
  for (const std::size_t systems : {std::size_t{10}, std::size_t{70000}}) {
    SCOPED_TRACE(testing::Message() << systems << " systems");
    const std::size_t n = 3 * systems;
    const auto lw = log_weights(n, 1.0, 8);
    std::vector<std::uint64_t> offsets(systems + 1);
    for (std::size_t b = 0; b <= systems; ++b) offsets[b] = 3 * b;
    const std::vector<std::size_t> host_offsets(offsets.begin(), offsets.end());
    std::vector<std::int32_t> cpu_a(n);
    cpu::ancestors_batched(cpu::serial{}, scheme::stratified, view(lw), view(host_offsets), key{3, 1}, 2,
                           std::span<std::int32_t>(cpu_a));
    const cuda::host::device_vector<double> d_lw(view(lw));
    const std::vector<std::int32_t> poison(n, -7);
    cuda::host::device_vector<std::int32_t> d_a(view(poison));
    cuda::host::device_vector<std::uint64_t> d_off(view(offsets));
    ws.ancestors_batched(scheme::stratified, d_lw.data(), d_off.data(), systems, n, key{3, 1}, 2, d_a.data());
    ws.check();
    std::vector<std::int32_t> a(n);
    d_a.copy_to(std::span<std::int32_t>(a));
    EXPECT_EQ(a, cpu_a);
    d_a = cuda::host::device_vector<std::int32_t>(view(poison));
    const std::size_t empty = systems - 3;
    auto bad = offsets;
    bad[empty + 1] = bad[empty];
    d_off = cuda::host::device_vector<std::uint64_t>(view(bad));
    ws.ancestors_batched(scheme::systematic, d_lw.data(), d_off.data(), systems, n, key{}, 0, d_a.data());
    try {
      ws.check();
      ADD_FAILURE() << "accepted an empty system";
    } catch (const invalid_input& e) {
      EXPECT_EQ(e.index(), empty) << e.what();
    }
    d_a.copy_to(std::span<std::int32_t>(a));
    EXPECT_EQ(a, poison) << "wrote output";
    bad = offsets;
    bad[systems] = n - 1;
    d_off = cuda::host::device_vector<std::uint64_t>(view(bad));
    ws.ancestors_batched(scheme::systematic, d_lw.data(), d_off.data(), systems, n, key{}, 0, d_a.data());
    EXPECT_THROW(ws.check(), invalid_input);
    d_a.copy_to(std::span<std::int32_t>(a));
    EXPECT_EQ(a, poison) << "wrote output";
  }
}

/// Weights that give every offspring to one particle, or to a few in one tile: one block writes
/// all N ancestors. (The CDF schemes: Metropolis, Megopolis and rejection chains would wander
/// ~10^5 steps each among 300000 zero weights -- hours on the serial CPU side.)
TEST(CudaSkewed, AllOffspringInOneTileEqualCpu) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  for (const std::size_t n : {std::size_t{5000}, std::size_t{300000}}) {  // the one-block path and the tiled one
    std::vector<float> lw(n, -std::numeric_limits<float>::infinity());
    lw[n / 2] = 0.0f;
    lw[n / 2 + 1] = -0.5f;
    lw[7] = -40.0f;
    for (const scheme s : {scheme::multinomial, scheme::multinomial_sorted, scheme::stratified, scheme::systematic,
                           scheme::residual, scheme::ssp}) {
      std::vector<std::int32_t> cpu_a(n), gpu_a(n);
      cpu::ancestors(cpu::serial{}, s, view(lw), key{1, 1}, 2, std::span<std::int32_t>(cpu_a));
      cuda::host::ancestors(s, view(lw), key{1, 1}, 2, std::span<std::int32_t>(gpu_a));
      EXPECT_EQ(gpu_a, cpu_a) << name(s) << " N = " << n;
    }
  }
}

/// The GPU's ancestors written over -1 in every slot, so that a slot the call leaves unwritten
/// shows (host::ancestors' fresh buffer may still hold an earlier call's ancestors).
template <class Index>
std::vector<Index> gpu_ancestors_over_poison(scheme s, const std::vector<float>& lw, key k, std::uint32_t step) {
  cuda::workspace ws;
  const cuda::host::device_vector<float> d_lw(view(lw));
  std::vector<Index> a(lw.size(), Index{-1});
  cuda::host::device_vector<Index> d_a{std::span<const Index>(a)};
  ws.ancestors(s, d_lw.data(), lw.size(), k, step, d_a.data());
  ws.check();
  d_a.copy_to(std::span<Index>(a));
  return a;
}

/// Runs of offspring whose lengths straddle Code 8's rows (128 slots) and windows (384) inside one
/// warp's particles and across warps: the heavy-run fill (whole rows without a run start, stored
/// plainly, the long ones by the grid) meets the marked windows at many kinds of boundary.
/// Systematic gives particle i floor or ceil of N w_i offspring, and the other two schemes
/// counts near it, so the lengths are about the weights'. 64-bit indices too (two stores a lane).
TEST(CudaSkewed, RunsAcrossRowsAndWindowsEqualCpu) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const std::size_t n = 300000;
  const std::vector<double> lengths = {1,   127, 128, 129,  255,  256,  257,  383,   384,  385,
                                       386, 511, 640, 1023, 1151, 5000, 5003, 40000, 70001};
  for (const std::size_t spacing : {std::size_t{1}, std::size_t{3}, std::size_t{301}}) {  // one warp .. many
    std::vector<float> lw(n, -std::numeric_limits<float>::infinity());
    double rest = static_cast<double>(n);
    for (std::size_t k = 0; k < lengths.size(); ++k) {
      lw[1000 + spacing * k] = static_cast<float>(std::log(lengths[k]));
      rest -= lengths[k];
    }
    lw[n - 5] = static_cast<float>(std::log(rest));  // the rest, in the last tile
    for (const scheme s : {scheme::systematic, scheme::stratified, scheme::multinomial_sorted}) {
      std::vector<std::int32_t> cpu_a(n);
      cpu::ancestors(cpu::serial{}, s, view(lw), key{9, 4}, 1, std::span<std::int32_t>(cpu_a));
      EXPECT_EQ(gpu_ancestors_over_poison<std::int32_t>(s, lw, key{9, 4}, 1), cpu_a)
          << name(s) << " spacing " << spacing;
      if (s == scheme::systematic) {
        const std::vector<std::int64_t> cpu_a64(cpu_a.begin(), cpu_a.end());
        EXPECT_EQ(gpu_ancestors_over_poison<std::int64_t>(s, lw, key{9, 4}, 1), cpu_a64)
            << "64-bit indices, spacing " << spacing;
      }
    }
  }
}

/// 64 particles of equal weight and no other: 2^15 offspring each, every run long enough to be
/// handed to the whole grid (comb.cu's heavy runs), more runs than the 32 slots, so that the later
/// ones are filled by their own warps.
TEST(CudaSkewed, MoreHeavyRunsThanSlotsEqualCpu) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const std::size_t n = std::size_t{1} << 21;
  std::vector<float> lw(n, -std::numeric_limits<float>::infinity());
  for (std::size_t k = 0; k < 64; ++k) lw[k * (n / 64) + 5 * k] = 0.0f;
  for (const scheme s : {scheme::systematic, scheme::stratified, scheme::multinomial_sorted}) {
    std::vector<std::int32_t> cpu_a(n);
    cpu::ancestors(cpu::serial{}, s, view(lw), key{2, 8}, 6, std::span<std::int32_t>(cpu_a));
    EXPECT_EQ(gpu_ancestors_over_poison<std::int32_t>(s, lw, key{2, 8}, 6), cpu_a) << name(s);
    if (s == scheme::systematic) {
      EXPECT_EQ(std::count(cpu_a.begin(), cpu_a.end(), 0), std::ptrdiff_t{1} << 15);
    }
  }
}

/// Every offspring to one particle at 2^20, where the whole grid is resident and every other warp
/// is done almost at once, so that the finding block's warps write most of its run (comb.cu's heavy
/// runs). Every slot must be written over the -1s.
TEST(CudaSkewed, OneParticleOwnsEveryOffspringEqualCpu) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const std::size_t n = std::size_t{1} << 20;
  std::vector<float> lw(n, -std::numeric_limits<float>::infinity());
  lw[n / 2 + 3] = 0.0f;
  for (const scheme s : {scheme::systematic, scheme::stratified, scheme::multinomial_sorted}) {
    std::vector<std::int32_t> cpu_a(n);
    cpu::ancestors(cpu::serial{}, s, view(lw), key{4, 2}, 9, std::span<std::int32_t>(cpu_a));
    const auto owner = static_cast<std::int32_t>(n / 2 + 3);
    ASSERT_EQ(std::count(cpu_a.begin(), cpu_a.end(), owner), static_cast<std::ptrdiff_t>(n));
    EXPECT_EQ(gpu_ancestors_over_poison<std::int32_t>(s, lw, key{4, 2}, 9), cpu_a) << name(s);
    if (s == scheme::systematic) {
      const std::vector<std::int64_t> cpu_a64(cpu_a.begin(), cpu_a.end());
      EXPECT_EQ(gpu_ancestors_over_poison<std::int64_t>(s, lw, key{4, 2}, 9), cpu_a64) << "64-bit indices";
    }
  }
}

/// Log-weights of huge magnitude, where floats near the max are 32 (3e8) to 2^104 (3e38) apart:
/// a particle one step below the max has weight e^-32 or less, most are exactly zero once
/// quantised. The comb's estimated weights must stay within their bound there too (a floor of
/// max - 87 rounded up to a float is the max itself from 2^30 on, which would estimate every
/// weight as 1 and decide wrongly with full confidence).
TEST(CudaExtremes, HugeLogWeightsEqualCpu) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const std::size_t n = 300000;  // the tiled path
  for (const float top : {3.0e8f, -3.0e8f, 1.5e9f, -1.5e9f, 3.0e38f}) {
    std::vector<float> below(4, top);  // the max and the three floats under it
    for (std::size_t k = 1; k < below.size(); ++k) {
      below[k] = std::nextafter(below[k - 1], -std::numeric_limits<float>::infinity());
    }
    std::vector<float> lw(n);
    for (std::size_t i = 0; i < n; ++i) lw[i] = below[(i * 7 + i / 5) % below.size()];
    for (const scheme s : {scheme::systematic, scheme::stratified, scheme::multinomial_sorted}) {
      std::vector<std::int32_t> cpu_a(n), gpu_a(n);
      cpu::ancestors(cpu::serial{}, s, view(lw), key{5, 2}, 3, std::span<std::int32_t>(cpu_a));
      cuda::host::ancestors(s, view(lw), key{5, 2}, 3, std::span<std::int32_t>(gpu_a));
      EXPECT_EQ(gpu_a, cpu_a) << name(s) << " max " << top;
    }
  }
}

/// Batched systems whose offspring pile up on one or two particles, through both comb kernels: the
/// warp kernel (systems averaging at most 8192 particles; Code 8 in windows of 256 offspring, so a
/// heavy particle spans many windows) and the block kernel (larger systems).
TEST(CudaSkewed, BatchedHeavyParticlesEqualCpu) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const std::vector<std::vector<std::size_t>> batches = {{0, 1, 701, 3701, 8701, 8958, 9000},  // the warp kernel
                                                         {0, 20000, 40000, 40001}};              // the block kernel
  for (const auto& offsets : batches) {
    const std::size_t n = offsets.back();
    auto lw = log_weights<float>(n, 1.0, 11);
    for (std::size_t b = 0; b + 1 < offsets.size(); ++b) {
      const std::size_t begin = offsets[b], size = offsets[b + 1] - begin;
      if (b % 2 == 0 || size < 3) continue;  // the odd systems: one or two particles hold every weight
      for (std::size_t i = begin; i < offsets[b + 1]; ++i) lw[i] = -std::numeric_limits<float>::infinity();
      lw[begin + (b % 4 == 1 ? size - 1 : size / 3)] = 0.0f;
      lw[begin + 1] = -0.7f;
    }
    for (const scheme s : {scheme::systematic, scheme::stratified}) {
      std::vector<std::int32_t> cpu_a(n), gpu_a(n);
      cpu::ancestors_batched(cpu::serial{}, s, view(lw), offsets, key{3, 7}, 4, std::span<std::int32_t>(cpu_a));
      cuda::host::ancestors_batched(s, view(lw), offsets, key{3, 7}, 4, std::span<std::int32_t>(gpu_a));
      EXPECT_EQ(gpu_a, cpu_a) << name(s) << " systems " << offsets.size() - 1;
    }
  }
}

/// The raw API: two phases, a stream of our own, no output on bad input, and a CUDA graph.
class CudaRawApi : public testing::Test {
 protected:
  void SetUp() override {
    RESAMPLE_SKIP_WITHOUT_GPU();
    cuda::check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }
  cudaStream_t stream_ = nullptr;
};

TEST_F(CudaRawApi, TooLittleTempStorageIsRefused) {
  std::size_t bytes = 0;
  cuda::ancestors<float, std::int32_t>(nullptr, bytes, scheme::systematic, nullptr, 5000, key{}, 0, nullptr);
  EXPECT_GT(bytes, sizeof(cuda::device_status));
  cuda::workspace ws(stream_);
  ws.reserve(bytes);
  std::size_t less = bytes - 1;
  auto call = [&] {
    cuda::ancestors<float, std::int32_t>(ws.data(), less, scheme::systematic, nullptr, 5000, key{}, 0, nullptr, {},
                                         stream_);
  };
  EXPECT_THROW(call(), invalid_input);
}

TEST_F(CudaRawApi, BadInputWritesNothingAndIsReportedByCheck) {
  auto lw = log_weights(70000, 1.0, 2);
  lw[65000] = std::numeric_limits<double>::infinity();
  lw[66000] = std::numeric_limits<double>::quiet_NaN();
  const cuda::host::device_vector<double> d_lw(view(lw));
  const std::vector<std::int64_t> poison(lw.size(), -7);
  cuda::host::device_vector<std::int64_t> d_a(view(poison));
  cuda::workspace ws(stream_);
  for (const scheme s : production_schemes) {
    ws.ancestors(s, d_lw.data(), lw.size(), key{}, 0, d_a.data());
    try {
      ws.check();
      ADD_FAILURE() << name(s) << " accepted +inf";
    } catch (const invalid_input& e) {
      EXPECT_STREQ(e.what(), "log-weight at index 65000 is +inf") << name(s);
      EXPECT_EQ(e.index(), 65000u);
    }
    std::vector<std::int64_t> a(lw.size());
    d_a.copy_to(std::span<std::int64_t>(a));
    EXPECT_EQ(a, poison) << name(s) << " wrote output";
  }
}

// The max pass reads 16-byte vectors from the first 16-byte boundary and the scalars around them
// by themselves, and finds the offending index by a second read only when a block's flag falls:
// every start offset (0..3 elements, so every alignment of float and double), the largest weight
// and the first bad value at the head, the tail, a vector boundary and the middle, and rejection's
// bound between two floats.
template <class T>
void max_pass_at_every_alignment(cudaStream_t stream) {
  cuda::workspace ws(stream);
  for (const std::size_t n : {std::size_t{5}, std::size_t{67}, std::size_t{70001}}) {
    for (const std::size_t off : {0, 1, 2, 3}) {
      for (const std::size_t p : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{4}, n / 2, n - 2,
                                  n - 1}) {
        SCOPED_TRACE(testing::Message() << sizeof(T) << "-byte weights, N = " << n << ", offset " << off << ", at "
                                        << p);
        const auto base = log_weights(n + off, 1.0, static_cast<unsigned>(n + p));
        std::vector<T> lw(base.begin(), base.end());
        lw[off + p] = 3;  // the largest, here
        cuda::host::device_vector<T> d_lw{std::span<const T>(lw)};
        const std::span<const T> mine(lw.data() + off, n);
        EXPECT_EQ(ws.log_sum_exp(d_lw.data() + off, n), cpu::log_sum_exp(cpu::serial{}, mine));
        lw[off + p] = std::numeric_limits<T>::quiet_NaN();
        if (p + 1 < n) lw[off + p + 1] = std::numeric_limits<T>::infinity();
        d_lw = cuda::host::device_vector<T>{std::span<const T>(lw)};
        try {
          (void)ws.log_sum_exp(d_lw.data() + off, n);
          ADD_FAILURE() << "NaN accepted";
        } catch (const invalid_input& e) {
          EXPECT_EQ(e.index(), p) << e.what();
        }
      }
    }
  }
  // Rejection's bound in double, the weights in float: 1.0f lies above 1 - 2^-30 (which rounds to
  // 1.0f), not above 1.
  const std::size_t n = 70001;
  std::vector<float> lw(n, 0.0f);
  lw[40000] = 1.0f;
  const cuda::host::device_vector<float> d_lw{std::span<const float>(lw)};
  cuda::host::device_vector<std::int32_t> d_a(n);
  options opt;
  opt.rejection_log_bound = 1.0 - std::ldexp(1.0, -30);
  ws.ancestors(scheme::rejection, d_lw.data(), n, key{}, 0, d_a.data(), opt);
  try {
    ws.check();
    ADD_FAILURE() << "a log-weight above the bound accepted";
  } catch (const invalid_input& e) {
    EXPECT_EQ(e.index(), 40000u) << e.what();
  }
  opt.rejection_log_bound = 1.0;
  ws.ancestors(scheme::rejection, d_lw.data(), n, key{}, 0, d_a.data(), opt);
  EXPECT_NO_THROW(ws.check());
}

TEST_F(CudaRawApi, MaxPassFindsTheFirstBadValueAtEveryAlignment) {
  max_pass_at_every_alignment<float>(stream_);
  max_pass_at_every_alignment<double>(stream_);
}

// options::device_gate: a gate reading 0 makes every scheme's call write nothing and report no
// error; a gate reading 1 gives the ungated bits. Both the one-block path (N <= 8192) and the
// multi-pass one; ancestors and offspring (which honour it), cumulative and batched (which refuse it).
TEST_F(CudaRawApi, DeviceGateSkipsOrRunsTheCall) {
  cuda::host::device_vector<int> gate(1);
  cuda::workspace ws(stream_);
  // Host-to-device writes in stream order: a cudaMemcpy from pageable memory may return before its
  // transfer lands and is not ordered with stream_ (non-blocking), so a call could read the old gate.
  const auto upload = [this](void* to, const void* from, std::size_t bytes) {
    cuda::check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  };
  for (const std::size_t n : {std::size_t{3000}, std::size_t{70000}}) {
    const auto lw = log_weights(n, 1.0, 5);
    const cuda::host::device_vector<double> d_lw(view(lw));
    const std::vector<std::int64_t> poison(n, -7);
    cuda::host::device_vector<std::int64_t> d_a(view(poison));
    for (const scheme s : production_schemes) {
      if (s == scheme::ssp && n > 10000) continue;  // sequential pairing: slow, and gated like residual
      options opt;
      opt.device_gate = gate.data();
      const int closed = 0, open = 1;
      upload(gate.data(), &closed, sizeof closed);
      ws.ancestors(s, d_lw.data(), n, key{4, 1}, 2, d_a.data(), opt);
      EXPECT_NO_THROW(ws.check()) << name(s);
      std::vector<std::int64_t> a(n), expected(n);
      d_a.copy_to(std::span<std::int64_t>(a));
      EXPECT_EQ(a, poison) << name(s) << " wrote output through a closed gate, N = " << n;
      upload(gate.data(), &open, sizeof open);
      ws.ancestors(s, d_lw.data(), n, key{4, 1}, 2, d_a.data(), opt);
      ws.check();
      d_a.copy_to(std::span<std::int64_t>(a));
      cpu::ancestors(cpu::serial{}, s, view(lw), key{4, 1}, 2, std::span<std::int64_t>(expected), opt);
      EXPECT_EQ(a, expected) << name(s) << " through an open gate, N = " << n;
      upload(d_a.data(), poison.data(), n * sizeof(std::int64_t));
      // The offspring form through a closed gate: untouched too.
      upload(gate.data(), &closed, sizeof closed);
      std::size_t need = 0;
      cuda::offspring<double, std::int64_t>(nullptr, need, s, d_lw.data(), n, key{4, 1}, 2, d_a.data(), opt, stream_);
      ws.reserve(need);
      cuda::offspring<double, std::int64_t>(ws.data(), need, s, d_lw.data(), n, key{4, 1}, 2, d_a.data(), opt, stream_);
      EXPECT_NO_THROW(ws.check()) << name(s);
      d_a.copy_to(std::span<std::int64_t>(a));
      EXPECT_EQ(a, poison) << name(s) << " offspring written through a closed gate, N = " << n;
      upload(gate.data(), &open, sizeof open);
      cuda::offspring<double, std::int64_t>(ws.data(), need, s, d_lw.data(), n, key{4, 1}, 2, d_a.data(), opt, stream_);
      ws.check();
      d_a.copy_to(std::span<std::int64_t>(a));
      cpu::offspring(cpu::serial{}, s, view(lw), key{4, 1}, 2, std::span<std::int64_t>(expected), opt);
      EXPECT_EQ(a, expected) << name(s) << " offspring through an open gate, N = " << n;
      upload(d_a.data(), poison.data(), n * sizeof(std::int64_t));
      std::size_t cumulative = 0;
      const auto refused = [&] {
        cuda::cumulative_offspring<double, std::int64_t>(nullptr, cumulative, s, d_lw.data(), n, key{}, 0, d_a.data(),
                                                         opt, stream_);
      };
      EXPECT_THROW(refused(), invalid_input);
    }
  }
}

// options::device_max_log_weight: the max handed over gives the bits of the call without it
// (systematic, stratified and multinomial-sorted, float and double log-weights, the one-block path
// at N = 3000 and the passes at 70001), and a wrong one fails the call and writes nothing: one below
// the max names the first log-weight above it, one above says that none equals it, and for float
// log-weights a double between two floats is wrong too. NaN and +inf come first, as without it;
// weights that are all zero are reported as such with a max of -inf, and as a wrong max with 0.
// The other schemes and the batched call refuse it.
template <class T>
void given_max_cases(cudaStream_t stream) {
  using Index = std::int32_t;
  cuda::workspace ws(stream);
  const cuda::host::device_vector<double> given(1);
  const auto upload = [&](double m) {
    cuda::check(cudaMemcpyAsync(given.data(), &m, sizeof m, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
    cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  };
  options opt;
  opt.device_max_log_weight = given.data();
  for (const std::size_t n : {std::size_t{3000}, std::size_t{70001}}) {
    const auto base = log_weights(n, 2.0, static_cast<unsigned>(n) + 3);
    std::vector<T> lw(base.begin(), base.end());
    const std::size_t top = static_cast<std::size_t>(std::max_element(lw.begin(), lw.end()) - lw.begin());
    const double largest = static_cast<double>(lw[top]);
    cuda::host::device_vector<T> d_lw{std::span<const T>(lw)};
    const std::vector<Index> poison(n, -7);
    cuda::host::device_vector<Index> d_a{view(poison)};
    std::vector<Index> a(n), expected(n);
    for (const scheme s : {scheme::systematic, scheme::stratified, scheme::multinomial_sorted}) {
      SCOPED_TRACE(testing::Message() << name(s) << ", " << sizeof(T) << "-byte log-weights, N = " << n);
      upload(largest);
      ws.ancestors(s, d_lw.data(), n, key{7, 3}, 4, d_a.data(), opt);
      ws.check();
      d_a.copy_to(std::span<Index>(a));
      cpu::ancestors(cpu::serial{}, s, std::span<const T>(lw), key{7, 3}, 4, std::span<Index>(expected));
      EXPECT_EQ(a, expected);
      // Wrong maxima: nothing written.
      const auto refused = [&](double m, std::optional<std::size_t> index = {}) -> std::string {
        d_a = cuda::host::device_vector<Index>{view(poison)};
        upload(m);
        ws.ancestors(s, d_lw.data(), n, key{7, 3}, 4, d_a.data(), opt);
        std::string message;
        try {
          ws.check();
          ADD_FAILURE() << "max " << m << " accepted";
        } catch (const invalid_input& e) {
          message = e.what();
          if (index) {
            EXPECT_EQ(e.index(), index) << message;
          }
        }
        d_a.copy_to(std::span<Index>(a));
        EXPECT_EQ(a, poison) << "written with max " << m;
        return message;
      };
      const std::string low = refused(std::nextafter(largest, -INFINITY), top);
      EXPECT_NE(low.find("but log-weight " + std::to_string(top) + " is"), std::string::npos) << low;
      const std::string high = refused(largest + 1.0);
      EXPECT_NE(high.find("but no log-weight equals it"), std::string::npos) << high;
      if constexpr (sizeof(T) == 4) {  // between the largest float and the next one up
        const double between = largest + std::ldexp(std::fabs(largest), -30);
        EXPECT_NE(refused(between).find("no log-weight equals it"), std::string::npos);
      }
      EXPECT_NE(refused(std::numeric_limits<double>::quiet_NaN(), 0).find("but log-weight 0 is"), std::string::npos);
      EXPECT_NE(refused(INFINITY).find("but no log-weight equals it"), std::string::npos);
      EXPECT_NE(refused(-INFINITY, 0).find("but log-weight 0 is"), std::string::npos);
    }
    // A closed gate wins over a wrong max: nothing written, no error.
    const int closed = 0;
    const cuda::host::device_vector<int> gate{std::span<const int>(&closed, 1)};
    options gated = opt;
    gated.device_gate = gate.data();
    upload(largest + 1.0);
    d_a = cuda::host::device_vector<Index>{view(poison)};
    ws.ancestors(scheme::systematic, d_lw.data(), n, key{7, 3}, 4, d_a.data(), gated);
    EXPECT_NO_THROW(ws.check());
    d_a.copy_to(std::span<Index>(a));
    EXPECT_EQ(a, poison) << "written through a closed gate";
    // NaN and +inf are reported first, with the message the call gives without the option.
    std::vector<T> bad = lw;
    bad[n / 3] = std::numeric_limits<T>::quiet_NaN();
    bad[n / 2] = std::numeric_limits<T>::infinity();
    d_lw = cuda::host::device_vector<T>{std::span<const T>(bad)};
    upload(largest);
    std::string with, without;
    for (const bool given_max : {true, false}) {
      ws.ancestors(scheme::systematic, d_lw.data(), n, key{7, 3}, 4, d_a.data(), given_max ? opt : options{});
      try {
        ws.check();
        ADD_FAILURE() << "NaN accepted";
      } catch (const invalid_input& e) {
        (given_max ? with : without) = e.what();
        EXPECT_EQ(e.index(), std::optional<std::size_t>(n / 3));
      }
    }
    EXPECT_EQ(with, without);
    // Every weight zero, with a max of -inf.
    const std::vector<T> zero(n, -std::numeric_limits<T>::infinity());
    d_lw = cuda::host::device_vector<T>{std::span<const T>(zero)};
    upload(-INFINITY);
    ws.ancestors(scheme::stratified, d_lw.data(), n, key{7, 3}, 4, d_a.data(), opt);
    try {
      ws.check();
      ADD_FAILURE() << "weights that are all zero accepted";
    } catch (const invalid_input& e) {
      EXPECT_STREQ(e.what(), "all log-weights are -inf (every weight is zero)");
    }
    // ... and with a max of 0, which none equals: the wrong max is reported first, on both paths.
    upload(0.0);
    ws.ancestors(scheme::stratified, d_lw.data(), n, key{7, 3}, 4, d_a.data(), opt);
    try {
      ws.check();
      ADD_FAILURE() << "a max of 0 accepted for weights that are all zero";
    } catch (const invalid_input& e) {
      EXPECT_NE(std::string(e.what()).find("but no log-weight equals it"), std::string::npos) << e.what();
    }
  }
  cuda::host::device_vector<T> d_lw(8);
  cuda::host::device_vector<Index> d_a(8);
  EXPECT_THROW(ws.ancestors(scheme::residual, d_lw.data(), 8, key{}, 0, d_a.data(), opt), invalid_input);
  EXPECT_THROW(ws.ancestors(scheme::metropolis, d_lw.data(), 8, key{}, 0, d_a.data(), opt), invalid_input);
  const std::vector<std::uint64_t> offsets = {0, 4, 8};
  const cuda::host::device_vector<std::uint64_t> d_offsets{view(offsets)};
  std::size_t bytes = 0;
  EXPECT_THROW((cuda::ancestors_batched<T, Index>(nullptr, bytes, scheme::systematic, d_lw.data(), d_offsets.data(), 2,
                                                  8, key{}, 0, d_a.data(), opt)),
               invalid_input);
}

TEST_F(CudaRawApi, GivenMaxGivesTheSameBitsAndIsChecked) {
  given_max_cases<float>(stream_);
  given_max_cases<double>(stream_);
}

// weight_statistics: log-sum-exp and ESS from one pass, the bits of the separate calls and the CPU.
TEST_F(CudaRawApi, WeightStatisticsEqualTheSeparateCalls) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{33}, std::size_t{5000}, std::size_t{300001}}) {
    const auto lw = log_weights(n, 3.0, static_cast<unsigned>(n), n > 2);
    const cuda::host::device_vector<double> d_lw(view(lw));
    cuda::host::device_vector<double> d_out(2);
    std::size_t bytes = 0;
    cuda::weight_statistics<double>(nullptr, bytes, d_lw.data(), n, nullptr, nullptr, stream_);
    cuda::workspace ws(stream_);
    ws.reserve(bytes);
    cuda::weight_statistics<double>(ws.data(), bytes, d_lw.data(), n, d_out.data(), d_out.data() + 1, stream_);
    ws.check();
    double got[2];
    d_out.copy_to(std::span<double>(got));
    const auto cpu_stats = cpu::weight_statistics(cpu::serial{}, view(lw));
    EXPECT_EQ(got[0], cpu::log_sum_exp(cpu::serial{}, view(lw))) << "N = " << n;
    EXPECT_EQ(got[1], cpu::effective_sample_size(cpu::serial{}, view(lw))) << "N = " << n;
    EXPECT_EQ(got[0], cpu_stats.log_sum_exp) << "N = " << n;
    EXPECT_EQ(got[1], cpu_stats.ess) << "N = " << n;
  }
}

TEST_F(CudaRawApi, CapturedInAGraphAndReplayed) {
  const std::size_t n = 4096;
  const auto lw = log_weights(n, 2.0, 11);
  const std::vector<float> lwf(lw.begin(), lw.end());
  const cuda::host::device_vector<float> d_lw(view(lwf));
  cuda::host::device_vector<std::int32_t> d_a(n);
  cuda::workspace ws(stream_);
  std::size_t bytes = 0;
  cuda::ancestors<float, std::int32_t>(nullptr, bytes, scheme::systematic, d_lw.data(), n, key{3, 0}, 0, d_a.data());
  ws.reserve(bytes);  // the only allocation, before capture
  for (const scheme s : {scheme::systematic, scheme::stratified, scheme::multinomial_sorted, scheme::megopolis}) {
    std::size_t need = 0;
    cuda::ancestors<float, std::int32_t>(nullptr, need, s, d_lw.data(), n, key{3, 0}, 0, d_a.data());
    ws.reserve(need);
    cudaGraph_t graph = nullptr;
    cuda::check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    std::size_t have = ws.bytes();
    cuda::ancestors<float, std::int32_t>(ws.data(), have, s, d_lw.data(), n, key{3, 0}, 6, d_a.data(), {}, stream_);
    cuda::check(cudaStreamEndCapture(stream_, &graph), "cudaStreamEndCapture");
    cudaGraphExec_t exec = nullptr;
    cuda::check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    for (int replay = 0; replay < 3; ++replay) cuda::check(cudaGraphLaunch(exec, stream_), "cudaGraphLaunch");
    ws.check();
    std::vector<std::int32_t> got(n), expected(n);
    cuda::check(cudaMemcpy(got.data(), d_a.data(), n * sizeof(std::int32_t), cudaMemcpyDeviceToHost), "cudaMemcpy");
    cpu::ancestors(cpu::serial{}, s, view(lwf), key{3, 0}, 6, std::span<std::int32_t>(expected));
    EXPECT_EQ(got, expected) << name(s);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
}

// options::device_step: one capture, replayed with the step word changed between replays, gives
// at each replay the CPU's draw for that step (every scheme; the one-block path and the
// multi-pass one; ancestors and the offspring form); the batched call refuses it.
TEST_F(CudaRawApi, DeviceStepGivesEachReplayItsOwnDraw) {
  cuda::host::device_vector<std::uint32_t> step(1);
  for (const std::size_t n : {std::size_t{3000}, std::size_t{70000}}) {
    const auto lw = log_weights(n, 1.5, 17);
    const cuda::host::device_vector<double> d_lw(view(lw));
    cuda::host::device_vector<std::int64_t> d_a(n);
    for (const scheme s : production_schemes) {
      if (s == scheme::ssp && n > 10000) continue;  // sequential pairing: slow
      for (const bool offspring_form : {false, true}) {
        options opt;
        opt.device_step = step.data();
        std::size_t bytes = 0;
        cuda::ancestors<double, std::int64_t>(nullptr, bytes, s, d_lw.data(), n, key{8, 2}, 0, d_a.data(), opt);
        std::size_t offspring_bytes = 0;
        cuda::offspring<double, std::int64_t>(nullptr, offspring_bytes, s, d_lw.data(), n, key{8, 2}, 0, d_a.data(), opt);
        cuda::workspace ws(stream_);
        ws.reserve(std::max(bytes, offspring_bytes));
        std::size_t have = ws.bytes();
        cudaGraph_t graph = nullptr;
        cuda::check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
        if (offspring_form) {  // the host step (0) must be ignored
          cuda::offspring<double, std::int64_t>(ws.data(), have, s, d_lw.data(), n, key{8, 2}, 0, d_a.data(), opt, stream_);
        } else {
          cuda::ancestors<double, std::int64_t>(ws.data(), have, s, d_lw.data(), n, key{8, 2}, 0, d_a.data(), opt, stream_);
        }
        cuda::check(cudaStreamEndCapture(stream_, &graph), "cudaStreamEndCapture");
        cudaGraphExec_t exec = nullptr;
        cuda::check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
        for (const std::uint32_t t : {3u, 4u, 11u}) {
          cuda::check(cudaMemcpyAsync(step.data(), &t, sizeof t, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
          cuda::check(cudaGraphLaunch(exec, stream_), "cudaGraphLaunch");
          ws.check();
          std::vector<std::int64_t> got(n), expected(n);
          d_a.copy_to(std::span<std::int64_t>(got));
          if (offspring_form) cpu::offspring(cpu::serial{}, s, view(lw), key{8, 2}, t, std::span<std::int64_t>(expected));
          else cpu::ancestors(cpu::serial{}, s, view(lw), key{8, 2}, t, std::span<std::int64_t>(expected));
          EXPECT_EQ(got, expected) << name(s) << (offspring_form ? " offspring" : " ancestors") << ", N = " << n
                                   << ", step " << t;
        }
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
      }
    }
  }
  options opt;
  opt.device_step = step.data();
  const std::vector<std::uint64_t> offsets = {0, 4};
  const cuda::host::device_vector<std::uint64_t> d_offsets{view(offsets)};
  std::size_t bytes = 0;
  EXPECT_THROW((cuda::ancestors_batched<double, std::int64_t>(nullptr, bytes, scheme::systematic, nullptr, d_offsets.data(),
                                                              1, 4, key{}, 0, nullptr, opt)),
               invalid_input);
}

TEST(CudaLarge, SystematicStratifiedMultinomialAt2To24) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const std::size_t n = std::size_t{1} << 24;
  const auto lw64 = log_weights(n, 2.0, 1);
  const std::vector<float> lw(lw64.begin(), lw64.end());
  const cpu::parallel ex;
  for (const scheme s : {scheme::systematic, scheme::stratified, scheme::multinomial_sorted, scheme::residual}) {
    std::vector<std::int32_t> cpu_a(n), gpu_a(n);
    cpu::ancestors(ex, s, view(lw), key{9, 9}, 1, std::span<std::int32_t>(cpu_a));
    cuda::host::ancestors(s, view(lw), key{9, 9}, 1, std::span<std::int32_t>(gpu_a));
    EXPECT_TRUE(gpu_a == cpu_a) << name(s) << " differs at 2^24";
  }
}

// Multinomial-sorted above N = 2^26, where a super-bin's W = 2^14 strata no longer fit the level-2
// kernel's shared counters and are counted in two slices; equal weights put every r on an integer
// (B = 2^27 strata, r_i = B (i + 1) / N), so the near-integer path runs for every particle.
TEST(CudaLarge, MultinomialSortedWithSlicedSuperBins) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const std::size_t n = (std::size_t{1} << 26) + 3;
  ASSERT_EQ(sorted_points(n).width(), 16384u);
  const auto lw64 = log_weights(n, 1.0, 3);
  const std::vector<float> lw(lw64.begin(), lw64.end());
  const cpu::parallel ex;
  std::vector<std::int32_t> cpu_a(n), gpu_a(n);
  cpu::ancestors(ex, scheme::multinomial_sorted, view(lw), key{4, 5}, 6, std::span<std::int32_t>(cpu_a));
  cuda::host::ancestors(scheme::multinomial_sorted, view(lw), key{4, 5}, 6, std::span<std::int32_t>(gpu_a));
  EXPECT_TRUE(gpu_a == cpu_a) << "paper weights, N = 2^26 + 3";
  const std::size_t m = std::size_t{1} << 27;
  const std::vector<float> equal(m, -2.0f);
  cpu_a.assign(m, 0);
  gpu_a.assign(m, 0);
  cpu::ancestors(ex, scheme::multinomial_sorted, view(equal), key{4, 5}, 7, std::span<std::int32_t>(cpu_a));
  cuda::host::ancestors(scheme::multinomial_sorted, view(equal), key{4, 5}, 7, std::span<std::int32_t>(gpu_a));
  EXPECT_TRUE(gpu_a == cpu_a) << "equal weights, N = 2^27";
}

}  // namespace
}  // namespace resample
