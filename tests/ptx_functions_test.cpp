// The PTX module's scalar device functions, run by a one-thread interpreter
// (support/ptx_interpreter.hpp) on machines without a GPU, against their C++ twins bit for bit:
// Philox4x32-10, the deterministic exp and log, quantise, and the order-preserving keys. The
// kernels that use them (warps, barriers, atomics) are checked on the GPU by ptx_backend_test.
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "resample/core/deterministic_math.hpp"
#include "resample/core/exact_cdf.hpp"
#include "resample/core/philox.hpp"
#include "support/ptx_interpreter.hpp"

namespace resample::ptx::detail {
extern const char module_text[];
}

namespace resample {
namespace {

const test::ptx_interpreter& module() {
  static const test::ptx_interpreter m(ptx::detail::module_text);
  return m;
}

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }
double from_bits(std::uint64_t b) { return std::bit_cast<double>(b); }

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
  std::vector<std::array<std::uint32_t, 6>> inputs = {
      {0, 0, 0, 0, 0, 0},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0}};
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

TEST(PtxFunctions, TheInterpreterRefusesWhatItDoesNotModel) {
  // a kernel-only instruction (a shuffle) is an error, not a silent no-op
  EXPECT_THROW((void)module().call("resample_warp_sum_u128", {1, 0}), std::runtime_error);
}

}  // namespace
}  // namespace resample
