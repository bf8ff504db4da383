// The particle filter's PTX move kernel (ptx/bpf_move.ptx, resample_bpf_move) on the simulator
// (support/ptx_interpreter.hpp), bit for bit against the C++: the models' draws and densities
// (sv_model with Gaussian and Student-t noise, linear_gaussian_model), the CPU filter's tick
// (particle_filter.hpp: initial weight, first stage, gather with jitter, propagate) and
// summarise_chunk. Two chunks, the second partial (N = 4096 + 37); bad log-weights (NaN, +inf)
// and a chunk of zero weights. And the kernel's own helpers: the general deterministic exp and
// the normal / Student-t draws.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "resample/bpf/chunk_statistics.hpp"
#include "resample/bpf/linear_gaussian_model.hpp"
#include "resample/bpf/particle_filter.hpp"
#include "resample/bpf/sv_model.hpp"
#include "resample/core/deterministic_math.hpp"
#include "resample/core/philox.hpp"
#include "resample/core/random.hpp"
#include "resample/cuda/status.hpp"
#include "support/ptx_interpreter.hpp"

#include "bpf_move_layout.hpp"
#include "module.hpp"

namespace resample {
namespace {

using bpf::detail::chunk_summary;
using ptx::detail::bpf_move_args;

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double sentinel = -12345.0;  // in every output the kernel must not write
constexpr std::size_t two_chunks = 4096 + 37;
static_assert(offsetof(cuda::device_status, code) == 32);

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }
double from_bits(std::uint64_t b) { return std::bit_cast<double>(b); }

// The module, parsed once; each launch runs on a copy (its own memory).
const test::ptx_interpreter& module() {
  static const test::ptx_interpreter m(ptx::detail::module_text);
  return m;
}


/// One launch's inputs (stage 0 reads none of x, lw, fs; stage 1 none of the gather's).
struct move_case {
  std::uint32_t stage = 0;
  std::size_t n = two_chunks;
  key k{0x2468ACE1u, 0x13579BDFu};
  std::uint32_t tick = 0;
  double jitter = 0.0;
  bool auxiliary = false;
  int resample = 0;
  int code = 0;  // the resampler's verdict
  double shift = 0.0;
  std::vector<double> y{0.7, -1.2, 0.0, 1.9};  // y_2 = 0: sv's z = 0 path
  std::vector<double> truth;                   // empty: none (a null pointer)
  std::vector<double> x, lw, fs;
  std::vector<std::int32_t> ancestors;
};

struct move_result {
  std::vector<double> x_out, lw_out, fs;
  std::vector<chunk_summary> chunks;
};

std::size_t chunk_count(std::size_t n) { return (n + bpf::detail::chunk - 1) / bpf::detail::chunk; }

/// resample_bpf_move on the simulator, its outputs and fs (given, or sentinels) read back.
move_result simulate(std::uint32_t model, const std::array<double, 8>& c, const move_case& mc,
                     unsigned threads = ptx::detail::bpf_move_threads) {
  test::ptx_interpreter sim = module();
  const std::size_t n = mc.n, chunks = chunk_count(n);
  auto pointer = [](std::uint64_t address) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)); };
  auto array = [&](const std::vector<double>& v) { return v.empty() ? std::uint64_t{0} : sim.alloc_copy(v); };
  const std::vector<double> sentinels(n, sentinel);
  const std::uint64_t tick = sim.alloc_copy(std::vector<std::uint32_t>{mc.tick});
  const std::uint64_t resample = sim.alloc_copy(std::vector<int>{mc.resample});
  const std::uint64_t shift = sim.alloc_copy(std::vector<double>{mc.shift});
  const std::uint64_t verdict = sim.alloc(sizeof(cuda::device_status));
  sim.write(verdict + offsetof(cuda::device_status, code), mc.code);
  const std::uint64_t fs = sim.alloc_copy(mc.fs.empty() ? sentinels : mc.fs);
  const std::uint64_t x_out = sim.alloc_copy(sentinels), lw_out = sim.alloc_copy(sentinels);
  const std::uint64_t summaries = sim.alloc_copy(std::vector<chunk_summary>(chunks, chunk_summary{sentinel, 7, {}}));
  bpf_move_args args{};
  args.stage = mc.stage;
  args.model = model;
  args.seed = mc.k.seed;
  args.stream = mc.k.stream;
  args.n = n;
  std::copy(c.begin(), c.end(), args.c);
  args.jitter = mc.jitter;
  args.auxiliary = mc.auxiliary ? 1 : 0;
  args.unused = 0xDEADBEEF;
  args.tick = static_cast<const std::uint32_t*>(pointer(tick));
  args.resample = static_cast<const int*>(pointer(resample));
  args.shift = static_cast<const double*>(pointer(shift));
  args.y = static_cast<const double*>(pointer(array(mc.y)));
  args.truth = static_cast<const double*>(pointer(array(mc.truth)));
  args.ancestors = static_cast<const std::int32_t*>(pointer(mc.ancestors.empty() ? 0 : sim.alloc_copy(mc.ancestors)));
  args.verdict = pointer(verdict);
  args.x = static_cast<const double*>(pointer(array(mc.x)));
  args.lw = static_cast<const double*>(pointer(array(mc.lw)));
  args.fs = static_cast<double*>(pointer(fs));
  args.x_out = static_cast<double*>(pointer(x_out));
  args.lw_out = static_cast<double*>(pointer(lw_out));
  args.chunks = pointer(summaries);
  const std::uint64_t at = sim.alloc_copy(std::vector<bpf_move_args>{args});
  sim.launch("resample_bpf_move", static_cast<unsigned>(chunks), threads, {at}, ptx::detail::bpf_move_dynamic_shared);
  move_result r;
  auto read = [&](std::uint64_t from, auto& to, std::size_t count) {
    using X = typename std::remove_reference_t<decltype(to)>::value_type;
    to.resize(count);
    for (std::size_t i = 0; i < count; ++i) to[i] = sim.read<X>(from + i * sizeof(X));
  };
  read(x_out, r.x_out, n);
  read(lw_out, r.lw_out, n);
  read(fs, r.fs, n);
  read(summaries, r.chunks, chunks);
  return r;
}

/// The kernel's summary of a chunk: summarise_chunk's, except that where the chunk has a NaN /
/// +inf its max is that of all its other log-weights (the CUDA kernel's; summarise_chunk stops at
/// the first bad one). The sums are zero there, as summarise_chunk leaves them.
chunk_summary expected_summary(const std::vector<double>& lw, const std::vector<double>& x, std::size_t c, double shift,
                               double truth) {
  chunk_summary s = bpf::detail::summarise_chunk(lw, x, c, shift, truth);
  if (s.first_bad == bpf::detail::no_index) return s;
  s.max = -inf;
  for (std::size_t i = c * bpf::detail::chunk; i < std::min(lw.size(), (c + 1) * bpf::detail::chunk); ++i) {
    if (lw[i] < inf && lw[i] > s.max) s.max = lw[i];
  }
  return s;
}

/// The C++'s move: the CPU filter's tick (particle_filter.hpp: step, resample_on) and its chunks.
template <class Model>
move_result reference(const Model& m, const move_case& mc) {
  const std::size_t n = mc.n;
  move_result r;
  r.x_out.assign(n, sentinel);
  r.lw_out.assign(n, sentinel);
  r.fs = mc.fs.empty() ? std::vector<double>(n, sentinel) : mc.fs;
  const std::uint32_t t = mc.stage == 0 ? 0 : mc.tick;
  const double y = mc.y[t];
  const double truth = mc.stage == 1 || mc.truth.empty() ? nan : mc.truth[t];
  const double shift = mc.stage == 2 ? mc.shift : 0.0;
  const bool resampled = mc.resample != 0 && mc.code == 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (mc.stage == 0) {
      philox_stream s(mc.k, bpf::detail::propagation_index + i, 0);
      r.x_out[i] = m.initial(s);
      r.lw_out[i] = m.log_likelihood(y, r.x_out[i]);
    } else if (mc.stage == 1) {
      r.fs[i] = m.log_first_stage(y, mc.x[i]);
      r.lw_out[i] = mc.lw[i] + r.fs[i];
    } else {
      double state = mc.x[i], weight = mc.lw[i];
      if (resampled) {
        const auto a = static_cast<std::size_t>(mc.ancestors[i]);
        state = mc.x[a];
        if (mc.jitter > 0.0) {
          philox_stream s(mc.k, bpf::detail::jitter_index + i, t);
          state = resample::detail::fused(mc.jitter, standard_normal(s), state);
        }
        weight = mc.auxiliary ? -mc.fs[a] : 0.0;
      }
      philox_stream s(mc.k, bpf::detail::propagation_index + i, t);
      state = m.propagate(state, s);
      weight += m.log_likelihood(y, state);
      r.x_out[i] = state;
      r.lw_out[i] = weight;
    }
  }
  const std::vector<double>& states = mc.stage == 1 ? mc.x : r.x_out;
  for (std::size_t c = 0; c < chunk_count(n); ++c) r.chunks.push_back(expected_summary(r.lw_out, states, c, shift, truth));
  return r;
}

/// Equal bits (any NaN matching any NaN: a GPU's NaN payload is its own).
::testing::AssertionResult same(double want, double got) {
  if (bits(want) == bits(got) || (std::isnan(want) && std::isnan(got))) return ::testing::AssertionSuccess();
  char hex[64];
  std::snprintf(hex, sizeof hex, "%016llx vs %016llx", static_cast<unsigned long long>(bits(want)),
                static_cast<unsigned long long>(bits(got)));
  return ::testing::AssertionFailure() << "want " << want << ", got " << got << " (bits " << hex << ")";
}

void expect_equal(const move_result& want, const move_result& got) {
  for (const auto field : {&move_result::x_out, &move_result::lw_out, &move_result::fs}) {
    const char* name = field == &move_result::x_out ? "x_out" : field == &move_result::lw_out ? "lw_out" : "fs";
    ASSERT_EQ((want.*field).size(), (got.*field).size());
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < (want.*field).size(); ++i) {
      const auto ok = same((want.*field)[i], (got.*field)[i]);
      if (!ok && ++wrong <= 3) ADD_FAILURE() << name << "[" << i << "]: " << ok.message();
    }
    EXPECT_EQ(wrong, 0u) << name << ": particles that differ";
  }
  ASSERT_EQ(want.chunks.size(), got.chunks.size());
  for (std::size_t c = 0; c < want.chunks.size(); ++c) {
    const chunk_summary &w = want.chunks[c], &g = got.chunks[c];
    EXPECT_TRUE(same(w.max, g.max)) << "chunk " << c << " max";
    EXPECT_EQ(w.first_bad, g.first_bad) << "chunk " << c;
    EXPECT_EQ(bits(w.sums.w), bits(g.sums.w)) << "chunk " << c << ": " << w.sums.w << " vs " << g.sums.w;
    EXPECT_EQ(bits(w.sums.w2), bits(g.sums.w2)) << "chunk " << c;
    EXPECT_EQ(bits(w.sums.wd), bits(g.sums.wd)) << "chunk " << c;
    EXPECT_EQ(bits(w.sums.wdd), bits(g.sums.wdd)) << "chunk " << c;
    EXPECT_EQ(bits(w.sums.below), bits(g.sums.below)) << "chunk " << c;
  }
}

template <class Model, class Parameters>
move_result check(const Parameters& p, const move_case& mc, unsigned threads = ptx::detail::bpf_move_threads) {
  const Model model(p);
  const move_result want = reference(model, mc);
  const auto words = ptx::detail::model_words(model);  // as the filter's host code fills them
  const move_result got = simulate(words.model, words.c, mc, threads);
  expect_equal(want, got);
  return want;
}

const bpf::sv_parameters sv_gaussian{};  // mu -1.02, rho 0.9702, sigma 0.178, Gaussian noise
const bpf::sv_parameters sv_student{-0.8, 0.95, 0.23, 5.0, 5.0};  // no power of 2: every product rounds
const bpf::linear_gaussian_parameters linear_gaussian{0.9, 0.7, 1.3};

/// Particles of a tick t > 0: states around the model's level, log-weights in [-8, 0] with some
/// -inf, first-stage weights in [-4, 1], ancestors anywhere.
move_case particles(std::uint32_t stage, double level, double spread, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(level, spread);
  std::uniform_real_distribution<double> weight(-8.0, 0.0), first(-4.0, 1.0);
  move_case mc;
  mc.stage = stage;
  mc.tick = 1;
  for (std::size_t i = 0; i < mc.n; ++i) {
    mc.x.push_back(normal(rng));
    mc.lw.push_back(i % 97 == 5 ? -inf : weight(rng));
    mc.fs.push_back(first(rng));
    mc.ancestors.push_back(static_cast<std::int32_t>(rng() % mc.n));
  }
  return mc;
}

// ---------------------------------------------------------------------------------------------
// The helpers.

TEST(PtxBpfMove, ExpEqualsDeterministicExpEverywhere) {
  std::vector<double> xs = {0.0, -0.0, 1.0, -1.0, 1e-300, 5e-324, 0.5, 700.0, 709.0, 709.78, 709.782712893384,
                            std::nextafter(709.782712893384, 0.0), std::nextafter(709.782712893384, 800.0), 710.0,
                            1e300, inf, -inf, nan, -708.39, -708.4, -745.13, -745.1332191019412, -745.14,
                            std::nextafter(-745.1332191019412, 0.0), -1e300};
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> wide(-750.0, 712.0), narrow(-3.0, 3.0), top(705.0, 709.79);
  for (int i = 0; i < 1500; ++i) {
    xs.push_back(wide(rng));
    xs.push_back(narrow(rng));
    xs.push_back(top(rng));
  }
  for (const double x : xs) {
    const double got = from_bits(module().call64("resample_exp", {bits(x)}));
    ASSERT_TRUE(same(deterministic_exp(x), got)) << "x = " << x;
  }
}

TEST(PtxBpfMove, DrawsEqualStandardNormalAndStudentT) {
  const key k{77, 88};
  for (const double nu : {0.0, 5.0, 2.5, 30.0}) {
    for (std::uint64_t index : {std::uint64_t{0}, std::uint64_t{1} << 32, (std::uint64_t{2} << 32) + 4095}) {
      for (std::uint32_t step = 0; step < 60; ++step) {
        philox_stream s(k, index + step, step * 3);
        const double want = nu == 0.0 ? standard_normal(s) : student_t(s, nu);
        const double got = from_bits(module().call64(
            "resample_bpf_variate", {index + step, step * 3, k.seed, k.stream, bits(nu)}));
        ASSERT_TRUE(same(want, got)) << "nu = " << nu << ", index " << index + step << ", step " << step * 3;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Stage 0: the initial weights (tick 0).

TEST(PtxBpfMove, InitialWeightSvGaussian) {
  move_case mc;
  mc.truth = {-1.1, nan, 0.0, 0.0};
  check<bpf::sv_model>(sv_gaussian, mc);
}

TEST(PtxBpfMove, InitialWeightSvStudentT) {
  move_case mc;  // no truth: a null pointer
  mc.k = {0xFFFFFFFFu, 3};
  check<bpf::sv_model>(sv_student, mc);
}

TEST(PtxBpfMove, InitialWeightLinearGaussian) {
  move_case mc;
  mc.truth = {0.25, nan, 0.0, 0.0};
  check<bpf::linear_gaussian_model>(linear_gaussian, mc);
}

// ---------------------------------------------------------------------------------------------
// Stage 1: the auxiliary filter's first stage (summed with shift 0, no truth, x not written).

TEST(PtxBpfMove, FirstStageSvGaussian) {
  move_case mc = particles(1, -1.0, 0.9, 1);
  mc.tick = 3;
  mc.truth = {0.0, 0.0, 0.0, -1.0};  // never read by stage 1
  check<bpf::sv_model>(sv_gaussian, mc);
}

TEST(PtxBpfMove, FirstStageFindsTheFirstNanOrInfinity) {
  move_case mc = particles(1, -0.8, 0.7, 2);
  mc.tick = 2;  // y = 0
  mc.lw[1234] = nan;
  mc.lw[1234 + 512] = inf;  // the same thread's next particle
  mc.lw[2000] = inf;
  mc.lw[4100] = inf;
  mc.lw[4120] = nan;
  const auto want = check<bpf::sv_model>(sv_student, mc);
  EXPECT_EQ(want.chunks[0].first_bad, 1234u);
  EXPECT_EQ(want.chunks[1].first_bad, 4100u);
}

TEST(PtxBpfMove, FirstStageLinearGaussianWithAChunkOfZeroWeights) {
  move_case mc = particles(1, 0.0, 2.0, 3);
  for (std::size_t i = 4096; i < mc.n; ++i) mc.lw[i] = -inf;
  const auto want = check<bpf::linear_gaussian_model>(linear_gaussian, mc);
  EXPECT_EQ(want.chunks[1].max, -inf);
  EXPECT_EQ(want.chunks[0].first_bad, bpf::detail::no_index);
}

// ---------------------------------------------------------------------------------------------
// Stage 2: gather (when the tick resampled and the resampler succeeded) and propagate.

TEST(PtxBpfMove, GatherWithJitterAuxiliarySvStudentT) {
  move_case mc = particles(2, -0.8, 0.7, 4);
  mc.resample = 1;
  mc.jitter = 0.05;
  mc.auxiliary = true;
  mc.shift = -0.75;
  mc.truth = {0.0, -0.9, 0.0, 0.0};
  check<bpf::sv_model>(sv_student, mc);
}

TEST(PtxBpfMove, GatherSvGaussian) {
  move_case mc = particles(2, -1.0, 0.9, 5);
  mc.tick = 2;  // y = 0
  mc.resample = 1;
  mc.shift = -1.0;
  mc.truth = {0.0, 0.0, -1.2, 0.0};
  check<bpf::sv_model>(sv_gaussian, mc);
}

TEST(PtxBpfMove, NoResamplingLinearGaussianWithAChunkOfZeroWeights) {
  move_case mc = particles(2, 0.0, 2.0, 6);
  mc.tick = 3;
  mc.resample = 0;
  mc.code = 0;
  mc.shift = 0.4;
  mc.truth = {0.0, 0.0, 0.0, 0.3};
  mc.jitter = 0.5;      // unused: no gather
  mc.auxiliary = true;  // unused too
  for (std::size_t i = 4096; i < mc.n; ++i) mc.lw[i] = -inf;
  const auto want = check<bpf::linear_gaussian_model>(linear_gaussian, mc);
  EXPECT_EQ(want.chunks[1].max, -inf);
}

// Where all lanes carry weight, a lane's last bits rarely survive the tree (a lane's rounding is
// far below the total's ulp); with weight on lanes 0 and 3 only (log-weights within 1/2 of each
// other), each chunk's sums are those two lanes' 16 terms, added once, and add_particle's
// roundings show: about a third of such chunks tell an fma from a product and a sum. Eight
// chunks, the first stage (no draws: quick on the simulator).
TEST(PtxBpfMove, TwoLanesShowEveryRounding) {
  move_case mc = particles(1, 0.5, 2.0, 10);
  std::mt19937_64 rng(10);
  std::uniform_real_distribution<double> near(-0.5, 0.0);
  mc.n = 8 * 4096 + 100;
  mc.x.resize(mc.n);
  mc.lw.resize(mc.n);
  for (std::size_t i = 0; i < mc.n; ++i) {
    mc.x[i] = 0.5 + 4.0 * near(rng);
    mc.lw[i] = i % 256 == 0 || i % 256 == 3 ? near(rng) : -inf;
  }
  mc.fs.clear();
  mc.ancestors.clear();
  check<bpf::linear_gaussian_model>(linear_gaussian, mc);
}

TEST(PtxBpfMove, RefusedResamplerCallGathersNothing) {
  move_case mc = particles(2, 0.0, 2.0, 7);
  mc.resample = 1;
  mc.code = 7;  // e.g. a rejection bound below a weight: no ancestors were written
  mc.shift = -0.2;
  mc.jitter = 0.3;
  std::fill(mc.ancestors.begin(), mc.ancestors.end(), 0);
  check<bpf::linear_gaussian_model>(linear_gaussian, mc);
}

TEST(PtxBpfMove, HalfTheThreadsGiveTheSameBits) {  // 16 particles per thread, 8 warps
  move_case mc = particles(2, 0.0, 2.0, 8);
  mc.shift = 0.1;
  mc.truth = {0.0, 0.5, 0.0, 0.0};
  mc.lw[3001] = inf;  // chunk 0 refused, chunk 1 summed
  check<bpf::linear_gaussian_model>(linear_gaussian, mc, 256);
}

}  // namespace
}  // namespace resample
