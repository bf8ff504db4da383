// The exact core's host/device contract: Philox, the uniforms, exact uniform integers, normal and
// Student-t draws, deterministic exp and log, quantisation, the exact comb, bit widths and the
// layouts built on them (F, multinomial-sorted's strata) give the same bits in a CUDA kernel as on
// the host. Skips, with the reason, where no GPU is present.
#include <cstdint>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "resample/core/exact_cdf.hpp"
#include "resample/core/exact_offspring.hpp"
#include "resample/core/random.hpp"
#include "resample/core/sorted_points.hpp"

namespace resample {
namespace {

/// Everything one particle index i computes; compared field by field, as bits.
struct sample {
  std::uint32_t philox[4];
  double uniform;
  std::uint32_t below_small;
  std::uint64_t below_128_low;
  double normal;
  double student;
  double exp_x;
  double log_y;
  std::uint64_t quantised_low;
  std::uint64_t systematic;
  std::uint64_t stratified;
  int width;              // bit_width of a 64-bit word (std::bit_width was wrong in kernels)
  int fraction;           // fraction_bits of a 64-bit N
  std::uint64_t strata;   // sorted_points(N).strata() for N < 2^32
};

constexpr std::uint64_t comb_n = 1000003;

RESAMPLE_HOST_DEVICE sample compute(std::uint64_t i) {
  sample out{};
  const key k{0x1234u, 0x9u};
  const auto block = philox4x32_10({{static_cast<std::uint32_t>(i), 0, 7, 0}}, {{k.seed, k.stream}});
  for (int w = 0; w < 4; ++w) out.philox[w] = block.v[w];
  philox_stream s(k, i, 7);
  out.uniform = uniform_open(s);
  out.below_small = uniform_below(s, 1000003u);
  out.below_128_low = static_cast<std::uint64_t>(uniform_below(s, (static_cast<u128>(3) << 100) + 12345));
  out.normal = standard_normal(s);
  out.student = student_t(s, 5.0);
  // An explicit fma: nvcc fuses a * b + c by default and g++ (ISO mode) does not, so a bare
  // -745 + 1454 u gives different x, hence different exp(x), on the two sides.
  const double x = detail::fused(1454.0, uniform_open(s), -745.0);
  out.exp_x = deterministic_exp(x);
  out.log_y = deterministic_log(uniform_open(s) * 1e300);
  out.quantised_low = static_cast<std::uint64_t>(quantise(uniform_open(s), 96) >> 20);
  const u128 Q = (static_cast<u128>(comb_n) << 96) - 12345;
  const u128 C = static_cast<u128>(i % comb_n) * (Q / comb_n) + (i * 977);
  const exact_comb comb(Q, comb_n);
  out.systematic = comb.systematic(C, s.next());
  out.stratified = comb.stratified(C, k, 3);
  const std::uint64_t word = s.next64() >> (i % 64);
  out.width = detail::bit_width(word);
  out.fraction = fraction_bits(word);
  out.strata = sorted_points((word >> 32) + 1).strata();
  return out;
}

__global__ void compute_kernel(sample* out, std::uint64_t count) {
  const std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (i < count) out[i] = compute(i);
}

TEST(CoreOnDevice, SameBitsAsHost) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) GTEST_SKIP() << "no CUDA device present";
  constexpr std::uint64_t count = 1 << 18;
  sample* device_out = nullptr;
  ASSERT_EQ(cudaMalloc(&device_out, count * sizeof(sample)), cudaSuccess);
  ASSERT_EQ(cudaMemset(device_out, 0xff, count * sizeof(sample)), cudaSuccess);  // poison
  compute_kernel<<<static_cast<unsigned>((count + 255) / 256), 256>>>(device_out, count);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<sample> got(count);
  ASSERT_EQ(cudaMemcpy(got.data(), device_out, count * sizeof(sample), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaFree(device_out), cudaSuccess);
  // Field by field, as bits (memcmp of the whole struct would compare its padding too).
  auto same = [](auto x, auto y) { return std::memcmp(&x, &y, sizeof x) == 0; };
  std::size_t mismatches = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    const sample e = compute(i);
    const sample& g = got[i];
    const char* field = std::memcmp(e.philox, g.philox, sizeof e.philox) != 0 ? "philox"
                        : !same(e.uniform, g.uniform)             ? "uniform"
                        : !same(e.below_small, g.below_small)     ? "below_small"
                        : !same(e.below_128_low, g.below_128_low) ? "below_128"
                        : !same(e.normal, g.normal)               ? "normal"
                        : !same(e.student, g.student)             ? "student_t"
                        : !same(e.exp_x, g.exp_x)                 ? "exp"
                        : !same(e.log_y, g.log_y)                 ? "log"
                        : !same(e.quantised_low, g.quantised_low) ? "quantise"
                        : !same(e.systematic, g.systematic)       ? "systematic"
                        : !same(e.stratified, g.stratified)       ? "stratified"
                        : !same(e.width, g.width)                 ? "bit_width"
                        : !same(e.fraction, g.fraction)           ? "fraction_bits"
                        : !same(e.strata, g.strata)               ? "sorted_points strata"
                                                                  : nullptr;
    if (field != nullptr && ++mismatches <= 5) ADD_FAILURE() << "index " << i << ": " << field << " differs";
  }
  EXPECT_EQ(mismatches, 0u);
}

}  // namespace
}  // namespace resample
