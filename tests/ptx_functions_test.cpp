// The PTX module on a simulator (support/ptx_interpreter.hpp), on machines without a GPU: its scalar
// device functions against their C++ twins bit for bit:
// Philox4x32-10, the deterministic exp and log, quantise, the order-preserving keys; and its kernels
// (max pass, weight sums, statistics, Philox blocks) against resample::cpu for several grid shapes,
// bad input included. Concurrency and the memory model are the GPU tests.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <utility>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "resample/core/deterministic_math.hpp"
#include "resample/core/estimated_exp.hpp"
#include "resample/core/exact_cdf.hpp"
#include "resample/core/exact_offspring.hpp"
#include "resample/core/metropolis_rule.hpp"
#include "resample/core/options.hpp"
#include "resample/core/philox.hpp"
#include "resample/core/sorted_points.hpp"
#include "resample/cpu/multinomial_sorted.hpp"
#include "resample/cpu/resample.hpp"
#include "resample/cuda/status.hpp"
#include "support/comb_margin_case.hpp"
#include "support/philox_known_answers.hpp"
#include "support/ptx_interpreter.hpp"
#include "support/test_weights.hpp"

#include "look_back_storage.hpp"
#include "module.hpp"

namespace resample {
namespace {

// The module as the driver's JIT gets it: the files joined, each function once.
const test::ptx_interpreter& module() {
  static const test::ptx_interpreter m(ptx::detail::module_text);
  return m;
}

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }
double from_bits(std::uint64_t b) { return std::bit_cast<double>(b); }

/// The kernels' bound_in when there is no rejection bound: a NaN's bits.
const std::uint64_t no_bound = bits(std::numeric_limits<double>::quiet_NaN());

TEST(PtxFunctions, ExpEqualsDeterministicExp) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> xs = {0.0,     -0.0,    -1e-300, -5e-324, -1e-17, -0.5,    -0.6931471805599453, -1.0, -10.0,
                            -700.0,  -708.39, -708.4,  -708.5,  -744.0, -745.13, -745.1332191019412,
                            -745.14, -800.0,  -inf,    std::nextafter(-745.1332191019412, 0.0)};
  std::mt19937_64 rng(20261123);
  std::uniform_real_distribution<double> wide(-750.0, 0.0), narrow(-2.0, 0.0), sub(-745.2, -708.0);
  for (int i = 0; i < 6000; ++i) {
    xs.push_back(wide(rng));
    xs.push_back(narrow(rng));
    xs.push_back(sub(rng));
  }
  for (const double x : xs) {
    const double want = deterministic_exp_nonpositive(x);
    const double got = from_bits(module().call64("resample_exp_nonpositive", {bits(x)}));
    ASSERT_EQ(bits(got), bits(want)) << "x = " << x;
  }
  // the four-lane form: each lane its own x (specials in every lane position, mixed with the rest)
  std::shuffle(xs.begin() + 20, xs.end(), rng);
  for (std::size_t i = 0; i + 4 <= xs.size(); i += 3) {
    const auto got = module().call("resample_exp_nonpositive_x4", {bits(xs[i]), bits(xs[i + 1]), bits(xs[i + 2]), bits(xs[i + 3])});
    for (std::size_t m = 0; m < 4; ++m) {
      double e = 0;
      std::memcpy(&e, got.data() + 8 * m, 8);
      ASSERT_EQ(bits(e), bits(deterministic_exp_nonpositive(xs[i + m]))) << "x = " << xs[i + m] << " in lane " << m;
    }
  }
}

// The comb's estimated weights (written out in comb_from_estimates.ptx): resample::estimated_exp's
// bits, whose error bound comb_estimate_test checks.
TEST(PtxFunctions, EstimatedExpEqualsTheCpp) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> xs = {0.0, -0.0, -1e-300, -0.34657359027997264, -0.5, -1.0, -86.99999999999999, -87.0,
                            std::nextafter(-87.0, -100.0), -100.0, -745.2, -inf,
                            std::numeric_limits<double>::quiet_NaN()};
  std::mt19937_64 rng(20261125);
  std::uniform_real_distribution<double> wide(-90.0, 0.0), narrow(-2.0, 0.0);
  for (int i = 0; i < 10000; ++i) {
    xs.push_back(wide(rng));
    xs.push_back(narrow(rng));
  }
  for (const double x : xs) {
    const double got = from_bits(module().call64("resample_estimated_exp", {bits(x)}));
    ASSERT_EQ(bits(got), bits(estimated_exp(x))) << "d = " << x;
  }
}

TEST(PtxFunctions, LogEqualsDeterministicLog) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> xs = {1.0, 2.0, 0.5, 1.4142135623730951, std::nextafter(1.4142135623730951, 2.0),
                            std::nextafter(1.0, 2.0), std::nextafter(1.0, 0.0), 1e-310, 5e-324, 2.2250738585072014e-308,
                            1.7976931348623157e308, 0.0, -0.0, -1.0, inf, -inf, std::numeric_limits<double>::quiet_NaN(),
                            79228162514264337593543950336.0 /* 2^96 */};
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t b = rng() >> 1;  // any positive pattern: subnormals, normals, inf and NaN
    xs.push_back(from_bits(b));
  }
  std::uniform_real_distribution<double> near_one(0.5, 2.0);
  for (int i = 0; i < 5000; ++i) xs.push_back(near_one(rng));
  for (const double x : xs) {
    const double want = deterministic_log(x);
    const double got = from_bits(module().call64("resample_log", {bits(x)}));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << "x = " << x;
    } else {
      ASSERT_EQ(bits(got), bits(want)) << "x = " << x;
    }
  }
}

TEST(PtxFunctions, QuantiseEqualsTheExactCdfsQuantise) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> ws = {0.0, 1.0, 0.5, 0.1, 5e-324, 1e-300, 2.0e-29, std::nextafter(1.0, 0.0)};
  for (int i = 0; i < 3000; ++i) {
    ws.push_back(unit(rng));
    ws.push_back(std::ldexp(unit(rng), -static_cast<int>(rng() % 120)));
  }
  for (const int fraction : {64, 65, 80, 95, 96}) {
    for (const double w : ws) {
      const u128 want = quantise(w, fraction);
      const auto got = module().call("resample_quantise", {bits(w), static_cast<std::uint64_t>(fraction)});
      std::uint64_t lo = 0, hi = 0;
      std::memcpy(&lo, got.data(), 8);
      std::memcpy(&hi, got.data() + 8, 8);
      ASSERT_EQ(lo, static_cast<std::uint64_t>(want)) << "w = " << w << ", F = " << fraction;
      ASSERT_EQ(hi, static_cast<std::uint64_t>(want >> 64)) << "w = " << w << ", F = " << fraction;
    }
  }
}

TEST(PtxFunctions, PhiloxEqualsRandom123) {
  std::mt19937 rng(3);
  for (const auto& v : test::philox_known_answers) {  // Random123's published outputs
    const auto got = module().call("resample_philox4x32_10", {v.ctr[0], v.ctr[1], v.ctr[2], v.ctr[3], v.key[0], v.key[1]});
    for (int j = 0; j < 4; ++j) {
      std::uint32_t word = 0;
      std::memcpy(&word, got.data() + 4 * j, 4);
      EXPECT_EQ(word, v.out[j]) << "word " << j;
    }
  }
  std::vector<std::array<std::uint32_t, 6>> inputs;
  for (const auto& v : test::philox_known_answers) {  // Random123's outputs through the C++ twin below
    inputs.push_back({v.ctr[0], v.ctr[1], v.ctr[2], v.ctr[3], v.key[0], v.key[1]});
  }
  const auto draw = [&rng] { return static_cast<std::uint32_t>(rng()); };
  for (int i = 0; i < 3000; ++i) inputs.push_back({draw(), draw(), draw(), draw(), draw(), draw()});
  for (const auto& in : inputs) {
    const auto want = philox4x32_10({{in[0], in[1], in[2], in[3]}}, {{in[4], in[5]}});
    std::vector<std::uint64_t> args(in.begin(), in.end());
    const auto got = module().call("resample_philox4x32_10", args);
    for (int j = 0; j < 4; ++j) {
      std::uint32_t word = 0;
      std::memcpy(&word, got.data() + 4 * j, 4);
      ASSERT_EQ(word, want.v[j]) << "word " << j;
    }
  }
}

// The keys order as the doubles do (-0 as +0), and decode to the same double.
TEST(PtxFunctions, OrderKeysPreserveOrderAndRoundTrip) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> xs = {-inf, -1e308, -1.0, -5e-324, -0.0, 0.0, 5e-324, 1.0, 1e308, inf};
  std::uint64_t previous = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const std::uint64_t key = module().call64("resample_order_key", {bits(xs[i])});
    if (i > 0) {
      if (xs[i] == xs[i - 1]) EXPECT_EQ(key, previous) << xs[i];
      else EXPECT_GT(key, previous) << xs[i];
    }
    previous = key;
    const double back = from_bits(module().call64("resample_from_order_key", {key}));
    EXPECT_EQ(bits(back), bits(xs[i] == 0 ? 0.0 : xs[i])) << xs[i];
  }
  EXPECT_EQ(module().call64("resample_order_key", {bits(-inf)}), 0x000FFFFFFFFFFFFFULL)
      << "the kernels compare against the key of -inf as this constant";
}

TEST(PtxFunctions, AShuffleWithoutItsWarpIsAnError) {
  // one thread cannot complete a warp shuffle: the simulator reports the deadlock
  EXPECT_THROW((void)module().call("resample_warp_sum_u128", {1, 0}), std::runtime_error);
}

// ---------------------------------------------------------------------------------------------
// The kernels, simulated (blocks one after another, threads up to their next barrier or shuffle).

struct simulated_statistics {
  cuda::device_status status;
  double result = 0, ess = 0;
};

// What src/ptx/statistics.cpp enqueues, on the simulator: max pass, weight sums, finish; `grid`
// and `threads` as given (the host uses up to 1024 blocks of 256, and one block of 1024).
template <class T>
simulated_statistics simulate_statistics(const std::vector<T>& lw, unsigned grid, unsigned threads,
                                         std::uint32_t wanted = 3) {
  test::ptx_interpreter sim(ptx::detail::module_text);
  const std::uint64_t weights = sim.alloc_copy(lw);
  const std::uint64_t status = sim.alloc(sizeof(cuda::device_status));
  const std::uint64_t sums = sim.alloc(16 * grid), squares = (wanted & 2) ? sim.alloc(16 * grid) : 0;
  const std::uint64_t out = sim.alloc(16);
  const double sentinel = -12345.0;
  sim.write(out, sentinel);
  sim.write(out + 8, sentinel);
  const std::uint64_t n = lw.size(), is_double = sizeof(T) == 8;
  const auto fraction = static_cast<std::uint64_t>(fraction_bits(n));
  sim.launch("resample_max_pass", grid, threads, {weights, n, is_double, status, no_bound});
  sim.launch("resample_weight_sums", grid, threads, {weights, n, is_double, fraction, status, sums, squares});
  sim.launch("resample_weight_statistics", 1, 1024,
             {weights, n, is_double, fraction, status, sums, squares, grid, wanted, out, (wanted == 3) ? out + 8 : 0,
              no_bound, bits(0.01), 0, 0});
  simulated_statistics r;
  r.status = sim.read<cuda::device_status>(status);
  r.result = sim.read<double>(out);
  r.ess = sim.read<double>(out + 8);
  return r;
}

TEST(PtxKernels, StatisticsEqualCpuForAnyGridShape) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{33}, std::size_t{700}, std::size_t{3001}}) {
    const auto lw = test::log_weights(n, 3.0, static_cast<unsigned>(n) + 1, n > 2);
    const std::vector<float> lwf(lw.begin(), lw.end());
    const auto want = cpu::weight_statistics(cpu::serial{}, std::span<const double>(lw));
    const auto want_f = cpu::weight_statistics(cpu::serial{}, std::span<const float>(lwf));
    for (const auto& [grid, threads] : {std::pair{1u, 256u}, std::pair{3u, 64u}, std::pair{5u, 32u}}) {
      const auto got = simulate_statistics(lw, grid, threads);
      ASSERT_EQ(got.status.code, 0) << "N = " << n;
      EXPECT_EQ(got.result, want.log_sum_exp) << "N = " << n << ", grid " << grid << " x " << threads;
      EXPECT_EQ(got.ess, want.ess) << "N = " << n << ", grid " << grid << " x " << threads;
      EXPECT_EQ(got.status.result, want.log_sum_exp);
      EXPECT_EQ(got.status.fraction, fraction_bits(n));
      const auto got_f = simulate_statistics(lwf, grid, threads);
      EXPECT_EQ(got_f.result, want_f.log_sum_exp) << "float, N = " << n;
      EXPECT_EQ(got_f.ess, want_f.ess) << "float, N = " << n;
    }
  }
  const auto lw = test::log_weights(500, 1.0, 9);  // the single-statistic forms
  EXPECT_EQ(simulate_statistics(lw, 2, 64, 1).result, cpu::log_sum_exp(cpu::serial{}, std::span<const double>(lw)));
  EXPECT_EQ(simulate_statistics(lw, 2, 64, 2).result,
            cpu::effective_sample_size(cpu::serial{}, std::span<const double>(lw)));
}

TEST(PtxKernels, BadInputGivesTheCpusVerdictAndNoResult) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  auto lw = test::log_weights(900, 1.0, 4);
  lw[611] = inf;
  lw[377] = nan;
  lw[805] = nan;
  auto got = simulate_statistics(lw, 3, 64);
  EXPECT_EQ(got.status.code, static_cast<int>(cuda::status_code::bad_log_weight));
  EXPECT_EQ(got.status.index, 377u);
  EXPECT_TRUE(std::isnan(got.status.value));
  EXPECT_EQ(got.result, -12345.0) << "a result was written for bad input";
  lw[377] = 1.0;
  got = simulate_statistics(lw, 3, 64);
  EXPECT_EQ(got.status.index, 611u);
  EXPECT_EQ(got.status.value, inf);
  got = simulate_statistics(std::vector<float>(100, -std::numeric_limits<float>::infinity()), 2, 32);
  EXPECT_EQ(got.status.code, static_cast<int>(cuda::status_code::all_weights_zero));
  EXPECT_EQ(got.ess, -12345.0);
}

TEST(PtxKernels, PhiloxBlocksKernel) {
  test::ptx_interpreter sim(ptx::detail::module_text);
  const std::uint64_t count = 100, first = 0xFFFFFFF0ULL;  // the index's high word changes midway
  const std::uint64_t out = sim.alloc(16 * 128);
  sim.launch("resample_philox_blocks", 2, 64, {5, 6, first, count, 7, 2, out});
  for (std::uint64_t i = 0; i < 128; ++i) {
    const std::uint64_t index = first + i;
    const auto want = philox4x32_10({{static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32), 7, 2}},
                                    {{5, 6}});
    for (int j = 0; j < 4; ++j) {
      const auto got = sim.read<std::uint32_t>(out + 16 * i + 4 * static_cast<std::uint64_t>(j));
      if (i < count) {
        ASSERT_EQ(got, want.v[j]) << "i = " << i;
      } else {
        ASSERT_EQ(got, 0u) << "wrote beyond count at i = " << i;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The combs: the comb from estimated weights (ptx/comb_from_estimates.ptx; systematic, stratified,
// multinomial-sorted) after the tile sums and the finishing block, as src/ptx/ancestors.cpp
// enqueues them, and the look-back comb (ptx/comb_look_back.ptx) after the statistics kernels,
// with `threads` per block (the host uses 256: tiles of 2048; smaller blocks give many tiles from
// few particles, so the tile boundaries fall everywhere and the look-back crosses windows of 32).

/// A call's opening (ptx/open_call.ptx) on the simulator, for a status allocated alone: the step,
/// systematic's U and, with `gate` (a device int; 0: none), the gate into the status; with
/// `given_max` (a device double; 0: none), options::device_max_log_weight's max.
void simulate_open_call(test::ptx_interpreter& sim, std::uint64_t status, std::uint32_t step, key k,
                        std::uint64_t gate = 0, bool fast_exp = false, std::uint64_t given_max = 0) {
  sim.launch("resample_open_call", 2, 32,
             {status, sizeof(cuda::device_status) / 4, gate, 0, step, k.seed, k.stream, fast_exp ? 1u : 0u,
              given_max});
}

/// The opening and the summary every resampler starts with, on the simulator (max pass, weight
/// sums over `grid` blocks, the finishing block; weight_summary.hpp): the status then holds the
/// verdict, max lw, F, Q, the step and U.
void simulate_summary(test::ptx_interpreter& sim, std::uint64_t weights, std::uint64_t n, std::uint64_t is_double,
                      std::uint64_t status, unsigned grid, std::uint32_t step, key k, bool fast_exp = false) {
  simulate_open_call(sim, status, step, k, 0, fast_exp);
  const std::uint64_t sums = sim.alloc(16 * grid);
  const auto fraction = static_cast<std::uint64_t>(fraction_bits(n));
  sim.launch("resample_max_pass", grid, 64, {weights, n, is_double, status, no_bound});
  sim.launch("resample_weight_sums", grid, 64, {weights, n, is_double, fraction, status, sums, 0});
  sim.launch("resample_weight_statistics", 1, 64,
             {weights, n, is_double, fraction, status, sums, 0, grid, 0, 0, 0, no_bound, bits(0.01), 0, 0});
}

/// Multinomial-sorted's points per stratum (ptx/sorted_points.ptx) as src/ptx/ancestors.cpp
/// enqueues them, on the simulator: level 1 over `rows` blocks (any number gives the same counts),
/// the column sums with the last block's scan (256 threads a block, as the scan needs), level 2;
/// returns the address of P_0 .. P_B. The step is the one the call's opening wrote into the status,
/// given as the argument or, with `step_on_device`, as a device word (options::device_step) with
/// a wrong argument beside it. The column sums' count of blocks done starts as garbage: level 1
/// zeroes it.
std::uint64_t simulate_points(test::ptx_interpreter& sim, std::uint64_t n, std::uint64_t status, key k,
                              unsigned threads, unsigned rows = 3, bool step_on_device = false) {
  const sorted_points layout(n);
  const std::uint64_t G = layout.super_bins();
  const std::uint64_t row_counts = sim.alloc(4 * rows * G), super_count = sim.alloc(4 * G);
  const std::uint64_t super_before = sim.alloc(4 * G);
  const std::uint64_t points = sim.alloc_copy(std::vector<std::uint32_t>(layout.strata() + 1, 0xDEADu));
  const std::uint64_t finished = sim.alloc_copy(std::vector<std::uint32_t>{0xDEADu});
  const std::uint32_t step = sim.read<std::uint32_t>(status + 144);
  const std::uint64_t step_at = step_on_device ? sim.alloc_copy(std::vector<std::uint32_t>{step}) : 0;
  const std::uint64_t step_argument = step_on_device ? step + 1 : step;
  sim.launch("resample_points_level1", rows, threads,
             {n, status, k.seed, k.stream, step_at, step_argument, row_counts, finished});
  sim.launch("resample_points_super_bin_sums", static_cast<unsigned>((G + 255) / 256), 256,
             {n, status, row_counts, rows, super_count, super_before, finished});
  sim.launch("resample_points_level2", static_cast<unsigned>(G), threads,
             {n, status, k.seed, k.stream, super_count, super_before, points});
  return points;
}

struct simulated_comb {
  cuda::device_status status;
  std::vector<std::int64_t> a;
  std::size_t not_stored_once = 0;  ///< slots of a stored twice or never (where counted)
};

/// The slots of `count` items of `bytes` each from `a` that were not stored exactly once (every
/// byte once), on a simulator that counted them (ptx_interpreter::count_stores).
std::size_t slots_not_stored_once(const test::ptx_interpreter& sim, std::uint64_t a, std::size_t count,
                                  std::size_t bytes) {
  const auto& stores = sim.stores_to(a);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < count; ++i) {
    bool once = true;
    for (std::size_t b = 0; b < bytes; ++b) once = once && stores[i * bytes + b] == 1;
    wrong += once ? 0 : 1;
  }
  return wrong;
}

/// lw copied to the simulator `lead` items into its allocation (lead > 0: lw not 16-byte aligned,
/// so the kernels' per-item loads); returns lw's address.
template <class T>
std::uint64_t alloc_log_weights(test::ptx_interpreter& sim, const std::vector<T>& lw, std::size_t lead) {
  std::vector<T> led(lead + lw.size(), T{0});
  std::copy(lw.begin(), lw.end(), led.begin() + static_cast<std::ptrdiff_t>(lead));
  return sim.alloc_copy(led) + lead * sizeof(T);
}

/// The status and the n items at a after a comb kernel, and (a good verdict) the slots of a not
/// stored exactly once (a counted by count_stores).
template <class Index>
simulated_comb read_comb(const test::ptx_interpreter& sim, std::uint64_t status, std::uint64_t a, std::uint64_t n) {
  simulated_comb r;
  r.status = sim.read<cuda::device_status>(status);
  for (std::uint64_t i = 0; i < n; ++i) r.a.push_back(sim.read<Index>(a + i * sizeof(Index)));
  if (r.status.code == 0) r.not_stored_once = slots_not_stored_once(sim, a, n, sizeof(Index));
  return r;
}

/// A comb's ancestors (its verdict good, each slot stored once) against the CPU's.
template <class Index>
void expect_ancestors_equal(const simulated_comb& got, const std::vector<Index>& want, const std::string& what) {
  ASSERT_EQ(got.status.code, 0) << what;
  EXPECT_EQ(got.not_stored_once, 0u) << what << ": ancestors stored twice or never (two warps racing for a slot)";
  std::size_t differ = 0, first = want.size();
  for (std::size_t j = 0; j < want.size(); ++j) {
    if (got.a[j] != static_cast<std::int64_t>(want[j])) {
      ++differ;
      first = std::min(first, j);
    }
  }
  EXPECT_EQ(differ, 0u) << what << ": " << differ << " ancestors differ from the CPU's, the first at " << first;
}

/// What the comb kernel writes (its form_in, src/ptx/ancestors.cpp).
enum class comb_form : std::uint64_t { ancestors = 0, offspring = 1, cumulative = 2 };

/// The tile offsets that the summary by tiles leaves (device addresses, {lo, hi} pairs).
struct simulated_tile_summary {
  std::uint64_t tiles, offsets, warp_offsets;
};

/// The summary by tiles after the call's opening, as src/ptx/statistics.cpp enqueues it for the
/// comb from estimates and multinomial's table, on the simulator: the max pass, the tile sums with
/// each warp's C (ptx/tile_sums.ptx) on tiles of 8 `threads`, the finishing block writing each
/// tile's C (on 32 threads, so that from 257 tiles its scan carries across rounds).
simulated_tile_summary simulate_tile_summary(test::ptx_interpreter& sim, std::uint64_t weights, std::uint64_t n,
                                             std::uint64_t is_double, std::uint64_t status, unsigned threads,
                                             bool max_given = false) {
  const std::uint64_t tiles = (n + 8 * threads - 1) / (8 * threads), warps = threads / 32;
  const std::uint64_t sums = sim.alloc(16 * tiles), offsets = sim.alloc(16 * tiles);
  const std::uint64_t warp_offsets = sim.alloc(16 * tiles * warps);
  const auto fraction = static_cast<std::uint64_t>(fraction_bits(n));
  if (!max_given) sim.launch("resample_max_pass", 3, 64, {weights, n, is_double, status, no_bound});
  sim.launch("resample_tile_sums", static_cast<unsigned>(tiles), threads,
             {weights, n, is_double, fraction, status, sums, warp_offsets});
  sim.launch("resample_weight_statistics", 1, 32,
             {weights, n, is_double, fraction, status, sums, 0, tiles, 0, 0, 0, no_bound, bits(0.01), 0, offsets});
  return {tiles, offsets, warp_offsets};
}

/// Systematic, stratified and multinomial-sorted after the call's opening as src/ptx/ancestors.cpp
/// enqueues them, on the simulator: the summary by tiles (simulate_tile_summary),
/// multinomial-sorted's points per stratum, then the comb from estimated weights
/// (ptx/comb_from_estimates.ptx) on tiles of 8 `threads`, writing `form` to `a`.
void run_comb_from_estimates(test::ptx_interpreter& sim, std::uint64_t weights, std::uint64_t n,
                             std::uint64_t is_double, std::uint64_t index64, scheme s, std::uint64_t status, key k,
                             unsigned threads, std::uint64_t a, comb_form form = comb_form::ancestors) {
  const auto summary = simulate_tile_summary(sim, weights, n, is_double, status, threads);
  const bool sorted = s == scheme::multinomial_sorted;
  const std::uint64_t points = sorted ? simulate_points(sim, n, status, k, threads) : 0;
  const std::uint64_t comb_scheme = s == scheme::stratified ? 1 : sorted ? 2 : 0;
  sim.launch("resample_comb_from_estimates", static_cast<unsigned>(summary.tiles), threads,
             {weights, n, is_double, index64, comb_scheme, status, summary.offsets, summary.warp_offsets, k.seed,
              k.stream, a, static_cast<std::uint64_t>(form), points});
}

/// The comb the host runs for systematic, stratified and multinomial-sorted: the opening, then
/// run_comb_from_estimates; the status and what the comb wrote. lead: items before lw in its
/// allocation, so that lw is not 16-byte aligned (the comb's per-item loads).
template <class T, class Index>
simulated_comb simulate_comb(const std::vector<T>& lw, scheme s, key k, std::uint32_t step, unsigned threads,
                             comb_form form = comb_form::ancestors, bool fast_exp = false, std::size_t lead = 0) {
  test::ptx_interpreter sim(ptx::detail::module_text);
  const std::uint64_t n = lw.size(), is_double = sizeof(T) == 8, index64 = sizeof(Index) == 8;
  const std::uint64_t weights = alloc_log_weights(sim, lw, lead);
  const std::uint64_t status = sim.alloc(sizeof(cuda::device_status));
  const std::uint64_t a = sim.alloc_copy(std::vector<Index>(n, Index{-7}));
  simulate_open_call(sim, status, step, k, 0, fast_exp);
  sim.count_stores(a, n * sizeof(Index));
  run_comb_from_estimates(sim, weights, n, is_double, index64, s, status, k, threads, a, form);
  return read_comb<Index>(sim, status, a, n);
}

/// expect_comb_equals_cpu's key, which the margin tests' cases must be found for.
constexpr key comb_test_key{11, 3};

/// The comb's ancestors against the CPU's, key comb_test_key; lead as for simulate_comb.
template <class T, class Index>
void expect_comb_equals_cpu(const std::vector<T>& lw, scheme s, std::uint32_t step, unsigned threads,
                            const std::string& what, std::size_t lead = 0) {
  const key k = comb_test_key;
  std::vector<Index> want(lw.size());
  cpu::ancestors(cpu::serial{}, s, std::span<const T>(lw), k, step, std::span<Index>(want));
  expect_ancestors_equal(simulate_comb<T, Index>(lw, s, k, step, threads, comb_form::ancestors, false, lead), want,
                         what);
}

// The comb's margin covers its estimated weights' error (2 eps per unit of r past the run's exact
// start, eps = 2^-31): on weights and a step where a point lies between a particle's estimate and
// its true r (support/comb_margin_case.hpp), the kernel must not decide that particle from the
// estimate. A slope of 0 in comb_from_estimates.ptx fails this test.
TEST(PtxKernels, CombMarginCoversTheEstimatedWeightsError) {
  const auto c = test::find_comb_margin_case(12288, comb_test_key);
  expect_comb_equals_cpu<double, std::int32_t>(c.lw, scheme::systematic, c.step, 64,
                                               "step " + std::to_string(c.step) + ", particle " +
                                                   std::to_string(c.particle));
}

// The same for multinomial-sorted's points: a point of a particle's stratum between its estimated
// and its true r (find_sorted_margin_case), the estimate above r and below it. Each of these fails
// it: the margin left out of resample_sorted_stratum_from_estimate's lo (above) or hi (below), a
// slope of 0, and a comb that does not send a point within [lo, hi] to the exact products
// (resample_sorted_points_in_scratch's or the rerun's near dropped: below).
TEST(PtxKernels, SortedMarginCoversTheEstimatedWeightsError) {
  for (const bool above : {true, false}) {
    const auto c = test::find_sorted_margin_case(12288, comb_test_key, above);
    expect_comb_equals_cpu<double, std::int32_t>(c.lw, scheme::multinomial_sorted, c.step, 64,
                                                 std::string(above ? "estimate above r" : "estimate below r") +
                                                     ", step " + std::to_string(c.step) + ", particle " +
                                                     std::to_string(c.particle));
  }
}

/// The schemes of the comb kernel.
constexpr std::array comb_schemes = {scheme::systematic, scheme::stratified, scheme::multinomial_sorted};

TEST(PtxKernels, CombSchemesEqualCpuAcrossTilesAndWindows) {
  for (const scheme s : comb_schemes) {
    const std::string name(resample::name(s));
    // N = 1; one partial tile; 40 tiles of 256 (each tile's and each warp's exact C from the tile
    // sums and the finishing block)
    for (const std::size_t n : {std::size_t{1}, std::size_t{77}, std::size_t{10000}}) {
      const auto lw = test::log_weights(n, 2.0, static_cast<unsigned>(n) + 5, n > 2);
      expect_comb_equals_cpu<double, std::int32_t>(lw, s, 4, 32, name + " N = " + std::to_string(n));
    }
    const auto lw = test::log_weights(3000, 4.0, 8);
    const std::vector<float> lwf(lw.begin(), lw.end());
    expect_comb_equals_cpu<float, std::int64_t>(lwf, s, 9, 64, name + " float / int64");
  }
}

TEST(PtxKernels, CombFromEstimatesLoadsRowsPartOrUnaligned) {
  // The comb loads a thread's 8 log-weights by 16-byte loads when all lie below N and lw is 16-byte
  // aligned, one by one otherwise: N = 8 m + 7 leaves a thread with 7 items, and lw one item past an
  // aligned address sends every thread to the per-item loads, for floats and doubles.
  const auto lw = test::log_weights(3007, 3.0, 12);
  const std::vector<float> lwf(lw.begin(), lw.end());
  for (const scheme s : {scheme::systematic, scheme::stratified}) {
    for (const std::size_t lead : {std::size_t{0}, std::size_t{1}}) {
      const std::string what = std::string(resample::name(s)) + ", lead " + std::to_string(lead);
      expect_comb_equals_cpu<double, std::int32_t>(lw, s, 2, 64, what + ", double", lead);
      expect_comb_equals_cpu<float, std::int32_t>(lwf, s, 2, 64, what + ", float", lead);
    }
  }
}

TEST(PtxKernels, CombWarpWritesItsAncestorsWindowByWindow) {
  // Code 8 by each warp for its own particles (tiles whose offspring fit 16 slots a thread), in
  // windows of 384 slots: on tiles of 512 (64 threads), one warp's 256 particles weigh 3.6 or 2.2
  // times the others', so that it owns about 700 or 490 offspring (two windows) while its tile owns
  // about 890 or 710 of the 1024 that fit; the warps after it start their runs where it ends. The
  // heavy warp is the tile's first (its runs start at 0, a 16-byte aligned slot) or its second,
  // whose runs start at an odd O (its first window from 1 or 3 slots before it: `lead`).
  const key k{11, 3};
  for (const std::size_t warp_begin : {std::size_t{0}, std::size_t{256}}) {
    for (const double heavy : {std::log(3.6), std::log(2.2)}) {
      auto lw = test::log_weights(2048, 0.3, 21);
      for (std::size_t i = warp_begin; i < warp_begin + 256; ++i) lw[i] += heavy;
      for (const scheme s : {scheme::systematic, scheme::stratified}) {
        const std::string what = std::string(resample::name(s)) + ", particles " + std::to_string(warp_begin) +
                                 " .. +255 weighing x" + std::to_string(std::exp(heavy));
        std::vector<std::int32_t> O(lw.size());
        cpu::cumulative_offspring(cpu::serial{}, s, std::span<const double>(lw), k, 6, std::span<std::int32_t>(O));
        const std::int32_t before = warp_begin == 0 ? 0 : O[warp_begin - 1];
        ASSERT_GT(O[warp_begin + 255] - before, 384) << what << ": the warp's offspring take more than one window";
        ASSERT_LE(O[511], 1024) << what << ": the first tile's offspring fit its stage";
        if (warp_begin != 0) {
          ASSERT_EQ(before % 2, 1) << what << ": the warp's runs start at an odd O";
        }
        expect_comb_equals_cpu<double, std::int32_t>(lw, s, 6, 64, what);
        expect_comb_equals_cpu<double, std::int64_t>(lw, s, 6, 64, what + ", int64");
      }
    }
  }
}

TEST(PtxKernels, CombNearIntegersHeavyTilesAndZeros) {
  for (const scheme s : comb_schemes) {
    const std::string name(resample::name(s));
    // equal weights: every r on an integer, every particle decided by the exact products (tiles of
    // two warps, so that the second warp's exact C starts from the tile sums' warp offset)
    expect_comb_equals_cpu<double, std::int32_t>(std::vector<double>(600, -2.5), s, 1, 64, name + " equal weights");
    // N a power of two: multinomial-sorted's B = N, so there too every r is an integer
    expect_comb_equals_cpu<double, std::int32_t>(std::vector<double>(512, 0.5), s, 3, 32, name + " 512 equal weights");
    // one particle with almost all the weight: its tile's offspring exceed the stage (the binary
    // search writes them), the other tiles have none
    auto heavy = test::log_weights(1500, 1.0, 3);
    heavy[700] = 40.0;
    expect_comb_equals_cpu<double, std::int32_t>(heavy, s, 2, 32, name + " one heavy particle");
    // dyadic weights (N w / W exact), zeros included
    std::vector<double> dyadic(1024);
    for (std::size_t i = 0; i < dyadic.size(); ++i) {
      dyadic[i] = i % 5 == 0 ? -std::numeric_limits<double>::infinity() : -std::log(static_cast<double>(1 << (i % 4)));
    }
    expect_comb_equals_cpu<double, std::int64_t>(dyadic, s, 7, 64, name + " dyadic with zeros");
  }
}

// Systematic with U = 0 (written into the status after the opening: no key and step are known to
// give it). On equal weights every r - u is an integer, so every warp is undecided from its
// estimates and every particle of the exact rerun goes to the products of exact_comb.ptx. With
// particle 0 at 0 and the others at -1e-9 (whose estimates round to 1), each r lies 1e-9 (N - 1 - i)
// / N above an integer and its estimate further above it: a comb that trusted an estimate with an
// integer inside its margin would count one offspring too few, and a rerun that lost low words of
// C would put r below the integer. The CPU's answer from the same comb with U = 0 (comb_ancestors,
// exact_comb::systematic).
TEST(PtxKernels, SystematicOnTheIntegersTakesTheExactProducts) {
  constexpr unsigned threads = 64;
  for (const std::size_t n : {std::size_t{600}, std::size_t{1031}, std::size_t{1500}}) {
    std::vector<double> lw(n, 0.75);
    if (n == 1500) {
      std::fill(lw.begin(), lw.end(), -1e-9);
      lw[0] = 0;
    }
    const auto summary = cpu::summarise(cpu::serial{}, std::span<const double>(lw));
    const exact_comb comb(summary.total, n);
    std::vector<std::int32_t> want(n);
    cpu::comb_ancestors(cpu::serial{}, std::span<const double>(lw), summary, std::span<std::int32_t>(want),
                        [&](u128 C) { return comb.systematic(C, 0); });
    test::ptx_interpreter sim(ptx::detail::module_text);
    const std::uint64_t weights = sim.alloc_copy(lw), status = sim.alloc(sizeof(cuda::device_status));
    const std::uint64_t a = sim.alloc_copy(std::vector<std::int32_t>(n, -7));
    const key k{3, 4};
    simulate_open_call(sim, status, 1, k);
    sim.write<std::uint32_t>(status + offsetof(cuda::device_status, shared_word), 0);  // U = 0
    run_comb_from_estimates(sim, weights, n, 1, 0, scheme::systematic, status, k, threads, a);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(sim.read<std::int32_t>(a + 4 * i), want[i]) << "N = " << n << ", i = " << i;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Systematic and stratified ancestors in one block (ptx/comb_one_block.ptx), the whole call in one
// launch as src/ptx/ancestors.cpp enqueues it for N <= 4096: 8 particles a thread, a warp per 256.

/// What the one-block call might meet besides lw: a gate (a device int) and a device step.
struct one_block_extras {
  std::optional<std::int32_t> gate;
  std::optional<std::uint32_t> device_step;
  bool fast_exp = false;
  std::size_t lead = 0;  ///< items before lw in its allocation (lw not 16-byte aligned)
  comb_form form = comb_form::ancestors;
};

/// The one-block kernel on the simulator, its status first filled with 0xEE bytes (the kernel's
/// opening zeroes it) and a with -7: the status and what it wrote (x.form).
template <class T, class Index>
simulated_comb simulate_comb_one_block(const std::vector<T>& lw, scheme s, key k, std::uint32_t step,
                                       const one_block_extras& x = {}) {
  test::ptx_interpreter sim(ptx::detail::module_text);
  const std::uint64_t n = lw.size(), is_double = sizeof(T) == 8, index64 = sizeof(Index) == 8;
  const std::uint64_t weights = alloc_log_weights(sim, lw, x.lead);
  const std::uint64_t status = sim.alloc_copy(std::vector<std::uint8_t>(sizeof(cuda::device_status), 0xEE));
  const std::uint64_t a = sim.alloc_copy(std::vector<Index>(n, Index{-7}));
  const std::uint64_t gate_at = x.gate ? sim.alloc_copy(std::vector<std::int32_t>{*x.gate}) : 0;
  const std::uint64_t step_at = x.device_step ? sim.alloc_copy(std::vector<std::uint32_t>{*x.device_step}) : 0;
  const auto threads = static_cast<unsigned>(32 * ((n + 255) / 256));
  sim.count_stores(a, n * sizeof(Index));
  sim.launch("resample_comb_one_block", 1, threads,
             {weights, n, is_double, index64, s == scheme::stratified ? 1u : 0u, status, gate_at, step_at, step,
              k.seed, k.stream, x.fast_exp ? 1u : 0u, a, static_cast<std::uint64_t>(x.form)});
  return read_comb<Index>(sim, status, a, n);
}

/// The one-block call's ancestors against the CPU's (key {11, 3}, `step`, which x.device_step must
/// equal), and its status against the CPU's summary: the verdict, F, Q, max lw, N, the step, U and
/// the exp mode.
template <class T, class Index>
void expect_one_block_equals_cpu(const std::vector<T>& lw, scheme s, std::uint32_t step, const std::string& what,
                                 const one_block_extras& x = {}) {
  const key k{11, 3};
  std::vector<Index> want(lw.size());
  cpu::ancestors(cpu::serial{}, s, std::span<const T>(lw), k, step, std::span<Index>(want));
  // with a device step, the argument is another step, which the device's must override
  const auto got = simulate_comb_one_block<T, Index>(lw, s, k, x.device_step ? step ^ 0x5555u : step, x);
  expect_ancestors_equal(got, want, what);
  if (got.status.code != 0) return;
  const auto summary = cpu::summarise(cpu::serial{}, std::span<const T>(lw));
  EXPECT_EQ(got.status.fraction, fraction_bits(lw.size())) << what;
  EXPECT_TRUE(got.status.total == summary.total) << what << ": Q";
  EXPECT_EQ(bits(got.status.max_log_w), bits(static_cast<double>(summary.max_log_w))) << what;
  EXPECT_EQ(got.status.n, lw.size()) << what;
  EXPECT_EQ(got.status.step, step) << what;
  EXPECT_EQ(got.status.shared_word, philox_stream(k, shared_index, step).next()) << what << ": U";
  EXPECT_EQ(got.status.exp_mode, 0u) << what;
  EXPECT_EQ(got.status.first_bad, 0u) << what << ": a status word the opening did not zero";
  EXPECT_EQ(got.status.heavy_runs_ready, 0u) << what << ": a status word the opening did not zero";
}

TEST(PtxKernels, CombOneBlockEqualsCpuForEveryBlockShape) {
  // one warp with one particle, part of a thread, part of a warp, whole warps, a partial last
  // warp, the largest N (16 warps); zeros from N = 3 on; float / int64 and double / int32
  for (const scheme s : {scheme::systematic, scheme::stratified}) {
    for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{33}, std::size_t{256},
                                std::size_t{257}, std::size_t{1000}, std::size_t{2049}, std::size_t{4096}}) {
      const std::string what = std::string(resample::name(s)) + " N = " + std::to_string(n);
      const auto lw = test::log_weights(n, 2.0, static_cast<unsigned>(n) + 40, n > 2);
      expect_one_block_equals_cpu<double, std::int32_t>(lw, s, 5, what);
      const std::vector<float> lwf(lw.begin(), lw.end());
      expect_one_block_equals_cpu<float, std::int64_t>(lwf, s, 6, what + ", float / int64");
    }
  }
}

TEST(PtxKernels, CombOneBlockLoadsUnalignedAndWritesHeavyRunsWindowByWindow) {
  // lw one item past an aligned address (every thread's per-item loads); one particle holding almost
  // all 4096 offspring (its warp writes them in windows of 384, from an aligned or an odd O), first,
  // in the middle or last; equal weights (every r an integer)
  const auto lw = test::log_weights(1003, 3.0, 14);
  const std::vector<float> lwf(lw.begin(), lw.end());
  one_block_extras unaligned;
  unaligned.lead = 1;
  for (const scheme s : {scheme::systematic, scheme::stratified}) {
    const std::string name(resample::name(s));
    expect_one_block_equals_cpu<double, std::int32_t>(lw, s, 2, name + ", lead 1, double", unaligned);
    expect_one_block_equals_cpu<float, std::int32_t>(lwf, s, 2, name + ", lead 1, float", unaligned);
    for (const std::size_t heavy : {std::size_t{0}, std::size_t{2000}, std::size_t{4095}}) {
      auto skewed = test::log_weights(4096, 1.0, 15);
      skewed[heavy] = 30.0;
      expect_one_block_equals_cpu<double, std::int32_t>(skewed, s, 3, name + ", heavy particle " + std::to_string(heavy));
    }
    expect_one_block_equals_cpu<double, std::int64_t>(std::vector<double>(4096, -1.5), s, 4, name + ", equal weights");
  }
}

/// A comb's offspring (got_o) and cumulative offspring (got_O), each slot stored once, against the
/// CPU's o and O.
void expect_forms_equal(const simulated_comb& got_o, const simulated_comb& got_O, const std::vector<std::int32_t>& o,
                        const std::vector<std::int32_t>& O, const std::string& name) {
  ASSERT_EQ(got_o.status.code, 0) << name;
  EXPECT_EQ(got_o.not_stored_once, 0u) << name << ": offspring stored twice or never";
  EXPECT_EQ(got_O.not_stored_once, 0u) << name << ": cumulative offspring stored twice or never";
  for (std::size_t i = 0; i < o.size(); ++i) {
    ASSERT_EQ(got_o.a[i], o[i]) << name << ": offspring at " << i;
    ASSERT_EQ(got_O.a[i], O[i]) << name << ": cumulative offspring at " << i;
  }
}

TEST(PtxKernels, OffspringAndCumulativeFormsEqualCpu) {
  // the counts written from the comb itself: o^i = O^i - O^(i-1) across thread and tile boundaries
  // (the first item of a tile subtracts O before the tile), a heavy particle, zeros, both widths;
  // by the tiled kernels and (systematic, stratified) by the one-block kernel, across its threads
  // and warps up to its largest N
  const key k{11, 3};
  auto heavy = test::log_weights(1500, 1.0, 3);
  heavy[700] = 40.0;
  const std::vector<std::pair<std::string, std::vector<double>>> cases = {
      {"N = 1", test::log_weights(1, 2.0, 6)},
      {"N = 2100 with zeros", test::log_weights(2100, 2.0, 7, true)},
      {"N = 4096", test::log_weights(4096, 3.0, 8)},
      {"one heavy particle", heavy}};
  one_block_extras offspring, cumulative;
  offspring.form = comb_form::offspring;
  cumulative.form = comb_form::cumulative;
  for (const scheme s : comb_schemes) {
    for (const auto& [what, lw] : cases) {
      const std::string name = std::string(resample::name(s)) + " " + what;
      std::vector<std::int32_t> o(lw.size()), O(lw.size());
      cpu::offspring(cpu::serial{}, s, std::span<const double>(lw), k, 5, std::span<std::int32_t>(o));
      cpu::cumulative_offspring(cpu::serial{}, s, std::span<const double>(lw), k, 5, std::span<std::int32_t>(O));
      expect_forms_equal(simulate_comb<double, std::int32_t>(lw, s, k, 5, 32, comb_form::offspring),
                         simulate_comb<double, std::int64_t>(lw, s, k, 5, 64, comb_form::cumulative), o, O, name);
      if (s == scheme::multinomial_sorted) continue;
      expect_forms_equal(simulate_comb_one_block<double, std::int32_t>(lw, s, k, 5, offspring),
                         simulate_comb_one_block<double, std::int64_t>(lw, s, k, 5, cumulative), o, O,
                         name + ", one block");
    }
  }
}

// Systematic with r - U within the margin of an integer: particle p's weight u / (N - u) (u = U
// 2^-32, U the call's) and the last particle's 1, every other weight zero, so that N C_p / Q = u
// to within a few ulp: its estimate decides nothing and the products of exact_comb.ptx do.
TEST(PtxKernels, CombOneBlockSystematicNearAnIntegerTakesTheExactProducts) {
  const key k{11, 3};
  for (const std::uint32_t step : {1u, 2u, 3u}) {
    for (const std::size_t p : {std::size_t{0}, std::size_t{300}, std::size_t{2500}}) {
      constexpr std::size_t n = 3000;
      const double u = std::ldexp(static_cast<double>(philox_stream(k, shared_index, step).next()), -32);
      std::vector<double> lw(n, -std::numeric_limits<double>::infinity());
      lw[p] = std::log(u / (static_cast<double>(n) - u));
      lw[n - 1] = 0;
      const auto C = test::exact_cdf_of(test::exact_weights_of(lw));
      const double r = static_cast<double>(n) * static_cast<double>(C[p]) / static_cast<double>(C.back());
      ASSERT_LT(std::fabs(r - u), static_cast<double>(n) * std::ldexp(1.0, -45)) << "r is not within the margin of u";
      expect_one_block_equals_cpu<double, std::int32_t>(
          lw, scheme::systematic, step, "step " + std::to_string(step) + ", particle " + std::to_string(p));
    }
  }
}

TEST(PtxKernels, CombOneBlockTakesTheDeviceStepAndTheFastExp) {
  const auto lw = test::log_weights(1500, 2.0, 16, true);
  one_block_extras device_step, fast;
  device_step.gate = 1;  // open
  device_step.device_step = 77;
  fast.fast_exp = true;
  for (const scheme s : {scheme::systematic, scheme::stratified}) {
    const std::string name(resample::name(s));
    // the device step over the argument, through an open gate
    expect_one_block_equals_cpu<double, std::int32_t>(lw, s, 77, name + ", device step", device_step);
    // the fast exp: the tiled kernels' bits
    const key k{11, 3};
    const auto tiled = simulate_comb<double, std::int32_t>(lw, s, k, 9, 64, comb_form::ancestors, true);
    const auto one = simulate_comb_one_block<double, std::int32_t>(lw, s, k, 9, fast);
    ASSERT_EQ(one.status.code, 0) << name;
    EXPECT_EQ(one.status.exp_mode, 1u) << name;
    EXPECT_TRUE(one.status.total == tiled.status.total) << name << ": Q of the fast weights";
    EXPECT_EQ(one.a, tiled.a) << name << ": fast exp";
  }
}

TEST(PtxKernels, CombOneBlockReportsBadInputAndWritesNothing) {
  const key k{11, 3};
  auto lw = test::log_weights(3000, 1.0, 17);
  lw[2000] = std::numeric_limits<double>::infinity();
  lw[1234] = std::numeric_limits<double>::quiet_NaN();  // the first bad one is reported
  const std::vector<float> lwf(lw.begin(), lw.end());
  const std::vector<double> zeros(300, -std::numeric_limits<double>::infinity());
  one_block_extras closed;
  closed.gate = 0;
  for (const scheme s : {scheme::systematic, scheme::stratified}) {
    const std::string name(resample::name(s));
    const auto bad = simulate_comb_one_block<double, std::int32_t>(lw, s, k, 1);
    EXPECT_EQ(bad.status.code, static_cast<int>(cuda::status_code::bad_log_weight)) << name;
    EXPECT_EQ(bad.status.index, 1234u) << name;
    EXPECT_TRUE(std::isnan(bad.status.value)) << name;
    auto inf_first = lwf;
    inf_first[17] = std::numeric_limits<float>::infinity();
    const auto bad_float = simulate_comb_one_block<float, std::int64_t>(inf_first, s, k, 1);
    EXPECT_EQ(bad_float.status.code, static_cast<int>(cuda::status_code::bad_log_weight)) << name;
    EXPECT_EQ(bad_float.status.index, 17u) << name;
    EXPECT_EQ(bad_float.status.value, std::numeric_limits<double>::infinity()) << name;
    // two bad items of one thread (1232 .. 1239): the first of them is reported
    auto two_in_a_thread = lw;
    two_in_a_thread[1234] = -std::numeric_limits<double>::infinity();
    two_in_a_thread[1236] = std::numeric_limits<double>::quiet_NaN();
    two_in_a_thread[1235] = std::numeric_limits<double>::infinity();
    const auto bad_pair = simulate_comb_one_block<double, std::int32_t>(two_in_a_thread, s, k, 1);
    EXPECT_EQ(bad_pair.status.code, static_cast<int>(cuda::status_code::bad_log_weight)) << name;
    EXPECT_EQ(bad_pair.status.index, 1235u) << name << ": not the thread's first bad item";
    EXPECT_EQ(bad_pair.status.value, std::numeric_limits<double>::infinity()) << name;
    for (const auto* verdict : {&bad, &bad_pair}) {  // the fields the finishing block writes with a verdict
      EXPECT_EQ(verdict->status.fraction, fraction_bits(3000)) << name;
      EXPECT_EQ(verdict->status.n, 3000u) << name;
      EXPECT_TRUE(std::isnan(verdict->status.bound)) << name << ": no rejection bound";
    }
    const auto zero = simulate_comb_one_block<double, std::int32_t>(zeros, s, k, 1);
    EXPECT_EQ(zero.status.code, static_cast<int>(cuda::status_code::all_weights_zero)) << name;
    const auto shut = simulate_comb_one_block<double, std::int32_t>(test::log_weights(3000, 1.0, 18), s, k, 1, closed);
    EXPECT_EQ(shut.status.code, static_cast<int>(cuda::status_code::skipped)) << name;
    EXPECT_EQ(shut.status.n, 0u) << name << ": a closed gate's status is zero but for its code";
    EXPECT_EQ(zero.status.n, 300u) << name;
    for (const auto* got : {&bad, &bad_float, &bad_pair, &zero, &shut}) {
      for (const auto x : got->a) ASSERT_EQ(x, -7) << name << ": an ancestor was written";
    }
  }
}

// The finishing block's tile offsets (weight_statistics.ptx, offsets_in) for 1 to 700 tiles on 32
// threads (rounds of 256 tiles, so up to three carried), 1,000 and 2,500 on 128 (rounds of 1,024),
// and on more than 8 warps, where the block scan's warp 0 scans the warps' totals: 3,000 on 320
// (10 warps, two rounds), 300 and 9,000 on the host's 1,024 (rounds of 8,192): each the exclusive
// prefix of the tile sums, Q their total.
// options::device_max_log_weight on the PTX backend: open_call.ptx writes the max (its key, the
// flag, the value), the tile sums check it and the finishing block's verdict reads what they found
// (CUDA C's check_given_max and finish_pass). With the largest log-weight handed over, no max pass:
// the same verdict, max, Q and tile offsets as with it, and the same draw; a max below the largest
// names the first log-weight above it; one above, or for floats a double between two floats, or
// +inf, says none equals it (index N); a NaN max names log-weight 0; NaN and +inf come first;
// weights all zero with a max of -inf are reported as such, with a max of 0 as a wrong max. Tiles of
// 256 (32 threads), so that the first offending log-weight lies in a later tile than another.
template <class T>
void expect_given_max_checked() {
  constexpr unsigned threads = 32;
  const std::uint64_t is_double = sizeof(T) == 8;
  const auto base = test::log_weights(1000, 2.0, 17);
  std::vector<T> lw(base.begin(), base.end());
  const std::size_t top = static_cast<std::size_t>(std::max_element(lw.begin(), lw.end()) - lw.begin());
  const double largest = static_cast<double>(lw[top]);
  struct outcome {
    cuda::device_status status;
    std::vector<std::uint64_t> offsets;
  };
  const auto run = [&](const std::vector<T>& x, std::optional<double> given) {
    test::ptx_interpreter sim(ptx::detail::module_text);
    const std::uint64_t weights = sim.alloc_copy(x), status = sim.alloc(sizeof(cuda::device_status));
    const std::uint64_t given_at = given ? sim.alloc_copy(std::vector<double>{*given}) : 0;
    simulate_open_call(sim, status, 3, {5, 6}, 0, false, given_at);
    const auto summary = simulate_tile_summary(sim, weights, x.size(), is_double, status, threads, given.has_value());
    outcome o{sim.read<cuda::device_status>(status), {}};
    for (std::uint64_t t = 0; t < 2 * summary.tiles; ++t) o.offsets.push_back(sim.read<std::uint64_t>(summary.offsets + 8 * t));
    return o;
  };
  const auto with_pass = run(lw, std::nullopt), handed = run(lw, largest);
  ASSERT_EQ(with_pass.status.code, 0);
  EXPECT_EQ(handed.status.code, 0);
  EXPECT_TRUE(handed.status.total == with_pass.status.total);
  EXPECT_EQ(handed.status.max_log_w, with_pass.status.max_log_w);
  EXPECT_EQ(handed.offsets, with_pass.offsets);
  EXPECT_EQ(handed.status.max_is_given, 1u);
  EXPECT_EQ(handed.status.max_given, largest);
  const auto code = [](const outcome& o) { return static_cast<cuda::status_code>(o.status.code); };
  std::size_t first_above = lw.size();  // the first log-weight above a max just below the largest
  const double below = std::nextafter(largest, -INFINITY);
  for (std::size_t i = 0; i < lw.size() && first_above == lw.size(); ++i) {
    if (static_cast<double>(lw[i]) > below) first_above = i;
  }
  const auto low = run(lw, below);
  EXPECT_EQ(code(low), cuda::status_code::max_not_largest);
  EXPECT_EQ(low.status.index, first_above);
  EXPECT_EQ(low.status.value, largest);
  std::vector<double> none_equal = {largest + 1.0, INFINITY};
  if constexpr (sizeof(T) == 4) none_equal.push_back(largest + std::ldexp(std::fabs(largest), -30));
  for (const double m : none_equal) {
    const auto high = run(lw, m);
    EXPECT_EQ(code(high), cuda::status_code::max_not_largest) << m;
    EXPECT_EQ(high.status.index, lw.size()) << m;
  }
  const auto nan_max = run(lw, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(code(nan_max), cuda::status_code::max_not_largest);
  EXPECT_EQ(nan_max.status.index, 0u);
  auto bad = lw;
  bad[700] = std::numeric_limits<T>::quiet_NaN();
  bad[900] = std::numeric_limits<T>::infinity();
  const auto nan_first = run(bad, below);
  EXPECT_EQ(code(nan_first), cuda::status_code::bad_log_weight);
  EXPECT_EQ(nan_first.status.index, 700u);
  const std::vector<T> zero(lw.size(), -std::numeric_limits<T>::infinity());
  EXPECT_EQ(code(run(zero, -INFINITY)), cuda::status_code::all_weights_zero);
  const auto zero_with_0 = run(zero, 0.0);
  EXPECT_EQ(code(zero_with_0), cuda::status_code::max_not_largest);
  EXPECT_EQ(zero_with_0.status.index, lw.size());
}

TEST(PtxKernels, GivenMaxReplacesTheMaxPassAndIsChecked) {
  expect_given_max_checked<float>();
  expect_given_max_checked<double>();
}

TEST(PtxKernels, TileOffsetsAreTheExclusivePrefixAcrossRounds) {
  // Rounds of 8 ntid tiles, each warp's 256 in rows of 32 (warp-striped), on 1, 4, 10 and 32 warps;
  // the sums' low words alternate between 2^64 - small (a carry at every add) and random.
  std::mt19937_64 rng(41);
  for (const auto& [tiles, threads] :
       {std::pair{std::uint64_t{1}, 32u}, std::pair{std::uint64_t{255}, 32u}, std::pair{std::uint64_t{257}, 32u},
        std::pair{std::uint64_t{700}, 32u}, std::pair{std::uint64_t{1000}, 128u}, std::pair{std::uint64_t{2500}, 128u},
        std::pair{std::uint64_t{3000}, 320u}, std::pair{std::uint64_t{300}, 1024u},
        std::pair{std::uint64_t{9000}, 1024u}}) {
    test::ptx_interpreter sim(ptx::detail::module_text);
    const auto lw = test::log_weights(100, 1.0, 5);  // a good verdict from the max pass
    const std::uint64_t weights = sim.alloc_copy(lw), n = lw.size(), status = sim.alloc(sizeof(cuda::device_status));
    std::vector<std::uint64_t> sums(2 * tiles);
    for (std::uint64_t t = 0; t < tiles; ++t) {
      sums[2 * t] = t % 2 == 0 ? ~std::uint64_t{0} - (rng() >> 40) : rng();
      sums[2 * t + 1] = rng() >> 50;
    }
    const std::uint64_t sums_at = sim.alloc_copy(sums), offsets = sim.alloc(16 * tiles);
    simulate_open_call(sim, status, 1, {1, 2});
    sim.launch("resample_max_pass", 1, 64, {weights, n, 1, status, no_bound});
    sim.launch("resample_weight_statistics", 1, threads,
               {weights, n, 1, static_cast<std::uint64_t>(fraction_bits(n)), status, sums_at, 0, tiles, 0, 0, 0,
                no_bound, bits(0.01), 0, offsets});
    u128 C = 0;
    for (std::uint64_t t = 0; t < tiles; ++t) {
      const u128 got = (static_cast<u128>(sim.read<std::uint64_t>(offsets + 16 * t + 8)) << 64) |
                       sim.read<std::uint64_t>(offsets + 16 * t);
      ASSERT_TRUE(got == C) << tiles << " tiles: the offset of tile " << t;
      C += (static_cast<u128>(sums[2 * t + 1]) << 64) | sums[2 * t];
    }
    EXPECT_TRUE(sim.read<cuda::device_status>(status).total == C) << tiles << " tiles: Q";
  }
}

TEST(PtxKernels, LookBackAddsAggregatesAcrossWindows) {
  // In the simulator every earlier tile has finished, so a look-back finds an inclusive prefix at
  // once. Here tile 40 runs again with tiles 1..39 showing only their aggregates (flag 1) and tile
  // 0 its inclusive prefix: the look-back must add 39 aggregates over two windows of 32. Two of
  // the aggregates trade 2^64 + 5, so a lost carry or a tile counted twice or skipped changes C.
  test::ptx_interpreter sim(ptx::detail::module_text);
  constexpr unsigned threads = 32, tile = 8 * threads;
  const std::uint64_t n = 41 * tile + 100, tiles = 42;
  const auto lw = test::log_weights(n, 2.0, 17);
  const std::uint64_t weights = sim.alloc_copy(lw), status = sim.alloc(sizeof(cuda::device_status));
  const std::uint64_t sums = sim.alloc(16 * 2), ticket = sim.alloc(4), flags = sim.alloc(4 * tiles);
  const std::uint64_t aggregates = sim.alloc(16 * tiles), inclusives = sim.alloc(16 * tiles), a = sim.alloc(4 * n);
  const auto fraction = static_cast<std::uint64_t>(fraction_bits(n));
  simulate_open_call(sim, status, 3, {5, 6});
  sim.launch("resample_max_pass", 2, 64, {weights, n, 1, status, no_bound});
  sim.launch("resample_weight_sums", 2, 64, {weights, n, 1, fraction, status, sums, 0});
  sim.launch("resample_weight_statistics", 1, 64,
             {weights, n, 1, fraction, status, sums, 0, 2, 0, 0, 0, no_bound, bits(0.01), 0, 0});
  const key k{5, 6};
  const std::uint32_t step = 3;
  const std::vector<std::uint64_t> args = {weights, n, 1, 0, 0, status, ticket, flags, aggregates, inclusives,
                                           k.seed, k.stream, a, 0};
  sim.launch("resample_comb_look_back", static_cast<unsigned>(tiles), threads, args);
  std::vector<std::int32_t> want(n);
  cpu::ancestors(cpu::serial{}, scheme::systematic, std::span<const double>(lw), k, step, std::span<std::int32_t>(want));
  const auto inclusive_40 = std::pair{sim.read<std::uint64_t>(inclusives + 16 * 40), sim.read<std::uint64_t>(inclusives + 16 * 40 + 8)};
  // rewind: tile 40 again, its predecessors 1..39 back to their aggregates, two of them traded
  for (std::uint64_t t = 1; t < 40; ++t) sim.write<std::uint32_t>(flags + 4 * t, 1);
  sim.write<std::uint32_t>(flags + 4 * 40, 0);
  sim.write<std::uint32_t>(ticket, 40);
  const auto lo3 = sim.read<std::uint64_t>(aggregates + 16 * 3), hi3 = sim.read<std::uint64_t>(aggregates + 16 * 3 + 8);
  const auto lo9 = sim.read<std::uint64_t>(aggregates + 16 * 9), hi9 = sim.read<std::uint64_t>(aggregates + 16 * 9 + 8);
  sim.write<std::uint64_t>(aggregates + 16 * 3, lo3 + 5);  // + 2^64 + 5
  sim.write<std::uint64_t>(aggregates + 16 * 3 + 8, hi3 + 1 + (lo3 + 5 < lo3 ? 1 : 0));
  sim.write<std::uint64_t>(aggregates + 16 * 9, lo9 - 5);  // - 2^64 - 5
  sim.write<std::uint64_t>(aggregates + 16 * 9 + 8, hi9 - 1 - (lo9 < 5 ? 1 : 0));
  for (std::uint64_t j = 0; j < n; ++j) sim.write<std::int32_t>(a + 4 * j, -7);
  sim.launch("resample_comb_look_back", 1, threads, args);
  EXPECT_EQ(sim.read<std::uint32_t>(flags + 4 * 40), 2u);
  EXPECT_EQ(sim.read<std::uint64_t>(inclusives + 16 * 40), inclusive_40.first);
  EXPECT_EQ(sim.read<std::uint64_t>(inclusives + 16 * 40 + 8), inclusive_40.second);
  // tile 40's particles' ancestors, where they are written (O of particles 40 t .. 41 t - 1)
  std::size_t written = 0;
  for (std::uint64_t j = 0; j < n; ++j) {
    const auto got = sim.read<std::int32_t>(a + 4 * j);
    if (got == -7) continue;
    ++written;
    ASSERT_EQ(got, want[j]) << "j = " << j;
    ASSERT_GE(got, 40 * static_cast<std::int32_t>(tile));
    ASSERT_LT(got, 41 * static_cast<std::int32_t>(tile));
  }
  EXPECT_GT(written, 0u);
}

TEST(PtxKernels, CombWritesNothingForBadInput) {
  auto lw = test::log_weights(700, 1.0, 4);
  lw[345] = std::numeric_limits<double>::quiet_NaN();
  for (const scheme s : comb_schemes) {
    const auto got = simulate_comb<double, std::int32_t>(lw, s, {1, 2}, 0, 32);
    EXPECT_EQ(got.status.code, static_cast<int>(cuda::status_code::bad_log_weight));
    EXPECT_EQ(got.status.index, 345u);
    for (const auto x : got.a) ASSERT_EQ(x, -7) << resample::name(s) << ": an ancestor was written for bad input";
  }
}

// Multinomial-sorted with r on its points: N = 64 (B = 64), the cumulative weights put r_i at the
// i-th smallest point (within rounding, far inside the margin), so each particle's points leave the
// estimate undecided and the 192-bit products (resample_comb_sorted_points_exact) decide.
TEST(PtxKernels, MultinomialSortedWithROnItsPointsTakesTheExactProducts) {
  const key k{11, 3};  // expect_comb_equals_cpu's key
  const std::uint32_t step = 8;
  const std::size_t n = 64;
  const sorted_points layout(n);
  const auto P = cpu::points_before_strata(cpu::serial{}, layout, k, step);
  std::vector<double> points;
  for (std::uint64_t K = 0; K < layout.strata(); ++K) {
    for (std::uint64_t t = P[K]; t < P[K + 1]; ++t) {
      points.push_back(static_cast<double>(K) + sorted_points::point_offset(k, step, t) * 0x1p-32);
    }
  }
  std::sort(points.begin(), points.end());
  ASSERT_EQ(points.size(), n);
  std::vector<double> lw(n);
  double before = 0;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    lw[i] = std::log(points[i] - before);
    before = points[i];
  }
  lw[n - 1] = std::log(static_cast<double>(layout.strata()) - before);
  expect_comb_equals_cpu<double, std::int32_t>(lw, scheme::multinomial_sorted, step, 32, "r on the points");
}

// Multinomial-sorted's P_K (ptx/sorted_points.ptx) against resample::cpu::points_before_strata, for
// layouts of one super-bin (N <= 2048) and of several (G = 2, 4, 32), level 1 split over 1, 3 or 11
// blocks, the step as the argument or (11 blocks) as a device word; and a bad verdict writes no P.
TEST(PtxKernels, PointsPerStratumEqualCpu) {
  const key k{21, 4};
  const std::uint32_t step = 6;
  for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{77}, std::size_t{2049}, std::size_t{5000},
                              std::size_t{40000}}) {
    for (const unsigned rows : {1u, 3u, 11u}) {
      test::ptx_interpreter sim(ptx::detail::module_text);
      const std::uint64_t status = sim.alloc(sizeof(cuda::device_status));
      const auto lw = test::log_weights(64, 1.0, 3);  // a good verdict; P depends on N, the key and the step only
      simulate_summary(sim, sim.alloc_copy(lw), lw.size(), 1, status, 1, step, k);
      const sorted_points layout(n);
      const std::uint64_t P = simulate_points(sim, n, status, k, 64, rows, rows == 11);
      const auto want = cpu::points_before_strata(cpu::serial{}, layout, k, step);
      ASSERT_EQ(want.size(), layout.strata() + 1);
      for (std::size_t K = 0; K < want.size(); ++K) {
        ASSERT_EQ(sim.read<std::uint32_t>(P + 4 * K), want[K]) << "N = " << n << ", " << rows << " rows: P_" << K;
      }
    }
  }
  test::ptx_interpreter sim(ptx::detail::module_text);
  const std::uint64_t status = sim.alloc(sizeof(cuda::device_status));
  auto lw = test::log_weights(64, 1.0, 3);
  lw[9] = std::numeric_limits<double>::infinity();
  simulate_summary(sim, sim.alloc_copy(lw), lw.size(), 1, status, 1, step, k);
  const std::uint64_t P = simulate_points(sim, 5000, status, k, 64);
  for (std::uint64_t K = 0; K <= sorted_points(5000).strata(); ++K) {
    ASSERT_EQ(sim.read<std::uint32_t>(P + 4 * K), 0xDEADu) << "P_" << K << " was written for bad input";
  }
}

// The column sums and the super-bins' scan at the largest layout (N = 2^24 and beyond: G = 2^13
// super-bins, 32 blocks, the last of which scans), which no simulated level 1 reaches: synthetic
// rows (11 of them: the sums' eight loads a step and a remainder of three), c_g their column sums
// and super_before their exclusive scan, through the scan's shared memory (a pad word per 32) and
// its eight loads a step.
TEST(PtxKernels, SuperBinSumsAndScanAtTheLargestLayout) {
  const std::uint64_t n = std::uint64_t{1} << 24;
  const sorted_points layout(n);
  const std::uint32_t G = layout.super_bins(), rows = 11;
  ASSERT_EQ(G, 8192u);
  std::mt19937 rng(5);
  std::vector<std::uint32_t> row_counts(std::size_t{rows} * G);
  for (auto& c : row_counts) c = static_cast<std::uint32_t>(rng() % 300);
  std::vector<std::uint32_t> want_count(G, 0), want_before(G, 0);
  for (std::uint32_t r = 0; r < rows; ++r) {
    for (std::uint32_t g = 0; g < G; ++g) want_count[g] += row_counts[std::size_t{r} * G + g];
  }
  for (std::uint32_t g = 1; g < G; ++g) want_before[g] = want_before[g - 1] + want_count[g - 1];
  test::ptx_interpreter sim(ptx::detail::module_text);
  const std::uint64_t status = sim.alloc(sizeof(cuda::device_status));  // code 0: a good verdict
  const std::uint64_t row_at = sim.alloc_copy(row_counts), super_count = sim.alloc(4 * G),
                      super_before = sim.alloc(4 * G), finished = sim.alloc_copy(std::vector<std::uint32_t>{0});
  sim.launch("resample_points_super_bin_sums", G / 256, 256,
             {n, status, row_at, rows, super_count, super_before, finished});
  for (std::uint32_t g = 0; g < G; ++g) {
    ASSERT_EQ(sim.read<std::uint32_t>(super_count + 4 * g), want_count[g]) << "c_" << g;
    ASSERT_EQ(sim.read<std::uint32_t>(super_before + 4 * g), want_before[g]) << "super_before_" << g;
  }
}

// The call's opening (ptx/open_call.ptx) as src/ptx/ancestors.cpp launches it, on a status, ticket
// and flags laid out as look_back_storage lays them out and filled with garbage: it zeroes them
// all, takes the step from the device word (options::device_step; the argument is wrong on
// purpose) and writes U; an open gate changes nothing, a closed one (options::device_gate == 0)
// keeps `skipped` through the summary, and the comb writes nothing.
TEST(PtxKernels, OpenCallTakesTheDeviceStepAndItsClosedGateStopsTheCall) {
  const auto lw = test::log_weights(700, 1.0, 4);
  const std::uint64_t n = lw.size();
  const key k{11, 12};
  const std::uint32_t step = 9;
  std::vector<std::int32_t> want(n);
  cpu::ancestors(cpu::serial{}, scheme::systematic, std::span<const double>(lw), k, step, std::span<std::int32_t>(want));
  constexpr unsigned threads = 32;
  const std::uint64_t tiles = (n + 8 * threads - 1) / (8 * threads);
  for (const int gate : {-1, 1, 0}) {  // -1: no gate
    test::ptx_interpreter sim(ptx::detail::module_text);
    const std::uint64_t status_bytes = sizeof(cuda::device_status), words = (status_bytes + 4 + 4 * tiles) / 4;
    const std::uint64_t status = sim.alloc_copy(std::vector<std::uint32_t>(words, 0xABABABABu));
    const std::uint64_t ticket = status + status_bytes, flags = ticket + 4;
    const std::uint64_t step_at = sim.alloc_copy(std::vector<std::uint32_t>{step});
    const std::uint64_t gate_at = gate < 0 ? 0 : sim.alloc_copy(std::vector<std::int32_t>{gate});
    sim.launch("resample_open_call", 2, 32, {status, words, gate_at, step_at, step + 1, k.seed, k.stream, 0, 0});
    auto opened = sim.read<cuda::device_status>(status);
    EXPECT_EQ(opened.step, step);
    EXPECT_EQ(opened.shared_word, philox_stream(k, shared_index, step).next());
    EXPECT_EQ(opened.code, gate == 0 ? static_cast<int>(cuda::status_code::skipped) : 0);
    opened.step = opened.shared_word = 0;
    opened.code = 0;
    EXPECT_EQ(opened.first_bad, 0u);
    EXPECT_EQ(opened.max_key, 0u);
    EXPECT_EQ(opened.n, 0u);
    EXPECT_EQ(sim.read<std::uint32_t>(ticket), 0u);
    for (std::uint64_t t = 0; t < tiles; ++t) ASSERT_EQ(sim.read<std::uint32_t>(flags + 4 * t), 0u) << "tile " << t;
    // systematic as the host enqueues it (the summary by tiles, the comb from estimated weights)
    const std::uint64_t weights = sim.alloc_copy(lw), a = sim.alloc_copy(std::vector<std::int32_t>(n, -7));
    run_comb_from_estimates(sim, weights, n, 1, 0, scheme::systematic, status, k, threads, a);
    const auto st = sim.read<cuda::device_status>(status);
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto got = sim.read<std::int32_t>(a + 4 * i);
      if (gate == 0) {
        ASSERT_EQ(got, -7) << "a closed gate, yet ancestor " << i << " was written";
      } else {
        ASSERT_EQ(got, want[i]) << "gate " << gate << ", particle " << i;
      }
    }
    EXPECT_EQ(st.code, gate == 0 ? static_cast<int>(cuda::status_code::skipped) : 0);
  }
}

// ---------------------------------------------------------------------------------------------
// The conversions and Code 7 (ptx/check_indices.ptx, offspring_count.ptx, offspring_scan.ptx,
// cumulative_to_ancestors.ptx, permute.ptx), launched as src/ptx/conversions.cpp launches them,
// with small blocks (grid-stride kernels on 3 blocks of 32; tiles of 256) so that every index
// lies past several strides and tile boundaries.

enum class conversion { to_offspring, to_cumulative, to_ancestors, permute };

struct simulated_conversion {
  cuda::device_status status;
  std::vector<std::int64_t> out;
};

template <class Index>
simulated_conversion simulate_conversion(conversion op, const std::vector<Index>& in) {
  test::ptx_interpreter sim(ptx::detail::module_text);
  constexpr unsigned grid = 3, threads = 32;
  const std::uint64_t n = in.size(), index64 = sizeof(Index) == 8, tiles = (n + 8 * threads - 1) / (8 * threads);
  const std::uint64_t from = sim.alloc_copy(in), status = sim.alloc(sizeof(cuda::device_status));
  const std::uint64_t out = sim.alloc_copy(std::vector<Index>(n, Index{-7})), d = sim.alloc(sizeof(Index) * n);
  auto check = [&](bool cumulative) {
    sim.launch(cumulative ? "resample_check_cumulative" : "resample_check_ancestors", grid, threads,
               {from, n, index64, status});
    sim.launch("resample_index_verdict", 1, 1, {from, n, index64, status, cumulative ? 5u : 4u, cumulative ? 1u : 0u});
  };
  switch (op) {
    case conversion::to_offspring:
      check(false);
      sim.launch("resample_fill_indices", grid, threads, {out, n, index64, 0, status});
      sim.launch("resample_count_offspring", grid, threads, {from, n, index64, status, out});
      break;
    case conversion::to_cumulative: {
      const std::uint64_t ticket = sim.alloc(4), flags = sim.alloc(8 * tiles);  // look_back_storage's 8 a tile
      const std::uint64_t aggregates = sim.alloc(16 * tiles), inclusives = sim.alloc(16 * tiles);
      const auto scan_tiles = static_cast<unsigned>(ptx::detail::offspring_scan_tiles(n, index64 != 0, threads));
      sim.launch("resample_offspring_scan", scan_tiles, threads,
                 {from, n, index64, ticket, flags, aggregates, inclusives, out, 0});
      break;
    }
    case conversion::to_ancestors:
      check(true);
      sim.launch("resample_cumulative_to_ancestors", static_cast<unsigned>(tiles), threads, {from, n, index64, status, out});
      break;
    case conversion::permute:
      check(false);
      sim.launch("resample_fill_indices", grid, threads, {d, n, index64, n, status});
      sim.launch("resample_prepermute", grid, threads, {from, n, index64, status, d});
      sim.launch("resample_chase", grid, threads, {from, n, index64, status, d});
      sim.launch("resample_gather", grid, threads, {from, d, n, index64, status, out});
      break;
  }
  simulated_conversion r;
  r.status = sim.read<cuda::device_status>(status);
  for (std::uint64_t i = 0; i < n; ++i) r.out.push_back(sim.read<Index>(out + i * sizeof(Index)));
  return r;
}

template <class Index>
void expect_conversions_equal_cpu(const std::vector<Index>& a, const std::string& what) {
  const auto n = a.size();
  std::vector<Index> o(n), O(n), sorted(n), c(n);
  cpu::ancestors_to_offspring(cpu::serial{}, std::span<const Index>(a), std::span<Index>(o));
  cpu::offspring_to_cumulative(cpu::serial{}, std::span<const Index>(o), std::span<Index>(O));
  cpu::cumulative_offspring_to_ancestors(cpu::serial{}, std::span<const Index>(O), std::span<Index>(sorted));
  cpu::permute(cpu::serial{}, std::span<const Index>(a), std::span<Index>(c));
  const std::vector<std::pair<conversion, const std::vector<Index>*>> steps = {
      {conversion::to_offspring, &a}, {conversion::to_cumulative, &o}, {conversion::to_ancestors, &O},
      {conversion::permute, &a}};
  const std::vector<const std::vector<Index>*> wants = {&o, &O, &sorted, &c};
  const char* names[] = {"ancestors_to_offspring", "offspring_to_cumulative", "cumulative_offspring_to_ancestors",
                         "permute"};
  for (std::size_t m = 0; m < steps.size(); ++m) {
    const auto got = simulate_conversion(steps[m].first, *steps[m].second);
    ASSERT_EQ(got.status.code, 0) << what << ", " << names[m];
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(got.out[i], static_cast<std::int64_t>((*wants[m])[i])) << what << ", " << names[m] << " at " << i;
    }
  }
}

TEST(PtxKernels, ConversionsAndPermuteEqualCpu) {
  std::mt19937_64 rng(42);
  for (const std::size_t n : {std::size_t{1}, std::size_t{77}, std::size_t{1500}}) {
    // a systematic draw (sorted, runs of offspring) and arbitrary ancestors (collisions, long chase
    // chains: every ancestor in the first eighth of [0, N))
    const auto lw = test::log_weights(n, 3.0, static_cast<unsigned>(n));
    std::vector<std::int32_t> drawn(n);
    cpu::ancestors(cpu::serial{}, scheme::systematic, std::span<const double>(lw), key{3, 4}, 2,
                   std::span<std::int32_t>(drawn));
    expect_conversions_equal_cpu(drawn, "systematic draw, N = " + std::to_string(n));
    std::vector<std::int64_t> arbitrary(n);
    for (auto& x : arbitrary) x = static_cast<std::int64_t>(rng() % ((n + 7) / 8));
    expect_conversions_equal_cpu(arbitrary, "arbitrary int64 ancestors, N = " + std::to_string(n));
  }
  // one particle owns every offspring: Code 8's tile exceeds its stage (the binary search writes it)
  expect_conversions_equal_cpu(std::vector<std::int32_t>(900, 611), "one owner");
}

// The offspring scan moves 16-byte vectors where a whole tile is aligned and 4-byte words
// elsewhere: counts and output each 0 to 3 words past an aligned address, sizes around a tile's
// (512 int32 or 256 int64 counts at 32 threads), counts of either sign.
template <class Index>
void expect_offspring_scan_at_every_alignment() {
  std::mt19937_64 rng(11);
  constexpr unsigned threads = 32;
  constexpr std::size_t words = sizeof(Index) / 4;
  for (const std::size_t n : {std::size_t{1}, std::size_t{255}, std::size_t{256}, std::size_t{257}, std::size_t{512},
                              std::size_t{513}, std::size_t{1500}, std::size_t{2048}}) {
    std::vector<Index> o(n), want(n);
    for (auto& x : o) x = static_cast<Index>(static_cast<std::int64_t>(rng() % 2001) - 1000);
    cpu::offspring_to_cumulative(cpu::serial{}, std::span<const Index>(o), std::span<Index>(want));
    for (std::size_t in_at = 0; in_at < 4; in_at += words) {
      for (std::size_t out_at = 0; out_at < 4; out_at += words) {
        test::ptx_interpreter sim(ptx::detail::module_text);
        const std::size_t before_in = in_at / words, before_out = out_at / words;
        std::vector<Index> padded(before_in, Index{5});
        padded.insert(padded.end(), o.begin(), o.end());
        padded.push_back(Index{6});
        const std::uint64_t from = sim.alloc_copy(padded) + 4 * in_at;
        const std::uint64_t out = sim.alloc_copy(std::vector<Index>(before_out + n + 1, Index{-7}));
        const std::uint64_t tiles = ptx::detail::offspring_scan_tiles(n, words == 2, threads);
        const std::uint64_t index64 = words == 2;
        sim.launch("resample_offspring_scan", static_cast<unsigned>(tiles), threads,
                   {from, n, index64, sim.alloc(4), sim.alloc(8 * tiles), sim.alloc(16 * tiles),
                    sim.alloc(16 * tiles), out + 4 * out_at, 0});
        const std::string where = "N = " + std::to_string(n) + ", counts at +" + std::to_string(4 * in_at) +
                                  " bytes, output at +" + std::to_string(4 * out_at);
        for (std::size_t i = 0; i < before_out; ++i) ASSERT_EQ(sim.read<Index>(out + i * sizeof(Index)), -7) << where;
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_EQ(sim.read<Index>(out + (before_out + i) * sizeof(Index)), want[i]) << where << ", at " << i;
        }
        ASSERT_EQ(sim.read<Index>(out + (before_out + n) * sizeof(Index)), -7) << where << ": written past N";
      }
    }
  }
}

TEST(PtxKernels, OffspringScanAtEveryAlignment) {
  expect_offspring_scan_at_every_alignment<std::int32_t>();
  expect_offspring_scan_at_every_alignment<std::int64_t>();
}

TEST(PtxKernels, ConversionsReportBadIndicesAndWriteNothing) {
  std::vector<std::int32_t> a(700, 3);
  a[650] = 700;  // = N
  a[333] = -2;
  for (const auto op : {conversion::to_offspring, conversion::permute}) {
    const auto got = simulate_conversion(op, a);
    EXPECT_EQ(got.status.code, static_cast<int>(cuda::status_code::bad_ancestor));
    EXPECT_EQ(got.status.index, 333u);
    EXPECT_EQ(got.status.integer, -2);
    EXPECT_EQ(got.status.n, 700u);
    for (const auto x : got.out) ASSERT_EQ(x, -7) << "written for bad ancestors";
  }
  a[333] = 0;  // now the first bad ancestor is N itself
  const auto at_n = simulate_conversion(conversion::to_offspring, a);
  EXPECT_EQ(at_n.status.index, 650u);
  EXPECT_EQ(at_n.status.integer, 700);
  std::vector<std::int64_t> O(600);
  for (std::size_t i = 0; i < O.size(); ++i) O[i] = static_cast<std::int64_t>(i + 1);
  O[400] = 399;  // O^400 < O^399 = 400
  auto got = simulate_conversion(conversion::to_ancestors, O);
  EXPECT_EQ(got.status.code, static_cast<int>(cuda::status_code::cumulative_decreases));
  EXPECT_EQ(got.status.index, 400u);
  for (const auto x : got.out) ASSERT_EQ(x, -7) << "written for decreasing cumulative offspring";
  O[400] = 401;
  O[599] = 601;
  got = simulate_conversion(conversion::to_ancestors, O);
  EXPECT_EQ(got.status.code, static_cast<int>(cuda::status_code::cumulative_end));
  EXPECT_EQ(got.status.index, 599u);
  EXPECT_EQ(got.status.integer, 601);
  O[0] = -1;  // O^0 < 0 decreases from O^(-1) = 0
  got = simulate_conversion(conversion::to_ancestors, O);
  EXPECT_EQ(got.status.code, static_cast<int>(cuda::status_code::cumulative_decreases));
  EXPECT_EQ(got.status.index, 0u);
  for (const auto x : got.out) ASSERT_EQ(x, -7) << "written for bad cumulative offspring";
}

// ---------------------------------------------------------------------------------------------
// The chain schemes (ptx/chains.ptx) after the statistics that give B and check rejection's bound,
// as src/ptx/ancestors.cpp launches them (one thread per particle, blocks of 64 here), with and
// without the fused PREPERMUTE claims.

struct simulated_chains {
  cuda::device_status status;
  std::vector<std::int64_t> a, claims;
};

template <class T, class Index>
simulated_chains simulate_chains(const std::vector<T>& lw, scheme s, key k, std::uint32_t step, const options& opt,
                                 bool claim = false) {
  test::ptx_interpreter sim(ptx::detail::module_text);
  constexpr unsigned grid = 3, threads = 64;
  const std::uint64_t n = lw.size(), is_double = sizeof(T) == 8, index64 = sizeof(Index) == 8;
  const std::uint64_t weights = sim.alloc_copy(lw), status = sim.alloc(sizeof(cuda::device_status));
  const std::uint64_t sums = sim.alloc(16 * grid);
  const std::uint64_t a = sim.alloc_copy(std::vector<Index>(n, Index{-7}));
  const std::uint64_t claims = claim ? sim.alloc_copy(std::vector<Index>(n, Index{-7})) : 0;
  const auto fraction = static_cast<std::uint64_t>(fraction_bits(n));
  const std::uint64_t bound = s == scheme::rejection && opt.rejection_log_bound ? bits(*opt.rejection_log_bound) : no_bound;
  std::uint64_t wanted = 0;
  if (s != scheme::rejection) wanted = opt.metropolis_steps ? 4 | 8 : 4;
  simulate_open_call(sim, status, step, k);
  sim.launch("resample_max_pass", grid, threads, {weights, n, is_double, status, bound});
  sim.launch("resample_weight_sums", grid, threads, {weights, n, is_double, fraction, status, sums, 0});
  sim.launch("resample_weight_statistics", 1, threads,
             {weights, n, is_double, fraction, status, sums, 0, grid, wanted, 0, 0, bound, bits(opt.metropolis_eps),
              opt.metropolis_steps.value_or(0), 0});
  if (claim) sim.launch("resample_fill_indices", grid, threads, {claims, n, index64, n, status});
  const std::uint64_t kind = s == scheme::metropolis ? 0 : s == scheme::megopolis ? 1 : 2;
  sim.launch("resample_chains", static_cast<unsigned>((n + threads - 1) / threads), threads,
             {weights, n, is_double, index64, kind, status, k.seed, k.stream, a, claims});
  simulated_chains r;
  r.status = sim.read<cuda::device_status>(status);
  for (std::uint64_t i = 0; i < n; ++i) r.a.push_back(sim.read<Index>(a + i * sizeof(Index)));
  for (std::uint64_t i = 0; claim && i < n; ++i) r.claims.push_back(sim.read<Index>(claims + i * sizeof(Index)));
  return r;
}

template <class T, class Index>
void expect_chains_equal_cpu(const std::vector<T>& lw, scheme s, const options& opt, const std::string& what) {
  const key k{5, 9};
  const std::uint32_t step = 3;
  std::vector<Index> want(lw.size());
  cpu::ancestors(cpu::serial{}, s, std::span<const T>(lw), k, step, std::span<Index>(want), opt);
  const auto got = simulate_chains<T, Index>(lw, s, k, step, opt, true);
  ASSERT_EQ(got.status.code, 0) << what;
  const std::uint64_t n = lw.size();
  if (s != scheme::rejection) {  // B: the eps rule on the same Q, or as given
    const auto want_steps =
        opt.metropolis_steps.value_or(metropolis_steps_from_sum(got.status.total, n, fraction_bits(n), opt.metropolis_eps));
    EXPECT_EQ(got.status.steps, want_steps) << what;
  }
  std::size_t differ = 0, first = n;
  for (std::size_t j = 0; j < n; ++j) {
    if (got.a[j] != static_cast<std::int64_t>(want[j])) {
      ++differ;
      first = std::min(first, j);
    }
  }
  EXPECT_EQ(differ, 0u) << what << ": " << differ << " ancestors differ from the CPU's, the first at " << first;
  // the fused claims are PREPERMUTE's: the lowest i that drew each ancestor, N where none did
  std::vector<std::int64_t> claims(n, static_cast<std::int64_t>(n));
  for (std::size_t i = n; i-- > 0;) claims[static_cast<std::size_t>(want[i])] = static_cast<std::int64_t>(i);
  EXPECT_EQ(got.claims, claims) << what;
}

TEST(PtxKernels, ChainsEqualCpu) {
  options eps;                        // B from eps = 0.01
  options fixed;
  fixed.metropolis_steps = 3;         // B given
  options loose;
  loose.metropolis_eps = 0.3;
  options bound;
  for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{97}}) {
    const auto lw = test::log_weights(n, 2.0, static_cast<unsigned>(n) + 5, n > 2);  // zeros: chains leave them
    const std::vector<float> lwf(lw.begin(), lw.end());
    bound.rejection_log_bound = *std::max_element(lw.begin(), lw.end()) + 0.75;
    const std::string at = "N = " + std::to_string(n);
    for (const scheme s : {scheme::metropolis, scheme::megopolis}) {
      const std::string what = std::string(name(s)) + ", " + at;
      expect_chains_equal_cpu<double, std::int32_t>(lw, s, eps, what + ", eps 0.01");
      expect_chains_equal_cpu<float, std::int64_t>(lwf, s, fixed, what + ", B = 3, float, int64");
      expect_chains_equal_cpu<double, std::int64_t>(lw, s, loose, what + ", eps 0.3, int64");
    }
    expect_chains_equal_cpu<double, std::int32_t>(lw, scheme::rejection, eps, "rejection, bound max, " + at);
    expect_chains_equal_cpu<float, std::int32_t>(lwf, scheme::rejection, eps, "rejection, float, " + at);
    expect_chains_equal_cpu<double, std::int64_t>(lw, scheme::rejection, bound, "rejection, bound max + 0.75, " + at);
  }
}

TEST(PtxKernels, ChainsStepRuleMatchesTheCpuForEvenAndDispersedWeights) {
  // equal weights (beta = 1: ln 0, B = 1), a mild and a wild dispersion, one dominant weight
  std::vector<std::vector<double>> sets = {std::vector<double>(50, -1.5), test::log_weights(50, 0.5, 2),
                                           test::log_weights(50, 6.0, 3), std::vector<double>(50, -40.0)};
  sets.back()[17] = 0.0;
  for (std::size_t t = 0; t < sets.size(); ++t) {
    for (const double e : {0.5, 0.01}) {
      options opt;
      opt.metropolis_eps = e;
      const auto got = simulate_chains<double, std::int32_t>(sets[t], scheme::metropolis, {1, 1}, 0, opt);
      ASSERT_EQ(got.status.code, 0);
      std::vector<std::int32_t> want(50);
      cpu::ancestors(cpu::serial{}, scheme::metropolis, std::span<const double>(sets[t]), key{1, 1}, 0,
                     std::span<std::int32_t>(want), opt);
      EXPECT_EQ(got.status.steps, metropolis_steps_from_sum(got.status.total, 50, fraction_bits(50), e))
          << "set " << t << ", eps " << e;
      EXPECT_EQ(got.a, std::vector<std::int64_t>(want.begin(), want.end())) << "set " << t << ", eps " << e;
    }
  }
}

TEST(PtxKernels, RejectionBoundBelowAWeightIsReportedAndNothingWritten) {
  auto lw = test::log_weights(150, 1.0, 8);
  const double top = *std::max_element(lw.begin(), lw.end());
  options opt;
  opt.rejection_log_bound = top - 1e-9;  // below the max: the first weight above it is reported
  std::size_t first = 0;
  while (lw[first] <= *opt.rejection_log_bound) ++first;
  const auto got = simulate_chains<double, std::int32_t>(lw, scheme::rejection, {2, 2}, 0, opt, true);
  EXPECT_EQ(got.status.code, static_cast<int>(cuda::status_code::above_bound));
  EXPECT_EQ(got.status.index, first);
  EXPECT_EQ(got.status.value, lw[first]);
  EXPECT_EQ(got.status.bound, *opt.rejection_log_bound);
  for (const auto x : got.a) ASSERT_EQ(x, -7) << "an ancestor was written for bad input";
  for (const auto x : got.claims) ASSERT_EQ(x, -7) << "a claim was made for bad input";
  // a NaN comes first (the CPU's order), and the chains write nothing for it either
  lw[140] = std::numeric_limits<double>::quiet_NaN();
  const auto nan = simulate_chains<double, std::int32_t>(lw, scheme::metropolis, {2, 2}, 0, options{});
  EXPECT_EQ(nan.status.code, static_cast<int>(cuda::status_code::bad_log_weight));
  EXPECT_EQ(nan.status.index, 140u);
  for (const auto x : nan.a) ASSERT_EQ(x, -7) << "an ancestor was written for bad input";
}

// ---------------------------------------------------------------------------------------------
// Multinomial (Code 2): resample_cdf_from_offsets writes the exact C_i from the tile summary, then
// resample_multinomial draws v_j by Lemire's 128-bit rule and searches C (ptx/multinomial.ptx).

u128 u128_of(std::uint64_t lo, std::uint64_t hi) { return (static_cast<u128>(hi) << 64) | lo; }

TEST(PtxFunctions, TwoTo128ModQIsTheCpps) {
  const u128 top = ~u128{0};
  std::vector<u128> qs = {1, 2, 3, 7, u128{1} << 63, (u128{1} << 64) - 1, u128{1} << 64, (u128{1} << 64) + 1,
                          u128{1} << 96, (u128{1} << 127) - 1, u128{1} << 127, (u128{1} << 127) + 1, top - 1, top};
  std::mt19937_64 rng(128);
  for (int i = 0; i < 300; ++i) qs.push_back(u128_of(rng(), rng() >> (i % 64)) | 1);
  for (const u128 q : qs) {
    const auto got = module().call("resample_two_to_128_mod", {static_cast<std::uint64_t>(q), static_cast<std::uint64_t>(q >> 64)});
    std::uint64_t r[2];
    std::memcpy(r, got.data(), 16);
    const u128 want = (0 - q) % q;
    ASSERT_TRUE(u128_of(r[0], r[1]) == want) << "Q = " << static_cast<std::uint64_t>(q >> 64) << " 2^64 + "
                                             << static_cast<std::uint64_t>(q);
  }
}

/// resample_multinomial alone on a status holding Q and a table C with C_(N-1) = Q: Lemire's draw
/// for a Q the weights seldom give (near 2^128, just above 2^127: half the draws are redrawn). The
/// table holds v_j and v_j + 1 for the first 150 particles' v_j, so their search pins v_j itself:
/// v_j - 1 or v_j + 1 would find another entry.
TEST(PtxKernels, MultinomialDrawIsLemiresExactDrawForAnyQ) {
  const key k{21, 4};
  const std::uint32_t step = 6;
  const u128 top = ~u128{0};
  for (const u128 q : {(u128{1} << 127) + 1, top, top / 3 * 2 + 5, (u128{1} << 64) + 12345, u128{1} << 100}) {
    std::vector<u128> C;
    for (std::uint64_t j = 0; j < 150; ++j) {
      philox_stream s(k, j, step);
      const u128 v = uniform_below(s, q);
      C.push_back(v);
      if (v + 1 < q) C.push_back(v + 1);
    }
    C.push_back(q);
    std::sort(C.begin(), C.end());
    C.erase(std::unique(C.begin(), C.end()), C.end());
    const std::uint64_t n = C.size();
    std::vector<std::uint64_t> table;
    for (const u128 c : C) {
      table.push_back(static_cast<std::uint64_t>(c));
      table.push_back(static_cast<std::uint64_t>(c >> 64));
    }
    test::ptx_interpreter sim(ptx::detail::module_text);
    cuda::device_status st{};
    st.total = q;
    st.step = step;
    const std::uint64_t status = sim.alloc(sizeof st);
    sim.write(status, st);
    const std::uint64_t cdf = sim.alloc_copy(table), a = sim.alloc_copy(std::vector<std::int64_t>(n, -7));
    sim.launch("resample_multinomial", static_cast<unsigned>((n + 63) / 64), 64,  // a thread per particle
               {cdf, n, 1, status, k.seed, k.stream, a});
    std::size_t redrawn = 0;
    for (std::uint64_t j = 0; j < n; ++j) {
      philox_stream s(k, j, step), count(k, j, step);
      const u128 v = uniform_below(s, q);
      const auto want = static_cast<std::int64_t>(std::upper_bound(C.begin(), C.end(), v) - C.begin());
      ASSERT_EQ(sim.read<std::int64_t>(a + 8 * j), want) << "particle " << j;
      for (int w = 0; w < 4; ++w) count.next();  // one try takes one block of four words
      redrawn += count.next() != s.next();
    }
    if (q == (u128{1} << 127) + 1) {
      EXPECT_GT(redrawn, n / 4) << "the rejection path was hardly taken";
    }
  }
}

struct simulated_multinomial {
  cuda::device_status status;
  std::vector<u128> C;
  std::vector<std::int64_t> a;
};

/// What src/ptx/ancestors.cpp enqueues for multinomial ancestors, on the simulator: the summary by
/// tiles of 8 `threads` (simulate_tile_summary), the table from its offsets
/// (ptx/cdf_from_offsets.ptx), then the draws.
template <class T, class Index>
simulated_multinomial simulate_multinomial(const std::vector<T>& lw, key k, std::uint32_t step, unsigned threads,
                                           bool fast_exp = false) {
  test::ptx_interpreter sim(ptx::detail::module_text);
  const std::uint64_t n = lw.size(), is_double = sizeof(T) == 8, index64 = sizeof(Index) == 8;
  const std::uint64_t weights = sim.alloc_copy(lw), status = sim.alloc(sizeof(cuda::device_status));
  const std::uint64_t cdf = sim.alloc_copy(std::vector<std::uint64_t>(2 * n, 7));
  const std::uint64_t a = sim.alloc_copy(std::vector<Index>(n, Index{-7}));
  const auto fraction = static_cast<std::uint64_t>(fraction_bits(n));
  simulate_open_call(sim, status, step, k, 0, fast_exp);
  const auto summary = simulate_tile_summary(sim, weights, n, is_double, status, threads);
  sim.launch("resample_cdf_from_offsets", static_cast<unsigned>(summary.tiles), threads,
             {weights, n, is_double, fraction, status, summary.offsets, summary.warp_offsets, cdf});
  sim.launch("resample_multinomial", static_cast<unsigned>((n + 63) / 64), 64,  // a thread per particle
             {cdf, n, index64, status, k.seed, k.stream, a});
  simulated_multinomial r;
  r.status = sim.read<cuda::device_status>(status);
  for (std::uint64_t i = 0; i < n; ++i) {
    r.C.push_back(u128_of(sim.read<std::uint64_t>(cdf + 16 * i), sim.read<std::uint64_t>(cdf + 16 * i + 8)));
    r.a.push_back(sim.read<Index>(a + i * sizeof(Index)));
  }
  return r;
}

template <class T, class Index>
void expect_multinomial_equals_cpu(const std::vector<T>& lw, unsigned threads, const std::string& what) {
  const key k{13, 2};
  const std::uint32_t step = 5;
  std::vector<Index> want(lw.size());
  cpu::ancestors(cpu::serial{}, scheme::multinomial, std::span<const T>(lw), k, step, std::span<Index>(want));
  const auto got = simulate_multinomial<T, Index>(lw, k, step, threads);
  ASSERT_EQ(got.status.code, 0) << what;
  const auto summary = cpu::summarise(cpu::serial{}, std::span<const T>(lw));
  u128 c = 0;
  for (std::size_t i = 0; i < lw.size(); ++i) {  // the table: C_i, exactly
    c += quantised_weight(lw[i], static_cast<T>(summary.max_log_w), summary.fraction);
    ASSERT_TRUE(got.C[i] == c) << what << ": C differs at " << i;
  }
  for (std::size_t j = 0; j < lw.size(); ++j) {
    ASSERT_EQ(got.a[j], static_cast<std::int64_t>(want[j])) << what << ": ancestor " << j;
  }
}

TEST(PtxKernels, MultinomialEqualsCpu) {
  // N = 1; a partial tile; 20 tiles of 512, each tile's and each warp's offset added; zeros, float,
  // int64 (tiles of 256: one warp)
  for (const std::size_t n : {std::size_t{1}, std::size_t{77}, std::size_t{10000}}) {
    const auto lw = test::log_weights(n, 2.0, static_cast<unsigned>(n) + 9, n > 2);
    expect_multinomial_equals_cpu<double, std::int32_t>(lw, 64, "N = " + std::to_string(n));
  }
  const auto lw = test::log_weights(3000, 4.0, 10, true);
  const std::vector<float> lwf(lw.begin(), lw.end());
  expect_multinomial_equals_cpu<float, std::int64_t>(lwf, 32, "float / int64");
}

// The fast mode (options::fast_exp): the sums pass and the comb take the weights from
// resample_exp_fast_x4 alike, so the draw is systematic's exact comb on those weights. The
// simulator's ex2.approx is the host's exp2f, so the test computes the same weights, sums their
// quantised values exactly, and checks every O^i against exact_comb::systematic, in both forms, and
// multinomial's table (ptx/cdf_from_offsets.ptx) against the C_i of those weights; and that the
// weights differ from the exact mode's (the mode is read at all). A systematic draw hardly moves
// when the weights change by 2^-22, so the table is what pins each particle's own fast weight.
TEST(PtxKernels, FastExpDrawsExactlyForTheApproximateWeights) {
  const key k{11, 3};
  const std::uint32_t step = 6;
  for (const std::size_t n : {std::size_t{1}, std::size_t{900}, std::size_t{3000}}) {
    auto lw = test::log_weights(n, 3.0, static_cast<unsigned>(n) + 2, n > 2);
    if (n > 2) lw[n / 2] = lw[n / 3] - 120.0;  // below 2^-149 of the largest: a zero weight here
    const double max = *std::max_element(lw.begin(), lw.end());
    std::vector<double> w(n);
    std::size_t differ_from_exact = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double x = lw[i] - max;
      const auto t = static_cast<float>(x * std::bit_cast<double>(0x3FF71547652B82FEull));
      w[i] = static_cast<double>(std::exp2f(t));
      differ_from_exact += w[i] != deterministic_exp_nonpositive(x) ? 1 : 0;
    }
    const std::vector<u128> C = test::exact_cdf_of(w);
    const u128 c = C.back();
    if (n > 2) {
      EXPECT_GT(differ_from_exact, n / 2) << "the fast weights are the exact ones";
    }
    const exact_comb comb(c, n);
    const std::uint32_t U = philox_stream(k, shared_index, step).next();
    std::vector<std::int64_t> O(n), a(n);
    for (std::size_t i = 0; i < n; ++i) O[i] = static_cast<std::int64_t>(comb.systematic(C[i], U));
    cpu::cumulative_offspring_to_ancestors(cpu::serial{}, std::span<const std::int64_t>(O), std::span<std::int64_t>(a));
    const auto got_O = simulate_comb<double, std::int64_t>(lw, scheme::systematic, k, step, 32, comb_form::cumulative,
                                                           true);
    const auto got_a = simulate_comb<double, std::int32_t>(lw, scheme::systematic, k, step, 64, comb_form::ancestors,
                                                           true);
    ASSERT_EQ(got_O.status.code, 0);
    EXPECT_TRUE(got_O.status.total == c) << "N = " << n << ": Q is not the sum of the fast weights' q";
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(got_O.a[i], O[i]) << "N = " << n << ": cumulative offspring " << i;
      ASSERT_EQ(got_a.a[i], a[i]) << "N = " << n << ": ancestor " << i;
    }
    const auto table = simulate_multinomial<double, std::int32_t>(lw, k, step, 32, true);
    ASSERT_EQ(table.status.code, 0);
    for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(table.C[i] == C[i]) << "N = " << n << ": C_" << i;
  }
}

TEST(PtxKernels, MultinomialWritesNothingForBadInput) {
  auto lw = test::log_weights(200, 1.0, 12);
  lw[150] = std::numeric_limits<double>::infinity();
  const auto got = simulate_multinomial<double, std::int32_t>(lw, {1, 1}, 0, 32);
  EXPECT_EQ(got.status.code, static_cast<int>(cuda::status_code::bad_log_weight));
  EXPECT_EQ(got.status.index, 150u);
  for (const auto x : got.a) ASSERT_EQ(x, -7) << "an ancestor was written for bad input";
  for (const u128 c : got.C) ASSERT_TRUE(c == u128_of(7, 7)) << "the table was written for bad input";
}

// ---------------------------------------------------------------------------------------------
// SSP: the split N q_i = f_i Q + r_i (ptx/expected_offspring.ptx), then the pairing on one thread
// (ptx/ssp.ptx), as src/ptx/ancestors.cpp enqueues them for the offspring form.

struct simulated_ssp {
  cuda::device_status status;
  std::vector<std::int64_t> split_counts, counts;  // f_i after the split; o_i after the pairing
  std::vector<u128> remainders;                     // r_i after the split
};

template <class T, class Index>
simulated_ssp simulate_ssp(const std::vector<T>& lw, key k, std::uint32_t step) {
  test::ptx_interpreter sim(ptx::detail::module_text);
  const std::uint64_t n = lw.size(), is_double = sizeof(T) == 8, index64 = sizeof(Index) == 8;
  const unsigned grid = 3, threads = 32;
  const std::uint64_t weights = sim.alloc_copy(lw), status = sim.alloc(sizeof(cuda::device_status));
  const std::uint64_t counts = sim.alloc_copy(std::vector<Index>(n, Index{-7}));
  const std::uint64_t remainders = sim.alloc_copy(std::vector<std::uint64_t>(2 * n, 7));
  simulate_summary(sim, weights, n, is_double, status, grid, step, k);
  sim.launch("resample_split_expected_offspring", grid, threads, {weights, n, is_double, index64, status, counts, remainders});
  simulated_ssp r;
  for (std::uint64_t i = 0; i < n; ++i) {
    r.split_counts.push_back(sim.read<Index>(counts + i * sizeof(Index)));
    r.remainders.push_back(u128_of(sim.read<std::uint64_t>(remainders + 16 * i), sim.read<std::uint64_t>(remainders + 16 * i + 8)));
  }
  sim.launch("resample_ssp_pairing", 1, 1, {remainders, counts, n, index64, status, k.seed, k.stream});
  r.status = sim.read<cuda::device_status>(status);
  for (std::uint64_t i = 0; i < n; ++i) r.counts.push_back(sim.read<Index>(counts + i * sizeof(Index)));
  return r;
}

template <class T, class Index>
void expect_ssp_equals_cpu(const std::vector<T>& lw, const std::string& what) {
  const key k{23, 6};
  const std::uint32_t step = 2;
  const auto got = simulate_ssp<T, Index>(lw, k, step);
  ASSERT_EQ(got.status.code, 0) << what;
  const auto summary = cpu::summarise(cpu::serial{}, std::span<const T>(lw));
  const auto split = cpu::split_expected_offspring(cpu::serial{}, std::span<const T>(lw), summary);
  for (std::size_t i = 0; i < lw.size(); ++i) {
    ASSERT_EQ(got.split_counts[i], static_cast<std::int64_t>(split.floor[i])) << what << ": f differs at " << i;
    ASSERT_TRUE(got.remainders[i] == split.remainder[i]) << what << ": r differs at " << i;
  }
  std::vector<Index> want(lw.size());
  cpu::offspring(cpu::serial{}, scheme::ssp, std::span<const T>(lw), k, step, std::span<Index>(want));
  for (std::size_t i = 0; i < lw.size(); ++i) {
    ASSERT_EQ(got.counts[i], static_cast<std::int64_t>(want[i])) << what << ": offspring " << i;
  }
}

TEST(PtxKernels, SspEqualsCpu) {
  // N = 1 and 2; zeros; many pairings whose fractions sum past 1 and stay below it; float / int64
  for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{77}, std::size_t{1500}}) {
    const auto lw = test::log_weights(n, 1.5, static_cast<unsigned>(n) + 11, n > 2);
    expect_ssp_equals_cpu<double, std::int32_t>(lw, "N = " + std::to_string(n));
  }
  const auto lw = test::log_weights(600, 3.0, 12, true);
  const std::vector<float> lwf(lw.begin(), lw.end());
  expect_ssp_equals_cpu<float, std::int64_t>(lwf, "float / int64");
  // equal weights: every e_i = 1 exactly (the floor decided by the exact products), no fraction;
  // weights 1 and 2 in turn: e_i = 2/3 and 4/3, the fractions pairing across 1
  expect_ssp_equals_cpu<double, std::int32_t>(std::vector<double>(300, -1.25), "equal weights");
  std::vector<double> alternating(301);
  for (std::size_t i = 0; i < alternating.size(); ++i) alternating[i] = i % 2 ? std::log(2.0) : 0.0;
  expect_ssp_equals_cpu<double, std::int64_t>(alternating, "weights 1, 2, 1, ...");
}

TEST(PtxKernels, SspWritesNothingForBadInput) {
  auto lw = test::log_weights(100, 1.0, 13);
  lw[40] = std::numeric_limits<double>::quiet_NaN();
  const auto got = simulate_ssp<double, std::int32_t>(lw, {1, 1}, 0);
  EXPECT_EQ(got.status.code, static_cast<int>(cuda::status_code::bad_log_weight));
  EXPECT_EQ(got.status.index, 40u);
  for (const auto x : got.counts) ASSERT_EQ(x, -7) << "a count was written for bad input";
  for (const u128 r : got.remainders) ASSERT_TRUE(r == u128_of(7, 7)) << "a remainder was written for bad input";
}

// ---------------------------------------------------------------------------------------------
// Residual: the split (floor_sum too), the table of C, the scan of the floors, then the draws
// (ptx/residual.ptx), as src/ptx/ancestors.cpp enqueues them for the offspring form.

struct simulated_residual {
  cuda::device_status status;
  std::vector<std::int64_t> counts;
};

template <class T, class Index>
simulated_residual simulate_residual(const std::vector<T>& lw, key k, std::uint32_t step, unsigned threads) {
  test::ptx_interpreter sim(ptx::detail::module_text);
  const std::uint64_t n = lw.size(), is_double = sizeof(T) == 8, index64 = sizeof(Index) == 8;
  const unsigned grid = 3;
  const std::uint64_t tiles = (n + 8 * threads - 1) / (8 * threads);
  const std::uint64_t weights = sim.alloc_copy(lw), status = sim.alloc(sizeof(cuda::device_status));
  const std::uint64_t aggregates = sim.alloc(16 * tiles), inclusives = sim.alloc(16 * tiles);
  const std::uint64_t cdf = sim.alloc(16 * n), floors = sim.alloc(sizeof(Index) * n);
  const std::uint64_t counts = sim.alloc_copy(std::vector<Index>(n, Index{-7}));
  simulate_summary(sim, weights, n, is_double, status, grid, step, k);
  sim.launch("resample_split_expected_offspring", grid, 32, {weights, n, is_double, index64, status, counts, 0});
  sim.launch("resample_comb_look_back", static_cast<unsigned>(tiles), threads,
             {weights, n, is_double, index64, 0, status, sim.alloc(4), sim.alloc(4 * tiles), aggregates, inclusives,
              k.seed, k.stream, cdf, 3});
  const auto scan_tiles = static_cast<unsigned>(ptx::detail::offspring_scan_tiles(n, index64 != 0, threads));
  sim.launch("resample_offspring_scan", scan_tiles, threads,
             {counts, n, index64, sim.alloc(4), sim.alloc(8 * tiles), aggregates, inclusives, floors, status});
  sim.launch("resample_residual_draws", grid, 64, {cdf, floors, counts, n, index64, status, k.seed, k.stream});
  simulated_residual r;
  r.status = sim.read<cuda::device_status>(status);
  for (std::uint64_t i = 0; i < n; ++i) r.counts.push_back(sim.read<Index>(counts + i * sizeof(Index)));
  return r;
}

template <class T, class Index>
void expect_residual_equals_cpu(const std::vector<T>& lw, unsigned threads, const std::string& what) {
  const key k{29, 8};
  const std::uint32_t step = 7;
  const auto got = simulate_residual<T, Index>(lw, k, step, threads);
  ASSERT_EQ(got.status.code, 0) << what;
  const auto summary = cpu::summarise(cpu::serial{}, std::span<const T>(lw));
  const auto split = cpu::split_expected_offspring(cpu::serial{}, std::span<const T>(lw), summary);
  EXPECT_EQ(got.status.floor_sum, split.floor_sum) << what;
  std::vector<Index> want(lw.size());
  cpu::offspring(cpu::serial{}, scheme::residual, std::span<const T>(lw), k, step, std::span<Index>(want));
  for (std::size_t i = 0; i < lw.size(); ++i) {
    ASSERT_EQ(got.counts[i], static_cast<std::int64_t>(want[i])) << what << ": offspring " << i;
  }
}

TEST(PtxKernels, ResidualEqualsCpu) {
  // N = 1 and 2; zeros; a partial tile and 10 tiles of 256 (the scans' look-backs); float / int64;
  // equal weights (R = 0: no draw); weights 1 and 2 in turn (R = N / 3 draws)
  for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{77}, std::size_t{2500}}) {
    const auto lw = test::log_weights(n, 1.5, static_cast<unsigned>(n) + 17, n > 2);
    expect_residual_equals_cpu<double, std::int32_t>(lw, 32, "N = " + std::to_string(n));
  }
  const auto lw = test::log_weights(700, 3.0, 14, true);
  const std::vector<float> lwf(lw.begin(), lw.end());
  expect_residual_equals_cpu<float, std::int64_t>(lwf, 64, "float / int64");
  expect_residual_equals_cpu<double, std::int32_t>(std::vector<double>(300, 0.5), 32, "equal weights");
  std::vector<double> alternating(301);
  for (std::size_t i = 0; i < alternating.size(); ++i) alternating[i] = i % 2 ? std::log(2.0) : 0.0;
  expect_residual_equals_cpu<double, std::int64_t>(alternating, 32, "weights 1, 2, 1, ...");
}

}  // namespace
}  // namespace resample
