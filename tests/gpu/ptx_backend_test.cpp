// The hand-written PTX backend (ptx/*.ptx through src/ptx/module.cpp), against resample::cpu and
// the cuda backend, bit for bit: Philox4x32-10 against Random123's known answers and the C++
// generator; log-sum-exp and ESS (max with NaN / +inf detection, the exact sums, the deterministic
// exp and log in PTX) over sizes, float and double, zero and subnormal weights; bad input
// reported by check_status with the CPU's message and nothing written; capture in a CUDA graph;
// systematic, stratified and multinomial-sorted ancestors (the comb from estimated weights; up
// to 4096 particles systematic's and stratified's one-block comb) against cpu and cuda, large, equal and
// heavy weights, repeated draws, bad input, capture in a graph; their offspring and cumulative
// forms; the conversions between the forms and Code 7's permutation (drawn and arbitrary
// ancestors, one owner of every offspring, bad indices, capture in a graph); the loader: the JIT's error log in the exception, an unknown kernel named, concurrent first use.
// Without a GPU: the embedded module's text, and a clear error from a call.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "backend_support.hpp"
#include "module.hpp"
#include "resample/core/offspring_metrics.hpp"
#include "resample/cuda/host.hpp"
#include "resample/ptx/host.hpp"
#include "resample/ptx/resample.hpp"
#include "support/comb_margin_case.hpp"
#include "support/philox_known_answers.hpp"
#include "support/test_weights.hpp"
#include "support/unbiasedness.hpp"

namespace resample {
namespace {

using cuda::host::device_vector;

template <class X>
std::span<const X> view(const std::vector<X>& v) {
  return std::span<const X>(v);
}

/// A call captured once in a CUDA graph on its own stream (the module loaded outside the
/// capture), replayed by replay().
class captured_call {
 public:
  template <class Enqueue>
  explicit captured_call(Enqueue enqueue) {
    cuda::check(cudaStreamCreate(&stream_), "cudaStreamCreate");
    (void)ptx::detail::kernel("resample_max_pass");  // the first call in a context loads the module
    cuda::check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
    enqueue(stream_);
    cuda::check(cudaStreamEndCapture(stream_, &graph_), "cudaStreamEndCapture");
    cuda::check(cudaGraphInstantiate(&exec_, graph_, 0), "cudaGraphInstantiate");
  }
  captured_call(const captured_call&) = delete;
  captured_call& operator=(const captured_call&) = delete;
  ~captured_call() {
    (void)cudaGraphExecDestroy(exec_);
    (void)cudaGraphDestroy(graph_);
    (void)cudaStreamDestroy(stream_);
  }
  void replay() const { cuda::check(cudaGraphLaunch(exec_, stream_), "cudaGraphLaunch"); }
  [[nodiscard]] cudaStream_t stream() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

TEST(PtxModuleText, EveryFileIsAnSm90UnitAndEveryKernelIsThere) {
  std::string all;
  for (std::size_t i = 0; i < ptx::detail::module_source_count; ++i) {
    const std::string text = ptx::detail::module_sources[i].text;
    EXPECT_NE(text.find(".version 8.0"), std::string::npos) << ptx::detail::module_sources[i].name;
    EXPECT_NE(text.find(".target sm_90"), std::string::npos) << ptx::detail::module_sources[i].name;
    all += text;
  }
  for (const char* entry :
       {"resample_philox_blocks", "resample_max_pass", "resample_weight_sums", "resample_weight_statistics",
        "resample_comb_look_back", "resample_check_ancestors", "resample_check_cumulative", "resample_index_verdict",
        "resample_fill_indices", "resample_count_offspring", "resample_offspring_scan",
        "resample_cumulative_to_ancestors", "resample_prepermute", "resample_chase", "resample_gather",
        "resample_chains", "resample_multinomial", "resample_split_expected_offspring", "resample_ssp_pairing",
        "resample_residual_draws"}) {
    EXPECT_NE(all.find(std::string(".visible .entry ") + entry), std::string::npos) << entry;
  }
}

TEST(PtxWithoutGpu, CallsThrowInsteadOfCrashing) {
  if (cuda::device_available()) GTEST_SKIP() << "a GPU is present: the GPU tests below cover the calls";
  std::size_t bytes = 0;
  ptx::log_sum_exp<double>(nullptr, bytes, nullptr, 10, nullptr);  // measuring needs no device
  EXPECT_GT(bytes, 0u);
  alignas(256) static char fake[4096];
  EXPECT_THROW(ptx::log_sum_exp<double>(fake, bytes, nullptr, 10, nullptr), std::runtime_error);
}

// The host side of one call: copies in, runs on `stream`, waits, checks, copies out.
struct statistics {
  double lse, ess;
};
template <class T>
statistics ptx_statistics(const std::vector<T>& lw) {
  const device_vector<T> d_lw(view(lw));
  device_vector<double> d_out(2);
  std::size_t bytes = 0;
  ptx::weight_statistics<T>(nullptr, bytes, d_lw.data(), lw.size(), nullptr, nullptr);
  const device_vector<char> temp(bytes);
  ptx::weight_statistics<T>(temp.data(), bytes, d_lw.data(), lw.size(), d_out.data(), d_out.data() + 1);
  const auto st = cuda::check_status(temp.data(), nullptr);
  double got[2];
  d_out.copy_to(std::span<double>(got));
  EXPECT_EQ(st.result, got[0]);
  return {got[0], got[1]};
}
template <class T>
double ptx_log_sum_exp(const std::vector<T>& lw) {
  const device_vector<T> d_lw(view(lw));
  device_vector<double> d_out(1);
  std::size_t bytes = 0;
  ptx::log_sum_exp<T>(nullptr, bytes, d_lw.data(), lw.size(), nullptr);
  const device_vector<char> temp(bytes);
  ptx::log_sum_exp<T>(temp.data(), bytes, d_lw.data(), lw.size(), d_out.data());
  (void)cuda::check_status(temp.data(), nullptr);
  double got = 0;
  d_out.copy_to(std::span<double>(&got, 1));
  return got;
}
template <class T>
double ptx_ess(const std::vector<T>& lw) {
  const device_vector<T> d_lw(view(lw));
  std::size_t bytes = 0;
  ptx::effective_sample_size<T>(nullptr, bytes, d_lw.data(), lw.size(), nullptr);
  const device_vector<char> temp(bytes);
  ptx::effective_sample_size<T>(temp.data(), bytes, d_lw.data(), lw.size(), nullptr);
  return cuda::check_status(temp.data(), nullptr).result;
}

TEST(PtxPhilox, KnownAnswers) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  device_vector<std::uint32_t> d_out(4);
  for (const auto& v : test::philox_known_answers) {
    const std::uint64_t index = v.ctr[0] | (std::uint64_t{v.ctr[1]} << 32);
    ptx::philox_blocks(key{v.key[0], v.key[1]}, index, 1, v.ctr[2], v.ctr[3], d_out.data());
    std::uint32_t got[4];
    d_out.copy_to(std::span<std::uint32_t>(got));
    for (int j = 0; j < 4; ++j) EXPECT_EQ(got[j], v.out[j]) << "word " << j;
  }
}

TEST(PtxPhilox, EqualsTheCppGeneratorAcrossTheIndexWords) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const std::size_t count = 100003;
  const std::uint64_t first = (std::uint64_t{1} << 32) - 50000;  // the index's high word changes midway
  const key k{20261123, 6};
  device_vector<std::uint32_t> d_out(4 * count);
  ptx::philox_blocks(k, first, count, 7, 3, d_out.data());
  std::vector<std::uint32_t> got(4 * count);
  d_out.copy_to(std::span<std::uint32_t>(got));
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t index = first + i;
    const auto want = philox4x32_10({{static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32), 7, 3}},
                                    {{k.seed, k.stream}});
    for (int j = 0; j < 4; ++j) ASSERT_EQ(got[4 * i + j], want.v[j]) << "index " << index << " word " << j;
  }
}

constexpr std::size_t sizes[] = {1, 2, 31, 32, 33, 255, 256, 257, 2047, 2048, 2049, 6143, 10000, 100003, 1000003};

TEST(PtxStatistics, EqualCpuAndCudaBitForBit) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  for (const std::size_t n : sizes) {
    for (const double y : {0.0, 2.0, 8.0}) {
      const auto lw = test::log_weights(n, y, static_cast<unsigned>(n) + 3, n > 2);
      const std::vector<float> lwf(lw.begin(), lw.end());
      const auto cpu_d = cpu::weight_statistics(cpu::serial{}, view(lw));
      const auto cpu_f = cpu::weight_statistics(cpu::serial{}, view(lwf));
      const auto got_d = ptx_statistics(lw);
      const auto got_f = ptx_statistics(lwf);
      ASSERT_EQ(got_d.lse, cpu_d.log_sum_exp) << "double, N = " << n << ", y = " << y;
      ASSERT_EQ(got_d.ess, cpu_d.ess) << "double, N = " << n << ", y = " << y;
      ASSERT_EQ(got_f.lse, cpu_f.log_sum_exp) << "float, N = " << n << ", y = " << y;
      ASSERT_EQ(got_f.ess, cpu_f.ess) << "float, N = " << n << ", y = " << y;
      ASSERT_EQ(got_d.lse, cuda::host::log_sum_exp(view(lw))) << "N = " << n;
      if (n == 100003) {  // the single-statistic calls give the same bits
        ASSERT_EQ(ptx_log_sum_exp(lw), cpu_d.log_sum_exp);
        ASSERT_EQ(ptx_ess(lwf), cpu_f.ess);
      }
    }
  }
}

// Weights down to the subnormal range and below (exp's two scaling paths and its cut-off), and
// log-weights far from 0 (the max's subtraction).
TEST(PtxStatistics, SubnormalWeightsAndLargeOffsets) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const double inf = std::numeric_limits<double>::infinity();
  for (const double offset : {0.0, -1.0e6, 3.0e300}) {
    std::vector<double> lw = {0.0, -700.0, -708.3, -708.5, -720.25, -744.9, -745.2, -inf, -1.0e-300, -30.0};
    for (double& x : lw) x += offset;
    for (std::size_t n = 0; n < 5000; ++n) lw.push_back(offset - 740.0 + 0.001 * static_cast<double>(n));
    const auto cpu_stats = cpu::weight_statistics(cpu::serial{}, view(lw));
    const auto got = ptx_statistics(lw);
    EXPECT_EQ(got.lse, cpu_stats.log_sum_exp) << "offset " << offset;
    EXPECT_EQ(got.ess, cpu_stats.ess) << "offset " << offset;
  }
}

// A NaN or +inf, or every weight zero: check_status throws the CPU backends' message with the
// first offending index, and the result is not written.
TEST(PtxStatistics, BadInputReportedLikeTheCpuAndNothingWritten) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  std::vector<double> base = test::log_weights(50000, 1.0, 5);
  std::vector<std::vector<double>> cases;
  auto with = [&](std::initializer_list<std::pair<std::size_t, double>> changes) {
    auto v = base;
    for (const auto& [i, x] : changes) v[i] = x;
    cases.push_back(v);
  };
  with({{31337, nan}, {40000, inf}});
  with({{7, inf}, {49999, nan}});
  with({{0, nan}});
  cases.push_back(std::vector<double>(3000, -inf));
  for (const auto& lw : cases) {
    std::string cpu_message;
    std::optional<std::size_t> cpu_index;
    try {
      (void)cpu::log_sum_exp(cpu::serial{}, view(lw));
      ADD_FAILURE() << "the CPU accepted bad input";
    } catch (const invalid_input& e) {
      cpu_message = e.what();
      cpu_index = e.index();
    }
    const device_vector<double> d_lw(view(lw));
    const double sentinel = 12345.0;
    const device_vector<double> d_out(std::span<const double>(&sentinel, 1));
    std::size_t bytes = 0;
    ptx::log_sum_exp<double>(nullptr, bytes, d_lw.data(), lw.size(), nullptr);
    const device_vector<char> temp(bytes);
    ptx::log_sum_exp<double>(temp.data(), bytes, d_lw.data(), lw.size(), d_out.data());
    try {
      (void)cuda::check_status(temp.data(), nullptr);
      ADD_FAILURE() << "the PTX backend accepted: " << cpu_message;
    } catch (const invalid_input& e) {
      EXPECT_EQ(std::string(e.what()), cpu_message);
      EXPECT_EQ(e.index(), cpu_index);
    }
    double out = 0;
    d_out.copy_to(std::span<double>(&out, 1));
    EXPECT_EQ(out, sentinel) << "a result was written for bad input";
  }
}

// Both backends' max passes read 16-byte vectors from the first 16-byte boundary and the scalars
// around them on block 0: log-weights at every offset from an aligned allocation and of every
// small size give the CPU's log-sum-exp bits, a NaN or +inf in the head, the vectors or the tail
// is reported at the CPU's index, and so is a weight above a rejection bound (float and double).
template <class T, bool Ptx>
void max_pass_at_every_alignment() {
  const auto lse = [](void* temp, std::size_t& bytes, const T* p, std::size_t n, double* out) {
    if constexpr (Ptx) ptx::log_sum_exp<T>(temp, bytes, p, n, out);
    else cuda::log_sum_exp<T>(temp, bytes, p, n, out);
  };
  const auto draw = [](void* temp, std::size_t& bytes, const T* p, std::size_t n, std::int32_t* a, const options& o) {
    if constexpr (Ptx) ptx::ancestors<T, std::int32_t>(temp, bytes, scheme::rejection, p, n, {3, 4}, 1, a, o);
    else cuda::ancestors<T, std::int32_t>(temp, bytes, scheme::rejection, p, n, {3, 4}, 1, a, o);
  };
  device_vector<double> d_out(1);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<double> source = test::log_weights(5000, 1.0, 21);
  const std::vector<T> all(source.begin(), source.end());
  for (const std::size_t offset : {0, 1, 2, 3}) {
    for (const std::size_t n : {1, 2, 3, 5, 7, 8, 9, 33, 1000, 4099}) {
      const std::vector<T> clean(all.begin() + static_cast<std::ptrdiff_t>(offset),
                                 all.begin() + static_cast<std::ptrdiff_t>(offset + n));
      std::vector<std::vector<T>> cases = {clean};
      for (const std::size_t at : {std::size_t{0}, n / 2, n - 1}) {
        for (const double bad : {nan, inf}) {
          cases.push_back(clean);
          cases.back()[at] = static_cast<T>(bad);
        }
      }
      for (const auto& lw : cases) {
        const std::string where = std::string(Ptx ? "ptx, " : "cuda, ") + (sizeof(T) == 4 ? "float" : "double") +
                                  ", offset " + std::to_string(offset) + ", n " + std::to_string(n);
        std::vector<T> padded(offset, T{0});  // the call's pointer is `offset` weights into the allocation
        padded.insert(padded.end(), lw.begin(), lw.end());
        const device_vector<T> d_lw(view(padded));
        const T* p = d_lw.data() + offset;
        std::size_t bytes = 0;
        lse(nullptr, bytes, p, n, nullptr);
        const device_vector<char> temp(bytes);
        lse(temp.data(), bytes, p, n, d_out.data());
        std::optional<double> cpu_lse;
        std::string cpu_message;
        try {
          cpu_lse = cpu::log_sum_exp(cpu::serial{}, std::span<const T>(lw));
        } catch (const invalid_input& e) {
          cpu_message = e.what();
        }
        try {
          const auto st = cuda::check_status(temp.data(), nullptr);
          ASSERT_TRUE(cpu_lse.has_value()) << where << ": accepted: " << cpu_message;
          EXPECT_EQ(st.result, *cpu_lse) << where;
        } catch (const invalid_input& e) {
          EXPECT_EQ(std::string(e.what()), cpu_message) << where;
        }
      }
      // A rejection bound below some weight: the first one above it is reported.
      options low;
      const T top = *std::max_element(clean.begin(), clean.end());
      low.rejection_log_bound = static_cast<double>(top) - 0.25;
      std::vector<T> padded(offset, T{0});
      padded.insert(padded.end(), clean.begin(), clean.end());
      const device_vector<T> d_lw(view(padded));
      device_vector<std::int32_t> d_a(n);
      std::size_t bytes = 0;
      draw(nullptr, bytes, d_lw.data() + offset, n, d_a.data(), low);
      const device_vector<char> temp(bytes);
      draw(temp.data(), bytes, d_lw.data() + offset, n, d_a.data(), low);
      std::string cpu_message;
      try {
        std::vector<std::int32_t> a(n);
        cpu::ancestors(cpu::serial{}, scheme::rejection, std::span<const T>(clean), {3, 4}, 1,
                       std::span<std::int32_t>(a), low);
      } catch (const invalid_input& e) {
        cpu_message = e.what();
      }
      ASSERT_FALSE(cpu_message.empty()) << "the CPU accepted a bound below a weight";
      try {
        (void)cuda::check_status(temp.data(), nullptr);
        ADD_FAILURE() << (Ptx ? "ptx" : "cuda") << ": no error for a bound below a weight, offset " << offset
                      << ", n " << n;
      } catch (const invalid_input& e) {
        EXPECT_EQ(std::string(e.what()), cpu_message) << "offset " << offset << ", n " << n;
      }
    }
  }
}

TEST(PtxStatistics, MaxPassAtEveryAlignmentAndSmallSize) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  max_pass_at_every_alignment<float, true>();
  max_pass_at_every_alignment<double, true>();
  max_pass_at_every_alignment<float, false>();
  max_pass_at_every_alignment<double, false>();
}

TEST(PtxStatistics, HostSideErrors) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  std::size_t bytes = 0;
  EXPECT_THROW(ptx::log_sum_exp<float>(nullptr, bytes, nullptr, 0, nullptr), invalid_input);  // N = 0
  ptx::log_sum_exp<float>(nullptr, bytes, nullptr, 1000, nullptr);
  const device_vector<char> temp(bytes);
  std::size_t too_small = bytes - 1;
  try {
    ptx::log_sum_exp<float>(temp.data(), too_small, nullptr, 1000, nullptr);
    ADD_FAILURE() << "accepted too little temp storage";
  } catch (const invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find("too small"), std::string::npos) << e.what();
  }
  device_vector<std::uint32_t> d_out(8);
  EXPECT_THROW(ptx::philox_blocks(key{}, 0, 1, 0, 0, d_out.data() + 1), invalid_input);  // not 16-byte aligned
}

TEST(PtxStatistics, CapturedInAGraphAndReplayed) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const std::size_t n = 70000;
  device_vector<float> d_lw(n);
  device_vector<double> d_out(2);
  std::size_t bytes = 0;
  ptx::weight_statistics<float>(nullptr, bytes, d_lw.data(), n, nullptr, nullptr);
  const device_vector<char> temp(bytes);
  const captured_call call([&](cudaStream_t stream) {
    ptx::weight_statistics<float>(temp.data(), bytes, d_lw.data(), n, d_out.data(), d_out.data() + 1, stream);
  });
  for (unsigned replay = 0; replay < 3; ++replay) {
    const auto lw = test::log_weights<float>(n, 1.0 + replay, 100 + replay);
    cuda::check(cudaMemcpy(d_lw.data(), lw.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
    call.replay();
    (void)cuda::check_status(temp.data(), call.stream());
    double got[2];
    d_out.copy_to(std::span<double>(got));
    const auto want = cpu::weight_statistics(cpu::serial{}, view(lw));
    EXPECT_EQ(got[0], want.log_sum_exp) << "replay " << replay;
    EXPECT_EQ(got[1], want.ess) << "replay " << replay;
  }
}

// ---------------------------------------------------------------------------------------------
// Systematic, stratified and multinomial-sorted ancestors: the comb from estimated weights
// (ptx/comb_from_estimates.ptx; up to 4096 particles, systematic and stratified in one block).

template <class T, class Index>
std::vector<Index> ptx_ancestors(scheme s, const std::vector<T>& lw, key k, std::uint32_t step) {
  const device_vector<T> d_lw(view(lw));
  device_vector<Index> d_a(lw.size());
  std::size_t bytes = 0;
  ptx::ancestors<T, Index>(nullptr, bytes, s, d_lw.data(), lw.size(), k, step, d_a.data());
  const device_vector<char> temp(bytes);
  ptx::ancestors<T, Index>(temp.data(), bytes, s, d_lw.data(), lw.size(), k, step, d_a.data());
  (void)cuda::check_status(temp.data(), nullptr);
  std::vector<Index> a(lw.size());
  d_a.copy_to(std::span<Index>(a));
  return a;
}

/// expect_ancestors_equal_cpu_and_cuda's key, which the margin tests' cases must be found for.
constexpr key ancestors_test_key{20261123, 2};

template <class T, class Index>
void expect_ancestors_equal_cpu_and_cuda(scheme s, const std::vector<T>& lw, std::uint32_t step, const std::string& what) {
  const key k = ancestors_test_key;
  std::vector<Index> want(lw.size()), want_cuda(lw.size());
  cpu::ancestors(cpu::serial{}, s, view(lw), k, step, std::span<Index>(want));
  cuda::host::ancestors(s, view(lw), k, step, std::span<Index>(want_cuda));
  const auto got = ptx_ancestors<T, Index>(s, lw, k, step);
  std::size_t differ = 0, first = lw.size();
  for (std::size_t j = 0; j < lw.size(); ++j) {
    if (got[j] != want[j]) {
      ++differ;
      first = std::min(first, j);
    }
  }
  ASSERT_EQ(differ, 0u) << what << ": " << differ << " ancestors differ from the CPU's, the first at " << first;
  ASSERT_EQ(got, want_cuda) << what << ": not the cuda backend's";
}

TEST(PtxAncestors, CombSchemesEqualCpuAndCudaBitForBit) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  for (const scheme s : {scheme::systematic, scheme::stratified, scheme::multinomial_sorted}) {
    for (const std::size_t n : sizes) {
      for (const double y : {0.0, 2.0, 8.0}) {
        const auto lw = test::log_weights(n, y, static_cast<unsigned>(n) + 11, n > 2);
        const std::string what = std::string(name(s)) + ", N = " + std::to_string(n) + ", y = " + std::to_string(y);
        expect_ancestors_equal_cpu_and_cuda<double, std::int32_t>(s, lw, static_cast<std::uint32_t>(n), what);
        if (n == 2049 || n == 1000003) {
          const std::vector<float> lwf(lw.begin(), lw.end());
          expect_ancestors_equal_cpu_and_cuda<float, std::int64_t>(s, lwf, 5, what + ", float / int64");
        }
      }
    }
  }
}

// Both combs from estimated weights (PTX and CUDA C, tiled above 8192 particles) keep the margin
// their estimated weights' error needs: weights and a systematic step that put a point between a
// particle's estimate and its true r (support/comb_margin_case.hpp). A slope of 0 in the PTX comb
// fails the simulator's twin of this test (PtxKernels.CombMarginCoversTheEstimatedWeightsError).
TEST(PtxAncestors, CombMarginCoversTheEstimatedWeightsError) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const auto c = test::find_comb_margin_case(12288, ancestors_test_key);
  expect_ancestors_equal_cpu_and_cuda<double, std::int32_t>(scheme::systematic, c.lw, c.step,
                                                            "step " + std::to_string(c.step) + ", particle " +
                                                                std::to_string(c.particle));
}

// The same for multinomial-sorted: a point of a particle's stratum between its estimate and its
// true r (find_sorted_margin_case), the estimate above r and below it. Point thresholds without
// the margin fail the simulator's twin (PtxKernels.SortedMarginCoversTheEstimatedWeightsError).
TEST(PtxAncestors, SortedMarginCoversTheEstimatedWeightsError) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  for (const bool above : {true, false}) {
    const auto c = test::find_sorted_margin_case(12288, ancestors_test_key, above);
    expect_ancestors_equal_cpu_and_cuda<double, std::int32_t>(
        scheme::multinomial_sorted, c.lw, c.step,
        std::string(above ? "estimate above r" : "estimate below r") + ", step " + std::to_string(c.step) +
            ", particle " + std::to_string(c.particle));
  }
}

TEST(PtxAncestors, LargeEqualAndHeavyWeights) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  for (const scheme s : {scheme::systematic, scheme::stratified, scheme::multinomial_sorted}) {
    const std::string what(name(s));
    const std::size_t n = (std::size_t{1} << 22) + 3;  // 2049 tiles of the comb from estimates
    expect_ancestors_equal_cpu_and_cuda<float, std::int32_t>(s, test::log_weights<float>(n, 4.0, 9), 1, what + " 2^22 + 3");
    // equal weights: every r on an integer, every particle decided by the exact products
    expect_ancestors_equal_cpu_and_cuda<double, std::int32_t>(s, std::vector<double>(300000, 1.5), 2, what + " equal");
    // one particle with nearly all the weight: its tile writes ~N ancestors (the binary search)
    auto heavy = test::log_weights(300000, 1.0, 3);
    heavy[123456] = 60.0;
    expect_ancestors_equal_cpu_and_cuda<double, std::int64_t>(s, heavy, 3, what + " heavy");
  }
}

// Multinomial-sorted above N = 2^26: level 2 counts each super-bin's W = 2^14 strata in two slices
// of 8192 shared counters (the only layout that needs more than one), and P has 2^27 + 1 words.
// The CPU's serial draw at this size takes a while, so the cuda backend (equal to the CPU at every
// size the other tests run) is the reference here, for the ancestors and the offspring.
TEST(PtxAncestors, MultinomialSortedInTwoSlicesEqualsCuda) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const std::size_t n = (std::size_t{1} << 26) + 5;
  const auto lw = test::log_weights<float>(n, 2.0, 31);
  std::vector<std::int32_t> a_cuda(n), a_ptx(n);
  cuda::host::ancestors(scheme::multinomial_sorted, view(lw), {3, 9}, 4, std::span<std::int32_t>(a_cuda));
  ptx::host::ancestors(scheme::multinomial_sorted, view(lw), {3, 9}, 4, std::span<std::int32_t>(a_ptx));
  std::size_t differ = 0;
  for (std::size_t j = 0; j < n; ++j) differ += a_ptx[j] != a_cuda[j] ? 1 : 0;
  EXPECT_EQ(differ, 0u) << "ancestors differ from the cuda backend's";
  ptx::host::offspring(scheme::multinomial_sorted, view(lw), {3, 9}, 4, std::span<std::int32_t>(a_ptx));
  cuda::host::offspring(scheme::multinomial_sorted, view(lw), {3, 9}, 4, std::span<std::int32_t>(a_cuda));
  EXPECT_TRUE(a_ptx == a_cuda) << "offspring differ from the cuda backend's";
}

// The tiles (the tile sums, the comb's, and its heavy runs shared between warps) run and finish in
// whatever order the GPU schedules them: 30 draws of the same call must give the same bits.
// Systematic's comb reads no look-back since session 35; residual's table does (comb_look_back's
// form 3), so it is repeated too.
TEST(PtxAncestors, RepeatedCallsGiveTheSameBits) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const auto lw = test::log_weights<float>(std::size_t{1} << 21, 3.0, 21);
  for (const scheme s : {scheme::systematic, scheme::residual}) {
    const auto first = ptx_ancestors<float, std::int32_t>(s, lw, {1, 1}, 9);
    const auto draw = [&lw, s] { return ptx_ancestors<float, std::int32_t>(s, lw, {1, 1}, 9); };
    for (int i = 0; i < 30; ++i) ASSERT_EQ(draw(), first) << resample::name(s) << ", draw " << i;
  }
}

// ---------------------------------------------------------------------------------------------
// The fast mode (options::fast_exp, ptx/fast_exp.ptx): not the CPU's bits, so tested statistically:
// over 2,000 draws of 1,000 particles each scheme's mean offspring agree with N w_i / W of the exact
// weights (the conservative z-scores of tests/unbiased_test.cpp, Bonferroni at 1e-3; the fast
// weights' relative error, about 2^-22, is far below what 2,000 draws resolve), and Q differs from
// the exact mode's (the device took the fast path: the draws alone would pass on exact weights).
// The simulator test FastExpDrawsExactlyForTheApproximateWeights pins the kernels' use of those
// weights bit for bit.

TEST(PtxFastExp, MeanOffspringEqualTheWeights) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const std::size_t n = 1000;
  const int reps = 2000;
  const auto lw = test::log_weights(n, 2.0, 41);
  const std::vector<double> w = test::exact_weights_of(lw);
  const device_vector<double> d_lw(view(lw));
  device_vector<std::int32_t> d_o(n);
  options opt;
  opt.fast_exp = true;
  for (const scheme s : {scheme::systematic, scheme::stratified, scheme::multinomial, scheme::multinomial_sorted}) {
    std::size_t bytes = 0;
    ptx::offspring<double, std::int32_t>(nullptr, bytes, s, d_lw.data(), n, {5, 6}, 0, d_o.data(), opt);
    const device_vector<char> temp(bytes);
    std::size_t exact_bytes = 0;
    ptx::offspring<double, std::int32_t>(nullptr, exact_bytes, s, d_lw.data(), n, {5, 6}, 0, d_o.data());
    const device_vector<char> exact_temp(exact_bytes);
    ptx::offspring<double, std::int32_t>(exact_temp.data(), exact_bytes, s, d_lw.data(), n, {5, 6}, 0, d_o.data());
    ptx::offspring<double, std::int32_t>(temp.data(), bytes, s, d_lw.data(), n, {5, 6}, 0, d_o.data(), opt);
    EXPECT_FALSE(cuda::check_status(temp.data(), nullptr).total == cuda::check_status(exact_temp.data(), nullptr).total)
        << name(s) << ": Q is the exact mode's";
    offspring_metrics m(expected_offspring(w));
    std::vector<std::int32_t> o(n);
    std::vector<std::size_t> counts(n);
    for (int r = 0; r < reps; ++r) {
      ptx::offspring<double, std::int32_t>(temp.data(), bytes, s, d_lw.data(), n, {5, 6}, static_cast<std::uint32_t>(r),
                                           d_o.data(), opt);
      (void)cuda::check_status(temp.data(), nullptr);
      d_o.copy_to(std::span<std::int32_t>(o));
      for (std::size_t i = 0; i < n; ++i) counts[i] = static_cast<std::size_t>(o[i]);
      m.add(std::span<const std::size_t>(counts));
    }
    const auto z = test::z_scores(m);
    EXPECT_GT(z.tested, n / 2) << name(s);
    EXPECT_LT(z.max_abs_z, z.threshold) << name(s) << ": particle " << z.worst;
  }
}

// Who refuses the fast mode, before any device work: the cpu backend, the ptx schemes whose
// exponentials are exact only (the chains, residual, SSP), the cuda ones (those and multinomial)
// and the cuda batched call.
TEST(PtxFastExp, OtherBackendsAndSchemesRefuseIt) {
  options opt;
  opt.fast_exp = true;
  const std::vector<double> lw = {0.0, -1.0, -2.0};
  std::vector<std::int32_t> a(lw.size());
  try {
    cpu::ancestors(cpu::serial{}, scheme::systematic, view(lw), {1, 2}, 0, std::span<std::int32_t>(a), opt);
    ADD_FAILURE() << "the cpu backend took fast_exp";
  } catch (const invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find("options::fast_exp is the GPU backends' (ptx, cuda); the cpu backend"),
              std::string::npos)
        << e.what();
  }
  std::size_t bytes = 0;
  for (const scheme s : {scheme::metropolis, scheme::megopolis, scheme::rejection, scheme::residual, scheme::ssp}) {
    try {
      ptx::ancestors<double, std::int32_t>(nullptr, bytes, s, nullptr, lw.size(), {1, 2}, 0, nullptr, opt);
      ADD_FAILURE() << name(s) << " took fast_exp";
    } catch (const invalid_input& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(name(s)) + " computes its exponentials exactly"),
                std::string::npos)
          << e.what();
    }
  }
  for (const scheme s : {scheme::multinomial, scheme::metropolis, scheme::residual, scheme::ssp}) {
    try {
      cuda::ancestors<double, std::int32_t>(nullptr, bytes, s, nullptr, lw.size(), {1, 2}, 0, nullptr, opt);
      ADD_FAILURE() << "cuda " << name(s) << " took fast_exp";
    } catch (const invalid_input& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(name(s)) + " computes its exponentials exactly there"),
                std::string::npos)
          << e.what();
    }
  }
  try {
    cuda::ancestors_batched<double, std::int32_t>(nullptr, bytes, scheme::systematic, nullptr, nullptr, 1, lw.size(),
                                                  {1, 2}, 0, nullptr, opt);
    ADD_FAILURE() << "the cuda batched call took fast_exp";
  } catch (const invalid_input& e) {
    EXPECT_STREQ(e.what(), "options::fast_exp is not supported by the batched call");
  }
  for (const scheme s : {scheme::systematic, scheme::stratified, scheme::multinomial_sorted}) {
    EXPECT_NO_THROW((ptx::ancestors<double, std::int32_t>(nullptr, bytes, s, nullptr, lw.size(), {1, 2}, 0, nullptr,
                                                          opt)))
        << name(s);
    EXPECT_NO_THROW((cuda::ancestors<double, std::int32_t>(nullptr, bytes, s, nullptr, lw.size(), {1, 2}, 0, nullptr,
                                                           opt)))
        << name(s);
  }
}

// options::fast_exp on the cuda backend (src/cuda/detail/fast_exp.cuh) computes the ptx fast mode's
// weights by the same instructions, so on one GPU the two backends draw the same bits: systematic,
// stratified and multinomial-sorted, float and double log-weights, N = 3000 (the ptx one-block
// comb; cuda has no one-block path in this mode) and 70001, ancestors and offspring,
// and with the max handed over (cuda's options::device_max_log_weight, as the fast particle filter
// calls it). Q differs from the exact mode's (the cuda kernels took the fast weights: an exact draw
// would pass a statistical test as well), and PtxFastExp.MeanOffspringEqualTheWeights tests these
// draws' law.
template <class T>
void expect_cuda_fast_exp_equals_ptx(std::initializer_list<std::size_t> ns) {
  using Index = std::int32_t;
  options fast;
  fast.fast_exp = true;
  for (const std::size_t n : ns) {
    const auto base = test::log_weights(n, 2.0, static_cast<unsigned>(n) + 11);
    const std::vector<T> lw(base.begin(), base.end());
    const device_vector<T> d_lw(view(lw));
    const double largest = static_cast<double>(*std::max_element(lw.begin(), lw.end()));
    const device_vector<double> d_max(std::span<const double>(&largest, 1));
    options fast_given = fast;
    fast_given.device_max_log_weight = d_max.data();
    device_vector<Index> d_out(n);
    for (const scheme s : {scheme::systematic, scheme::stratified, scheme::multinomial_sorted}) {
      SCOPED_TRACE(testing::Message() << name(s) << ", " << sizeof(T) << "-byte log-weights, N = " << n);
      for (const bool offspring : {false, true}) {
        const auto run = [&](bool on_ptx, const options& opt, u128* total = nullptr) {
          std::size_t bytes = 0;
          const auto call = [&](void* temp) {
            if (on_ptx && offspring) {
              ptx::offspring<T, Index>(temp, bytes, s, d_lw.data(), n, {3, 4}, 6, d_out.data(), opt);
            } else if (on_ptx) {
              ptx::ancestors<T, Index>(temp, bytes, s, d_lw.data(), n, {3, 4}, 6, d_out.data(), opt);
            } else if (offspring) {
              cuda::offspring<T, Index>(temp, bytes, s, d_lw.data(), n, {3, 4}, 6, d_out.data(), opt);
            } else {
              cuda::ancestors<T, Index>(temp, bytes, s, d_lw.data(), n, {3, 4}, 6, d_out.data(), opt);
            }
          };
          call(nullptr);
          const device_vector<char> temp(bytes);
          // a sentinel, so that a call that wrote nothing cannot pass for the previous call's output
          cuda::check(cudaMemset(d_out.data(), 0xff, n * sizeof(Index)), "cudaMemset");
          call(temp.data());
          const cuda::device_status st = cuda::check_status(temp.data(), nullptr);
          if (total) *total = st.total;
          std::vector<Index> out(n);
          d_out.copy_to(std::span<Index>(out));
          return out;
        };
        u128 q_fast = 0, q_exact = 0;
        const auto want = run(true, fast);
        EXPECT_EQ(run(false, fast, &q_fast), want) << (offspring ? "offspring" : "ancestors");
        EXPECT_EQ(run(false, fast_given), want) << (offspring ? "offspring" : "ancestors") << ", max given";
        (void)run(false, options{}, &q_exact);
        EXPECT_FALSE(q_fast == q_exact) << "Q is the exact mode's";
      }
    }
  }
}

TEST(CudaFastExp, SameBitsAsPtxFastExp) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  expect_cuda_fast_exp_equals_ptx<float>({3000, 70001});
  expect_cuda_fast_exp_equals_ptx<double>({3000, 70001});
}

// The same at 2^21 + 5 (1025 tiles); named for the sanitizers' filter, which leaves it out.
TEST(CudaFastExp, LargeEqualsPtxFastExp) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  expect_cuda_fast_exp_equals_ptx<float>({(std::size_t{1} << 21) + 5});
}

TEST(PtxAncestors, BadInputAndUnsupportedCalls) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  auto lw = test::log_weights(100000, 1.0, 5);
  lw[77777] = std::numeric_limits<double>::quiet_NaN();
  const device_vector<double> d_lw(view(lw));
  const std::vector<std::int32_t> sentinel(lw.size(), -7);
  const device_vector<std::int32_t> d_a(view(sentinel));
  std::size_t bytes = 0;
  ptx::ancestors<double, std::int32_t>(nullptr, bytes, scheme::stratified, d_lw.data(), lw.size(), {1, 2}, 3, d_a.data());
  const device_vector<char> temp(bytes);
  ptx::ancestors<double, std::int32_t>(temp.data(), bytes, scheme::stratified, d_lw.data(), lw.size(), {1, 2}, 3,
                                       d_a.data());
  try {
    (void)cuda::check_status(temp.data(), nullptr);
    ADD_FAILURE() << "no error for a NaN";
  } catch (const invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find("77777"), std::string::npos) << e.what();
  }
  std::vector<std::int32_t> a(lw.size());
  d_a.copy_to(std::span<std::int32_t>(a));
  EXPECT_EQ(a, sentinel) << "ancestors were written for bad input";
  const auto call = [&](scheme s, const options& opt) {
    ptx::ancestors<double, std::int32_t>(temp.data(), bytes, s, d_lw.data(), lw.size(), {1, 2}, 3, d_a.data(), opt);
  };
  options opt;
  opt.cdf = precision::float32;
  EXPECT_THROW(call(scheme::systematic, opt), invalid_input);
  // The max handed over: the comb schemes only (PtxAncestors.GivenMaxGivesTheSameBitsAndIsChecked).
  const device_vector<double> given(1);
  options with_max;
  with_max.device_max_log_weight = given.data();
  EXPECT_THROW(call(scheme::metropolis, with_max), invalid_input);
  EXPECT_THROW(call(scheme::residual, with_max), invalid_input);
}

// options::device_max_log_weight on the ptx backend (open_call.ptx, tile_sums.ptx,
// weight_statistics.ptx): the max handed over gives the bits of the call without it (systematic,
// stratified and multinomial-sorted, float and double, N = 3000, which then takes the tiles' kernels
// instead of the one-block comb, and 70001; ancestors and offspring), and a wrong one fails the call
// with the cuda backend's message and writes nothing: one below the max names the first
// log-weight above it, one above says that none equals it.
template <class T>
void expect_ptx_given_max_checked() {
  using Index = std::int32_t;
  for (const std::size_t n : {std::size_t{3000}, std::size_t{70001}}) {
    const auto base = test::log_weights(n, 2.0, static_cast<unsigned>(n) + 5);
    const std::vector<T> lw(base.begin(), base.end());
    const std::size_t top = static_cast<std::size_t>(std::max_element(lw.begin(), lw.end()) - lw.begin());
    const double largest = static_cast<double>(lw[top]);
    const device_vector<T> d_lw(view(lw));
    device_vector<double> d_max(1);
    const std::vector<Index> poison(n, -7);
    device_vector<Index> d_out(view(poison));
    options with_max;
    with_max.device_max_log_weight = d_max.data();
    for (const scheme s : {scheme::systematic, scheme::stratified, scheme::multinomial_sorted}) {
      for (const bool offspring : {false, true}) {
        SCOPED_TRACE(testing::Message() << name(s) << (offspring ? " offspring, " : " ancestors, ") << sizeof(T)
                                        << "-byte log-weights, N = " << n);
        // the call with `opt` and the max m: its output (poisoned first) and its error, if any
        const auto run = [&](const options& opt, double m, std::string* error) {
          cuda::check(cudaMemcpy(d_max.data(), &m, sizeof m, cudaMemcpyHostToDevice), "cudaMemcpy");
          d_out = device_vector<Index>(view(poison));
          std::size_t bytes = 0;
          const auto call = [&](void* temp) {
            if (offspring) ptx::offspring<T, Index>(temp, bytes, s, d_lw.data(), n, {7, 3}, 4, d_out.data(), opt);
            else ptx::ancestors<T, Index>(temp, bytes, s, d_lw.data(), n, {7, 3}, 4, d_out.data(), opt);
          };
          call(nullptr);
          const device_vector<char> temp(bytes);
          call(temp.data());
          try {
            (void)cuda::check_status(temp.data(), nullptr);
          } catch (const invalid_input& e) {
            if (error) *error = e.what();
            else ADD_FAILURE() << e.what();
          }
          std::vector<Index> out(n);
          d_out.copy_to(std::span<Index>(out));
          return out;
        };
        const auto without = run(options{}, largest, nullptr);
        EXPECT_EQ(run(with_max, largest, nullptr), without);
        std::string low, high;
        EXPECT_EQ(run(with_max, std::nextafter(largest, -INFINITY), &low), poison);
        EXPECT_NE(low.find("but log-weight " + std::to_string(top) + " is"), std::string::npos) << low;
        EXPECT_EQ(run(with_max, largest + 1.0, &high), poison);
        EXPECT_NE(high.find("but no log-weight equals it"), std::string::npos) << high;
      }
    }
  }
}

TEST(PtxAncestors, GivenMaxGivesTheSameBitsAndIsChecked) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  expect_ptx_given_max_checked<float>();
  expect_ptx_given_max_checked<double>();
}

TEST(PtxAncestors, CapturedInAGraphAndReplayed) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const std::size_t n = 500000;
  device_vector<float> d_lw(n);
  device_vector<std::int32_t> d_a(n);
  std::size_t bytes = 0;
  ptx::ancestors<float, std::int32_t>(nullptr, bytes, scheme::systematic, d_lw.data(), n, {4, 4}, 8, d_a.data());
  const device_vector<char> temp(bytes);
  const captured_call call([&](cudaStream_t stream) {
    ptx::ancestors<float, std::int32_t>(temp.data(), bytes, scheme::systematic, d_lw.data(), n, {4, 4}, 8, d_a.data(),
                                        {}, stream);
  });
  for (unsigned replay = 0; replay < 3; ++replay) {
    const auto lw = test::log_weights<float>(n, 1.0 + replay, 200 + replay);
    cuda::check(cudaMemcpy(d_lw.data(), lw.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
    call.replay();
    (void)cuda::check_status(temp.data(), call.stream());
    std::vector<std::int32_t> got(n), want(n);
    d_a.copy_to(std::span<std::int32_t>(got));
    cpu::ancestors(cpu::serial{}, scheme::systematic, view(lw), {4, 4}, 8, std::span<std::int32_t>(want));
    EXPECT_EQ(got, want) << "replay " << replay;
  }
}

// options::device_step and options::device_gate (ptx/open_call.ptx; at N = 3000 systematic and
// stratified, both forms, read them in ptx/comb_one_block.ptx instead): one capture per scheme and
// form, replayed with the step word and the gate changed between replays; an open gate gives the
// CPU's draw for the device's step (the host's step, 0, is ignored), a closed one writes nothing
// and reports no error. As the particle filter's tick uses them.
TEST(PtxAncestors, DeviceStepAndGateReadWhenTheCallRuns) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  device_vector<std::uint32_t> step(1);
  device_vector<int> gate(1);
  for (const std::size_t n : {std::size_t{3000}, std::size_t{70000}}) {
    const auto lw = test::log_weights(n, 1.5, 17);
    const device_vector<double> d_lw(view(lw));
    const std::vector<std::int64_t> poison(n, -7);
    device_vector<std::int64_t> d_a(n);
    for (const scheme s : production_schemes) {
      if (s == scheme::ssp && n > 10000) continue;  // SSP's pairing is serial: slow
      for (const bool offspring_form : {false, true}) {
        options opt;
        opt.device_step = step.data();
        opt.device_gate = gate.data();
        std::size_t bytes = 0;
        if (offspring_form) {
          ptx::offspring<double, std::int64_t>(nullptr, bytes, s, d_lw.data(), n, {8, 2}, 0, d_a.data(), opt);
        } else {
          ptx::ancestors<double, std::int64_t>(nullptr, bytes, s, d_lw.data(), n, {8, 2}, 0, d_a.data(), opt);
        }
        const device_vector<char> temp(bytes);
        const captured_call call([&](cudaStream_t stream) {
          if (offspring_form) {
            ptx::offspring<double, std::int64_t>(temp.data(), bytes, s, d_lw.data(), n, {8, 2}, 0, d_a.data(), opt, stream);
          } else {
            ptx::ancestors<double, std::int64_t>(temp.data(), bytes, s, d_lw.data(), n, {8, 2}, 0, d_a.data(), opt, stream);
          }
        });
        const std::string what = std::string(name(s)) + (offspring_form ? " offspring" : " ancestors") + ", N = " +
                                 std::to_string(n);
        for (const std::uint32_t t : {3u, 4u, 11u}) {
          for (const int open : {0, 1}) {
            cuda::check(cudaMemcpy(d_a.data(), poison.data(), n * sizeof(std::int64_t), cudaMemcpyHostToDevice),
                        "cudaMemcpy");
            cuda::check(cudaMemcpy(step.data(), &t, sizeof t, cudaMemcpyHostToDevice), "cudaMemcpy");
            cuda::check(cudaMemcpy(gate.data(), &open, sizeof open, cudaMemcpyHostToDevice), "cudaMemcpy");
            call.replay();
            const auto st = cuda::check_status(temp.data(), call.stream());
            std::vector<std::int64_t> got(n), want(n);
            d_a.copy_to(std::span<std::int64_t>(got));
            if (!open) {
              EXPECT_EQ(st.code, static_cast<int>(cuda::status_code::skipped)) << what;
              EXPECT_EQ(got, poison) << what << ": written through a closed gate";
              continue;
            }
            if (offspring_form) {
              cpu::offspring(cpu::serial{}, s, view(lw), {8, 2}, t, std::span<std::int64_t>(want));
            } else {
              cpu::ancestors(cpu::serial{}, s, view(lw), {8, 2}, t, std::span<std::int64_t>(want));
            }
            EXPECT_EQ(got, want) << what << ", step " << t;
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Metropolis, Megopolis and rejection (ptx/chains.ptx), in every form, and permuted ancestors
// (Code 7 after the draw; the chains' claims fused into their kernel).

TEST(PtxChains, EveryFormEqualCpuAndCudaBitForBit) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const key k{31, 4};
  options fixed;
  fixed.metropolis_steps = 7;
  for (const scheme s : {scheme::metropolis, scheme::megopolis, scheme::rejection}) {
    // up to 2^20 + 3: the serial CPU's chains at 2^22 took minutes of the GPU machine's time
    for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{2049}, std::size_t{100003},
                                (std::size_t{1} << 20) + 3}) {
      const auto lw = test::log_weights<float>(n, 2.0, static_cast<unsigned>(n) + 3, n > 2);
      const std::string what = std::string(name(s)) + ", N = " + std::to_string(n);
      std::vector<std::int32_t> a(n), a_cuda(n), a_ptx(n);
      cpu::ancestors(cpu::serial{}, s, view(lw), k, 6, std::span<std::int32_t>(a));
      cuda::host::ancestors(s, view(lw), k, 6, std::span<std::int32_t>(a_cuda));
      ptx::host::ancestors(s, view(lw), k, 6, std::span<std::int32_t>(a_ptx));
      ASSERT_EQ(a_ptx, a) << what << ": ancestors not the CPU's";
      ASSERT_EQ(a_ptx, a_cuda) << what << ": ancestors not the cuda backend's";
      std::vector<std::int32_t> o(n), o_ptx(n);
      cpu::offspring(cpu::serial{}, s, view(lw), k, 6, std::span<std::int32_t>(o));
      ptx::host::offspring(s, view(lw), k, 6, std::span<std::int32_t>(o_ptx));
      ASSERT_EQ(o_ptx, o) << what << ": offspring not the CPU's";
      std::vector<std::int64_t> O(n), O_ptx(n);
      cpu::cumulative_offspring(cpu::serial{}, s, view(lw), k, 6, std::span<std::int64_t>(O), fixed);
      ptx::host::cumulative_offspring(s, view(lw), k, 6, std::span<std::int64_t>(O_ptx), fixed);
      ASSERT_EQ(O_ptx, O) << what << ": cumulative offspring (B = 7) not the CPU's";
    }
  }
}

TEST(PtxChains, PermutedAncestorsEqualCpuForEveryScheme) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  for (const scheme s : production_schemes) {
    for (const std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{4097}, std::size_t{1000003}}) {
      const auto lw = test::log_weights(n, 3.0, static_cast<unsigned>(n) + 8, n > 2);
      const std::string what = std::string(name(s)) + ", N = " + std::to_string(n);
      std::vector<std::int64_t> a(n), c(n), c_ptx(n);
      cpu::ancestors(cpu::serial{}, s, view(lw), {8, 8}, 2, std::span<std::int64_t>(a));
      cpu::permute(cpu::serial{}, std::span<const std::int64_t>(a), std::span<std::int64_t>(c));
      ptx::host::permuted_ancestors(s, view(lw), {8, 8}, 2, std::span<std::int64_t>(c_ptx));
      ASSERT_EQ(c_ptx, c) << what << ": not cpu::permute of cpu::ancestors";
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Multinomial (Code 2): resample_cdf_from_offsets writes the exact C from the tile summary,
// ptx/multinomial.ptx draws and searches; offspring by Code 9, cumulative by the offspring scan
// (the call's only look-back).

TEST(PtxMultinomial, EveryFormEqualCpuAndCudaBitForBit) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const key k{17, 5};
  for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{2049}, std::size_t{100003},
                              (std::size_t{1} << 22) + 3}) {
    const auto lw = test::log_weights(n, 2.5, static_cast<unsigned>(n) + 4, n > 2);
    const std::vector<float> lwf(lw.begin(), lw.end());
    const std::string what = "N = " + std::to_string(n);
    std::vector<std::int32_t> a(n), a_cuda(n), a_ptx(n);
    cpu::ancestors(cpu::serial{}, scheme::multinomial, view(lw), k, 4, std::span<std::int32_t>(a));
    cuda::host::ancestors(scheme::multinomial, view(lw), k, 4, std::span<std::int32_t>(a_cuda));
    ptx::host::ancestors(scheme::multinomial, view(lw), k, 4, std::span<std::int32_t>(a_ptx));
    ASSERT_EQ(a_ptx, a) << what << ": ancestors not the CPU's";
    ASSERT_EQ(a_ptx, a_cuda) << what << ": ancestors not the cuda backend's";
    std::vector<std::int64_t> af(n), af_ptx(n);
    cpu::ancestors(cpu::serial{}, scheme::multinomial, view(lwf), k, 4, std::span<std::int64_t>(af));
    ptx::host::ancestors(scheme::multinomial, view(lwf), k, 4, std::span<std::int64_t>(af_ptx));
    ASSERT_EQ(af_ptx, af) << what << ": float / int64 ancestors not the CPU's";
    std::vector<std::int32_t> o(n), o_ptx(n);
    cpu::offspring(cpu::serial{}, scheme::multinomial, view(lw), k, 4, std::span<std::int32_t>(o));
    ptx::host::offspring(scheme::multinomial, view(lw), k, 4, std::span<std::int32_t>(o_ptx));
    ASSERT_EQ(o_ptx, o) << what << ": offspring not the CPU's";
    std::vector<std::int64_t> O(n), O_ptx(n);
    cpu::cumulative_offspring(cpu::serial{}, scheme::multinomial, view(lwf), k, 4, std::span<std::int64_t>(O));
    ptx::host::cumulative_offspring(scheme::multinomial, view(lwf), k, 4, std::span<std::int64_t>(O_ptx));
    ASSERT_EQ(O_ptx, O) << what << ": cumulative offspring not the CPU's";
  }
}

TEST(PtxMultinomial, CumulativeCapturedInAGraphAndReplayed) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const std::size_t n = 100003;
  device_vector<double> d_lw(n);
  device_vector<std::int32_t> d_O(n);
  std::size_t bytes = 0;
  ptx::cumulative_offspring<double, std::int32_t>(nullptr, bytes, scheme::multinomial, d_lw.data(), n, {6, 1}, 3,
                                                  d_O.data());
  const device_vector<char> temp(bytes);
  const captured_call call([&](cudaStream_t stream) {
    ptx::cumulative_offspring<double, std::int32_t>(temp.data(), bytes, scheme::multinomial, d_lw.data(), n, {6, 1}, 3,
                                                    d_O.data(), {}, stream);
  });
  for (unsigned replay = 0; replay < 3; ++replay) {
    const auto lw = test::log_weights(n, 1.0 + replay, 300 + replay, true);
    cuda::check(cudaMemcpy(d_lw.data(), lw.data(), n * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
    call.replay();
    (void)cuda::check_status(temp.data(), call.stream());
    std::vector<std::int32_t> got(n), want(n);
    d_O.copy_to(std::span<std::int32_t>(got));
    cpu::cumulative_offspring(cpu::serial{}, scheme::multinomial, view(lw), {6, 1}, 3, std::span<std::int32_t>(want));
    EXPECT_EQ(got, want) << "replay " << replay;
  }
}

// ---------------------------------------------------------------------------------------------
// Residual and SSP: the split (ptx/expected_offspring.ptx); residual's draws (ptx/residual.ptx)
// or SSP's pairing on one thread (ptx/ssp.ptx); then the offspring scan and Code 8.

TEST(PtxSplit, ResidualAndSspEveryFormEqualCpuAndCudaBitForBit) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const key k{19, 7};
  for (const scheme s : {scheme::residual, scheme::ssp}) {
    for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{2049}, std::size_t{100003},
                                (std::size_t{1} << 20) + 3}) {
      const auto lw = test::log_weights(n, 2.0, static_cast<unsigned>(n) + 6, n > 2);
      const std::vector<float> lwf(lw.begin(), lw.end());
      const std::string what = std::string(name(s)) + ", N = " + std::to_string(n);
      std::vector<std::int32_t> a(n), a_cuda(n), a_ptx(n);
      cpu::ancestors(cpu::serial{}, s, view(lw), k, 3, std::span<std::int32_t>(a));
      cuda::host::ancestors(s, view(lw), k, 3, std::span<std::int32_t>(a_cuda));
      ptx::host::ancestors(s, view(lw), k, 3, std::span<std::int32_t>(a_ptx));
      ASSERT_EQ(a_ptx, a) << what << ": ancestors not the CPU's";
      ASSERT_EQ(a_ptx, a_cuda) << what << ": ancestors not the cuda backend's";
      std::vector<std::int64_t> o(n), o_ptx(n);
      cpu::offspring(cpu::serial{}, s, view(lwf), k, 3, std::span<std::int64_t>(o));
      ptx::host::offspring(s, view(lwf), k, 3, std::span<std::int64_t>(o_ptx));
      ASSERT_EQ(o_ptx, o) << what << ": float / int64 offspring not the CPU's";
      std::vector<std::int32_t> O(n), O_ptx(n);
      cpu::cumulative_offspring(cpu::serial{}, s, view(lw), k, 3, std::span<std::int32_t>(O));
      ptx::host::cumulative_offspring(s, view(lw), k, 3, std::span<std::int32_t>(O_ptx));
      ASSERT_EQ(O_ptx, O) << what << ": cumulative offspring not the CPU's";
    }
  }
}

TEST(PtxSplit, ResidualAndSspCapturedInAGraphAndReplayed) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const std::size_t n = 20011;
  for (const scheme s : {scheme::residual, scheme::ssp}) {
    device_vector<float> d_lw(n);
    device_vector<std::int32_t> d_a(n);
    std::size_t bytes = 0;
    ptx::ancestors<float, std::int32_t>(nullptr, bytes, s, d_lw.data(), n, {2, 9}, 4, d_a.data());
    const device_vector<char> temp(bytes);
    const captured_call call([&](cudaStream_t stream) {
      ptx::ancestors<float, std::int32_t>(temp.data(), bytes, s, d_lw.data(), n, {2, 9}, 4, d_a.data(), {}, stream);
    });
    for (unsigned replay = 0; replay < 3; ++replay) {
      const auto lw = test::log_weights<float>(n, 1.0 + replay, 400 + replay, true);
      cuda::check(cudaMemcpy(d_lw.data(), lw.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
      call.replay();
      (void)cuda::check_status(temp.data(), call.stream());
      std::vector<std::int32_t> got(n), want(n);
      d_a.copy_to(std::span<std::int32_t>(got));
      cpu::ancestors(cpu::serial{}, s, view(lw), {2, 9}, 4, std::span<std::int32_t>(want));
      EXPECT_EQ(got, want) << name(s) << ", replay " << replay;
    }
  }
}

TEST(PtxChains, BadInputAndOptionsReportedLikeTheCpu) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  auto lw = test::log_weights(200000, 1.0, 12);
  const double top = *std::max_element(lw.begin(), lw.end());
  const device_vector<double> d_lw(view(lw));
  const std::vector<std::int32_t> sentinel(lw.size(), -7);
  device_vector<std::int32_t> d_a(view(sentinel));
  options low;
  low.rejection_log_bound = top - 0.5;  // some weights above it: the first is reported
  std::size_t first = 0;
  while (lw[first] <= *low.rejection_log_bound) ++first;
  std::size_t bytes = 0;
  ptx::permuted_ancestors<double, std::int32_t>(nullptr, bytes, scheme::rejection, d_lw.data(), lw.size(), {1, 2}, 3,
                                                d_a.data(), low);
  const device_vector<char> temp(bytes);
  ptx::permuted_ancestors<double, std::int32_t>(temp.data(), bytes, scheme::rejection, d_lw.data(), lw.size(), {1, 2},
                                                3, d_a.data(), low);
  std::string cpu_message;
  try {
    std::vector<std::int32_t> a(lw.size());
    cpu::ancestors(cpu::serial{}, scheme::rejection, view(lw), {1, 2}, 3, std::span<std::int32_t>(a), low);
  } catch (const invalid_input& e) {
    cpu_message = e.what();
  }
  ASSERT_FALSE(cpu_message.empty()) << "the CPU accepted a bound below a weight";
  try {
    (void)cuda::check_status(temp.data(), nullptr);
    ADD_FAILURE() << "no error for a bound below a weight";
  } catch (const invalid_input& e) {
    EXPECT_EQ(std::string(e.what()), cpu_message);
    EXPECT_NE(std::string(e.what()).find(std::to_string(first)), std::string::npos) << e.what();
  }
  std::vector<std::int32_t> a(lw.size());
  d_a.copy_to(std::span<std::int32_t>(a));
  EXPECT_EQ(a, sentinel) << "permuted ancestors were written for bad input";
  options bad_eps;
  bad_eps.metropolis_eps = 1.5;
  EXPECT_THROW(ptx::host::ancestors(scheme::metropolis, view(lw), {1, 2}, 3, std::span<std::int32_t>(a), bad_eps),
               invalid_input);
  options infinite;
  infinite.rejection_log_bound = std::numeric_limits<double>::infinity();
  EXPECT_THROW(ptx::host::ancestors(scheme::rejection, view(lw), {1, 2}, 3, std::span<std::int32_t>(a), infinite),
               invalid_input);
}

TEST(PtxChains, CapturedInAGraphAndReplayed) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const std::size_t n = 300000;
  device_vector<float> d_lw(n);
  device_vector<std::int32_t> d_c(n);
  std::size_t bytes = 0;
  ptx::permuted_ancestors<float, std::int32_t>(nullptr, bytes, scheme::megopolis, d_lw.data(), n, {4, 4}, 8, d_c.data());
  const device_vector<char> temp(bytes);
  const captured_call call([&](cudaStream_t stream) {
    ptx::permuted_ancestors<float, std::int32_t>(temp.data(), bytes, scheme::megopolis, d_lw.data(), n, {4, 4}, 8,
                                                 d_c.data(), {}, stream);
  });
  for (unsigned replay = 0; replay < 3; ++replay) {
    const auto lw = test::log_weights<float>(n, 1.0 + replay, 300 + replay);
    cuda::check(cudaMemcpy(d_lw.data(), lw.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
    call.replay();
    (void)cuda::check_status(temp.data(), call.stream());
    std::vector<std::int32_t> got(n), a(n), want(n);
    d_c.copy_to(std::span<std::int32_t>(got));
    cpu::ancestors(cpu::serial{}, scheme::megopolis, view(lw), {4, 4}, 8, std::span<std::int32_t>(a));
    cpu::permute(cpu::serial{}, std::span<const std::int32_t>(a), std::span<std::int32_t>(want));
    EXPECT_EQ(got, want) << "replay " << replay;
  }
}

// ---------------------------------------------------------------------------------------------
// The offspring and cumulative forms (written by the comb kernel), the conversions and Code 7.

TEST(PtxForms, OffspringAndCumulativeEqualCpuAndCudaBitForBit) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const key k{77, 1};
  for (const scheme s : {scheme::systematic, scheme::stratified}) {
    for (const std::size_t n : {std::size_t{1}, std::size_t{2047}, std::size_t{2049}, std::size_t{100003},
                                (std::size_t{1} << 22) + 3}) {
      const auto lw = test::log_weights<float>(n, 3.0, static_cast<unsigned>(n) + 2, n > 2);
      const std::string what = std::string(name(s)) + ", N = " + std::to_string(n);
      std::vector<std::int32_t> o(n), o_cuda(n), o_ptx(n);
      cpu::offspring(cpu::serial{}, s, view(lw), k, 4, std::span<std::int32_t>(o));
      cuda::host::offspring(s, view(lw), k, 4, std::span<std::int32_t>(o_cuda));
      ptx::host::offspring(s, view(lw), k, 4, std::span<std::int32_t>(o_ptx));
      ASSERT_EQ(o_ptx, o) << what << ": offspring not the CPU's";
      ASSERT_EQ(o_ptx, o_cuda) << what << ": offspring not the cuda backend's";
      std::vector<std::int64_t> O(n), O_ptx(n);
      cpu::cumulative_offspring(cpu::serial{}, s, view(lw), k, 4, std::span<std::int64_t>(O));
      ptx::host::cumulative_offspring(s, view(lw), k, 4, std::span<std::int64_t>(O_ptx));
      ASSERT_EQ(O_ptx, O) << what << ": cumulative offspring not the CPU's";
    }
  }
  auto heavy = test::log_weights(300000, 1.0, 3);  // one tile owns nearly every offspring
  heavy[4321] = 60.0;
  std::vector<std::int32_t> o(heavy.size()), o_ptx(heavy.size());
  cpu::offspring(cpu::serial{}, scheme::systematic, view(heavy), k, 1, std::span<std::int32_t>(o));
  ptx::host::offspring(scheme::systematic, view(heavy), k, 1, std::span<std::int32_t>(o_ptx));
  EXPECT_EQ(o_ptx, o) << "heavy particle";
}

template <class Index>
void expect_conversions_equal_cpu_and_cuda(const std::vector<Index>& a, const std::string& what) {
  const auto n = a.size();
  std::vector<Index> o(n), O(n), sorted(n), c(n), got(n), got_cuda(n);
  const auto in = [](const std::vector<Index>& v) { return std::span<const Index>(v); };
  const auto out = [](std::vector<Index>& v) { return std::span<Index>(v); };
  cpu::ancestors_to_offspring(cpu::serial{}, in(a), out(o));
  ptx::host::ancestors_to_offspring(in(a), out(got));
  ASSERT_EQ(got, o) << what << ": ancestors_to_offspring";
  cpu::offspring_to_cumulative(cpu::serial{}, in(o), out(O));
  ptx::host::offspring_to_cumulative(in(o), out(got));
  ASSERT_EQ(got, O) << what << ": offspring_to_cumulative";
  cpu::cumulative_offspring_to_ancestors(cpu::serial{}, in(O), out(sorted));
  ptx::host::cumulative_offspring_to_ancestors(in(O), out(got));
  ASSERT_EQ(got, sorted) << what << ": cumulative_offspring_to_ancestors";
  cpu::permute(cpu::serial{}, in(a), out(c));
  ptx::host::permute(in(a), out(got));
  cuda::host::permute(in(a), out(got_cuda));
  ASSERT_EQ(got, c) << what << ": permute not the CPU's";
  ASSERT_EQ(got, got_cuda) << what << ": permute not the cuda backend's";
}

void expect_conversions_equal_cpu_and_cuda(std::initializer_list<std::size_t> sizes_to_try) {
  std::mt19937_64 rng(7);
  for (const std::size_t n : sizes_to_try) {
    const std::string size = ", N = " + std::to_string(n);
    const auto lw = test::log_weights(n, 4.0, static_cast<unsigned>(n) + 9);
    std::vector<std::int32_t> drawn(n);
    cpu::ancestors(cpu::serial{}, scheme::stratified, view(lw), key{2, 2}, 6, std::span<std::int32_t>(drawn));
    expect_conversions_equal_cpu_and_cuda(drawn, "stratified draw" + size);
    std::vector<std::int64_t> arbitrary(n);  // collisions and long chase chains
    for (auto& x : arbitrary) x = static_cast<std::int64_t>(rng() % ((n + 15) / 16));
    expect_conversions_equal_cpu_and_cuda(arbitrary, "arbitrary int64" + size);
  }
}

// small enough for the sanitizers (scripts/gpu_checks.sh skips *EqualCpuAndCudaBitForBit* there)
TEST(PtxConversions, SmallSizesEqualCpu) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  expect_conversions_equal_cpu_and_cuda({1, 33, 2049, 10007});
  expect_conversions_equal_cpu_and_cuda(std::vector<std::int32_t>(5000, 4999), "one owner");
}

TEST(PtxConversions, EqualCpuAndCudaBitForBit) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  expect_conversions_equal_cpu_and_cuda({100003, (std::size_t{1} << 22) + 3});
  expect_conversions_equal_cpu_and_cuda(std::vector<std::int32_t>(1000003, 999999), "one owner");
}

// The int32 offspring scan's look-back (resample_look_back_u32: flag and sum in one word) on 8,193
// tiles, where many wait on predecessors still loading and some look back past a window of 32;
// four calls, each against the CPU (too large for the sanitizers: *LargeEqual* is left out there).
TEST(PtxConversions, LargeEqualOffspringScanOnEveryCall) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const std::size_t n = (std::size_t{1} << 25) + 5;
  std::mt19937_64 rng(19);
  std::vector<std::int32_t> o(n), want(n), got(n);
  for (auto& x : o) x = static_cast<std::int32_t>(rng() % 4);
  cpu::offspring_to_cumulative(cpu::serial{}, std::span<const std::int32_t>(o), std::span<std::int32_t>(want));
  for (int call = 0; call < 4; ++call) {
    std::fill(got.begin(), got.end(), -1);
    ptx::host::offspring_to_cumulative(std::span<const std::int32_t>(o), std::span<std::int32_t>(got));
    ASSERT_EQ(got, want) << "call " << call;
  }
}

TEST(PtxConversions, BadIndicesReportedLikeTheCpuAndNothingWritten) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const std::size_t n = 300000;
  std::vector<std::int32_t> a(n, 5);
  a[250001] = -1;
  a[123457] = static_cast<std::int32_t>(n);
  std::vector<std::int32_t> got(n, -7);
  const std::vector<std::int32_t> sentinel(n, -7);
  auto expect_error = [&](auto call, const std::string& message, const std::string& what) {
    const device_vector<std::int32_t> d_in(view(a));
    const device_vector<std::int32_t> d_out(view(sentinel));
    std::size_t bytes = 0;
    call(nullptr, bytes, d_in.data(), n, d_out.data(), nullptr);
    const device_vector<char> temp(bytes);
    call(temp.data(), bytes, d_in.data(), n, d_out.data(), nullptr);
    try {
      (void)cuda::check_status(temp.data(), nullptr);
      ADD_FAILURE() << what << ": no error";
    } catch (const invalid_input& e) {
      EXPECT_EQ(std::string(e.what()), message) << what;
    }
    d_out.copy_to(std::span<std::int32_t>(got));
    EXPECT_EQ(got, sentinel) << what << ": written for bad input";
  };
  const std::string bad_ancestor = "ancestor at index 123457 is 300000, outside [0, 300000)";
  expect_error(ptx::ancestors_to_offspring<std::int32_t>, bad_ancestor, "ancestors_to_offspring");
  expect_error(ptx::permute<std::int32_t>, bad_ancestor, "permute");
  for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<std::int32_t>(i + 1);
  a[200000] = 7;
  expect_error(ptx::cumulative_offspring_to_ancestors<std::int32_t>, "cumulative offspring decrease at index 200000",
               "decreasing cumulative offspring");
  a[200000] = 200001;
  a[n - 1] = static_cast<std::int32_t>(n + 1);
  expect_error(ptx::cumulative_offspring_to_ancestors<std::int32_t>,
               "cumulative offspring end at 300001, not at N = 300000", "cumulative offspring ending past N");
  // and the CPU says the same
  try {
    std::vector<std::int32_t> out(n);
    cpu::cumulative_offspring_to_ancestors(cpu::serial{}, std::span<const std::int32_t>(a), std::span<std::int32_t>(out));
    ADD_FAILURE() << "the CPU accepted it";
  } catch (const invalid_input& e) {
    EXPECT_EQ(std::string(e.what()), "cumulative offspring end at 300001, not at N = 300000");
  }
  std::size_t bytes = 0;
  EXPECT_THROW(ptx::permute<std::int32_t>(nullptr, bytes, nullptr, 0, nullptr), invalid_input);
}

TEST(PtxConversions, CapturedInAGraphAndReplayed) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  // a draw's cumulative form, its ancestors by Code 8, their permutation: one graph
  const std::size_t n = 400000;
  device_vector<float> d_lw(n);
  device_vector<std::int64_t> d_O(n), d_a(n), d_c(n);
  std::size_t draw_bytes = 0, code8_bytes = 0, permute_bytes = 0;
  ptx::cumulative_offspring<float, std::int64_t>(nullptr, draw_bytes, scheme::stratified, d_lw.data(), n, {9, 9}, 2,
                                                 d_O.data());
  ptx::cumulative_offspring_to_ancestors<std::int64_t>(nullptr, code8_bytes, d_O.data(), n, d_a.data());
  ptx::permute<std::int64_t>(nullptr, permute_bytes, d_a.data(), n, d_c.data());
  const device_vector<char> draw_temp(draw_bytes), code8_temp(code8_bytes), permute_temp(permute_bytes);
  const captured_call call([&](cudaStream_t stream) {
    ptx::cumulative_offspring<float, std::int64_t>(draw_temp.data(), draw_bytes, scheme::stratified, d_lw.data(), n,
                                                   {9, 9}, 2, d_O.data(), {}, stream);
    ptx::cumulative_offspring_to_ancestors<std::int64_t>(code8_temp.data(), code8_bytes, d_O.data(), n, d_a.data(),
                                                         stream);
    ptx::permute<std::int64_t>(permute_temp.data(), permute_bytes, d_a.data(), n, d_c.data(), stream);
  });
  for (unsigned replay = 0; replay < 3; ++replay) {
    const auto lw = test::log_weights<float>(n, 2.0 + replay, 300 + replay);
    cuda::check(cudaMemcpy(d_lw.data(), lw.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
    call.replay();
    for (const auto* temp : {&draw_temp, &code8_temp, &permute_temp}) (void)cuda::check_status(temp->data(), call.stream());
    std::vector<std::int64_t> a(n), c(n), got(n);
    cpu::ancestors(cpu::serial{}, scheme::stratified, view(lw), {9, 9}, 2, std::span<std::int64_t>(a));
    cpu::permute(cpu::serial{}, std::span<const std::int64_t>(a), std::span<std::int64_t>(c));
    d_a.copy_to(std::span<std::int64_t>(got));
    EXPECT_EQ(got, a) << "replay " << replay << ": ancestors";
    d_c.copy_to(std::span<std::int64_t>(got));
    EXPECT_EQ(got, c) << "replay " << replay << ": permuted";
  }
}

TEST(PtxLoader, JitErrorLogInTheException) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  const char* broken =
      ".version 8.0\n.target sm_90\n.address_size 64\n"
      ".visible .entry broken()\n{\n  mov.u32 %undeclared_register, 1;\n  ret;\n}\n";
  try {
    ptx::detail::jit_check(broken);
    ADD_FAILURE() << "the JIT accepted broken PTX";
  } catch (const ptx::ptx_error& e) {
    EXPECT_FALSE(e.jit_log().empty());
    EXPECT_NE(e.jit_log().find("undeclared_register"), std::string::npos) << e.jit_log();
    EXPECT_NE(std::string(e.what()).find("cuModuleLoadDataEx(a module given to jit_check)"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("JIT error log"), std::string::npos) << e.what();
  }
}

TEST(PtxLoader, UnknownKernelNamed) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  try {
    (void)ptx::detail::kernel("resample_no_such_kernel");
    ADD_FAILURE() << "found a kernel that does not exist";
  } catch (const ptx::ptx_error& e) {
    EXPECT_NE(std::string(e.what()).find("cuModuleGetFunction(resample_no_such_kernel)"), std::string::npos)
        << e.what();
  }
}

// gtest_discover_tests runs each test in a process of its own, so this is the module's first use.
TEST(PtxLoader, ConcurrentFirstUseLoadsOneModule) {
  RESAMPLE_SKIP_WITHOUT_GPU();
  constexpr int threads = 8;
  std::vector<CUfunction> got(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&got, t] { got[t] = ptx::detail::kernel(t % 2 ? "resample_max_pass" : "resample_weight_sums"); });
  }
  for (auto& th : pool) th.join();
  for (int t = 2; t < threads; ++t) EXPECT_EQ(got[t], got[t % 2]) << "thread " << t;
  EXPECT_NE(got[0], got[1]);
}

}  // namespace
}  // namespace resample
