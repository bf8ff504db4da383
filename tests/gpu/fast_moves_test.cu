// filter_precision::fast's moves (bpf/fast_moves.cuh) on the device, against the exact laws and
// densities: its normal and Student-t draws by KS distance and tail counts over 2^20 draws (from
// each particle's own stream, and from a warp's pool), its densities against the exact model's
// within the float and approximate-instruction error; the pool's tries against a host model of its
// definition. Skips, with the reason, where no GPU is present.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "resample/bpf/fast_moves.cuh"

namespace resample::bpf {
namespace {

constexpr std::uint32_t draws = 1u << 20;

constexpr std::uint32_t pool_threads = 256, pool_rounds = 8;

/// 2^20 draws of both laws. Pooled: as the filter's chunks, a thread takes pool_rounds tries from its
/// warp's pool (particles i + pool_threads k), filled 4 rounds ahead; else each i from its own stream.
__global__ void draw(fast::philox_keys keys, float nu, bool pooled, float* normal, float* student) {
  __shared__ fast::warp_tries rings[pool_threads / 32];
  const auto put = [&](std::uint32_t i, const fast::accepted_try& p) {
    normal[i] = fast::normal(p);
    student[i] = fast::student_t(p, nu, -2.0f / nu);
  };
  if (!pooled) {
    const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    put(i, fast::first_accepted_try(keys, i, 7));
    return;
  }
  const std::uint32_t begin = blockIdx.x * pool_threads * pool_rounds;
  fast::warp_try_pool pool(rings[threadIdx.x / 32], begin + (threadIdx.x & ~31u), pool_threads, pool_rounds, 7);
  for (std::uint32_t k = 0; k < pool_rounds; ++k) {
    if (k % 4 == 0) pool.fill(keys, 128);  // as the filter's chunks
    put(begin + threadIdx.x + pool_threads * k, pool.take());
  }
}

/// `calls` rounds of two warps' pools (warp v's particles first + 32 v + lane + 64 k), every try out,
/// filled for `ahead` rounds every `ahead` rounds (the filter: 4).
__global__ void pool_tries(fast::philox_keys keys, std::uint64_t first, std::uint32_t rounds, std::uint32_t step,
                           int calls, int ahead, fast::accepted_try* out) {
  __shared__ fast::warp_tries rings[2];
  fast::warp_try_pool pool(rings[threadIdx.x / 32], first + (threadIdx.x & ~31u), 64, rounds, step);
  for (int c = 0; c < calls; ++c) {
    if (c % ahead == 0) pool.fill(keys, 32u * static_cast<unsigned>(ahead));
    out[64 * c + threadIdx.x] = pool.take();
  }
}

__global__ void densities(fast::sv_moves m, const float* y, const float* h, std::uint32_t count, float* out) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = m.log_likelihood(y[i], h[i]);
}

/// fast::philox and Random123's philox4x32_10 at counter (i, ~i, 3 i, i + 7): 8 words per i.
__global__ void both_philox(fast::philox_keys keys, key k, std::uint32_t count, std::uint32_t* out) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const uint4 a = fast::philox(keys, i, ~i, 3 * i, i + 7);
  const auto b = philox4x32_10({{i, ~i, 3 * i, i + 7}}, {{k.seed, k.stream}});
  const std::uint32_t words[8] = {a.x, a.y, a.z, a.w, b.v[0], b.v[1], b.v[2], b.v[3]};
  for (int w = 0; w < 8; ++w) out[8 * i + w] = words[w];
}

/// The host's model of warp_try_pool: the first 32 `calls` accepted candidates of the sequence the
/// pool's comment defines (generation g: lane l's Philox block from stream first + l + stride (g mod
/// rounds) at block g / rounds; try by try, lane by lane), from Random123 and the same float steps.
std::vector<fast::accepted_try> pool_model(key k, std::uint64_t first, std::uint32_t stride, std::uint32_t rounds,
                                           std::uint32_t step, int calls) {
  const auto uniform = [](std::uint32_t bits21) {
    return std::fmaf(2.0f, std::bit_cast<float>(0x3f800002u + (bits21 << 2)), -3.0f);
  };
  std::vector<fast::accepted_try> accepted;
  for (std::uint32_t g = 0; accepted.size() < 32u * static_cast<std::size_t>(calls); ++g) {
    std::array<std::array<std::uint32_t, 4>, 32> b;
    for (std::uint32_t lane = 0; lane < 32; ++lane) {
      const std::uint64_t index = first + lane + std::uint64_t{stride} * (g % rounds);
      const auto words = philox4x32_10(
          {{static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32), step, g / rounds}},
          {{k.seed, k.stream}});
      for (int w = 0; w < 4; ++w) b[lane][w] = words.v[w];
    }
    for (int t = 0; t < 3; ++t) {
      for (std::uint32_t lane = 0; lane < 32; ++lane) {
        const auto& [x, y, z, w] = b[lane];
        const std::uint32_t fu = t == 0 ? x >> 11 : t == 1 ? z >> 11 : (x & 0x7ffu) | ((y & 0x3ffu) << 11);
        const std::uint32_t fv = t == 0 ? y >> 11 : t == 1 ? w >> 11 : (z & 0x7ffu) | ((w & 0x3ffu) << 11);
        const float u = uniform(fu), v = uniform(fv);
        const fast::accepted_try p{u, std::fmaf(u, u, v * v), std::fmaf(-u, u, std::fmaf(-v, v, 1.0f))};
        if (p.w > 0.0f && p.w < 1.0f && p.d > 0.0f) accepted.push_back(p);
      }
    }
  }
  accepted.resize(32u * static_cast<std::size_t>(calls));
  return accepted;
}

bool have_gpu() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

// A failed CUDA call ends the test (an ASSERT in a helper would only end the helper).
#define CHECK_CUDA(call)                                   \
  do {                                                     \
    const cudaError_t e = (call);                          \
    ASSERT_EQ(e, cudaSuccess) << cudaGetErrorString(e);    \
  } while (0)

/// sup |F_n - F| of `x` against the CDF `F`.
template <class Cdf>
double ks_distance(std::vector<float> x, const Cdf& F) {
  std::sort(x.begin(), x.end());
  double d = 0;
  const auto n = static_cast<double>(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double f = F(static_cast<double>(x[i]));
    d = std::max({d, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
  }
  return d;
}

// The round keys computed once give Random123's words.
TEST(FastMoves, PhiloxWithPrecomputedKeysIsRandom123s) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device present";
  constexpr std::uint32_t count = 4096;
  std::uint32_t* out = nullptr;
  CHECK_CUDA(cudaMalloc(&out, 8 * count * sizeof(std::uint32_t)));
  for (const key k : {key{0, 0}, key{0xdeadbeef, 1}, key{~0u, ~0u}}) {
    both_philox<<<count / 256, 256>>>(fast::philox_keys(k), k, count, out);
    CHECK_CUDA(cudaGetLastError());
    std::vector<std::uint32_t> words(8 * count);
    CHECK_CUDA(cudaMemcpy(words.data(), out, words.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    for (std::uint32_t i = 0; i < count; ++i) {
      for (int w = 0; w < 4; ++w) ASSERT_EQ(words[8 * i + w], words[8 * i + 4 + w]) << "key " << k.seed << ", i " << i;
    }
  }
  CHECK_CUDA(cudaFree(out));
}

// Each lane's tries, round by round, are the pool's sequence: the host model's, bit for bit, whether
// the pool generates as each round needs or fills ahead for 4 rounds (as the filter) or for 5 (the
// most the ring allows). 40 rounds of a pool set up for 8, so that generations reach blocks 1 and 2
// of the streams; a particle index past 2^32, as the filter's propagation streams.
TEST(FastMoves, WarpTryPoolHandsOutItsSequenceInOrder) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device present";
  constexpr int calls = 40;
  fast::accepted_try* out = nullptr;
  CHECK_CUDA(cudaMalloc(&out, 64 * calls * sizeof(fast::accepted_try)));
  struct pool_case {
    key k;
    std::uint64_t first;
    std::uint32_t step;
  };
  for (const pool_case& c : {pool_case{key{0, 0}, 0, 1},
                             pool_case{key{0xdeadbeef, 5}, (std::uint64_t{1} << 32) + 4096, 77},
                             pool_case{key{~0u, ~0u}, (std::uint64_t{1} << 33) - 64, ~0u}}) {
    static_assert(32 * 5 <= fast::warp_try_pool::most_needed);
    for (const int ahead : {1, 4, 5}) {
      pool_tries<<<1, 64>>>(fast::philox_keys(c.k), c.first, 8, c.step, calls, ahead, out);
      CHECK_CUDA(cudaGetLastError());
      std::vector<fast::accepted_try> got(64 * calls);
      CHECK_CUDA(cudaMemcpy(got.data(), out, got.size() * sizeof(fast::accepted_try), cudaMemcpyDeviceToHost));
      for (std::uint32_t v = 0; v < 2; ++v) {
        const auto want = pool_model(c.k, c.first + 32 * v, 64, 8, c.step, calls);
        for (int r = 0; r < 32 * calls; ++r) {
          const fast::accepted_try& g = got[64 * (r / 32) + 32 * v + r % 32];
          const fast::accepted_try& e = want[r];
          ASSERT_TRUE(std::bit_cast<std::uint32_t>(g.u) == std::bit_cast<std::uint32_t>(e.u) &&
                      std::bit_cast<std::uint32_t>(g.w) == std::bit_cast<std::uint32_t>(e.w) &&
                      std::bit_cast<std::uint32_t>(g.d) == std::bit_cast<std::uint32_t>(e.d))
              << "key " << c.k.seed << ", filled " << ahead << " rounds ahead, warp " << v << ", try " << r << ": ("
              << g.u << ", " << g.w << ", " << g.d << ") against (" << e.u << ", " << e.w << ", " << e.d << ")";
        }
      }
    }
  }
  CHECK_CUDA(cudaFree(out));
}

// Both laws from the same accepted tries (nu = 5): sqrt(n) D under the Kolmogorov law's 0.1%
// point, 1.949 (a t4 for a t5 differs by about 0.007 in the CDF, nearly 4 times the allowance of
// 0.0019 at n = 2^20), and the tails P(|X| > c) (where the transforms work on w near 0) within 4
// binomial sd.
class FastDraws : public ::testing::TestWithParam<bool> {};

TEST_P(FastDraws, NormalAndStudentDrawsFollowTheirLaws) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device present";
  const bool pooled = GetParam();
  float *normal = nullptr, *student = nullptr;
  CHECK_CUDA(cudaMalloc(&normal, draws * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&student, draws * sizeof(float)));
  if (pooled) {
    draw<<<draws / (pool_threads * pool_rounds), pool_threads>>>(fast::philox_keys(key{11, 3}), 5.0f, true, normal,
                                                                  student);
  } else {
    draw<<<draws / 256, 256>>>(fast::philox_keys(key{11, 3}), 5.0f, false, normal, student);
  }
  CHECK_CUDA(cudaGetLastError());
  std::vector<float> z(draws), t(draws);
  CHECK_CUDA(cudaMemcpy(z.data(), normal, draws * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(t.data(), student, draws * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(normal));
  CHECK_CUDA(cudaFree(student));
  const auto phi = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  // The t5 CDF in closed form (odd nu): 1/2 + (theta + sin theta (cos theta + 2/3 cos^3 theta)) / pi,
  // theta = atan(x / sqrt 5).
  const auto t5_cdf = [](double x) {
    const double theta = std::atan(x / std::sqrt(5.0)), c = std::cos(theta);
    return 0.5 + (theta + std::sin(theta) * (c + 2.0 / 3.0 * c * c * c)) / 3.14159265358979323846;
  };
  const double allowance = 1.949 / std::sqrt(double{draws});
  EXPECT_LT(ks_distance(z, phi), allowance);
  EXPECT_LT(ks_distance(t, t5_cdf), allowance);
  const auto tail = [](const std::vector<float>& x, double c) {
    return static_cast<double>(std::count_if(x.begin(), x.end(), [c](float v) { return std::fabs(v) > c; }));
  };
  struct tail_case {
    const std::vector<float>* sample;
    double c, p;
  };
  for (const tail_case& k : {tail_case{&z, 3.0, 2.0 * (1.0 - phi(3.0))}, tail_case{&t, 5.0, 2.0 * (1.0 - t5_cdf(5.0))},
                             tail_case{&t, 10.0, 2.0 * (1.0 - t5_cdf(10.0))}}) {
    const double expected = k.p * draws, sd = std::sqrt(expected * (1.0 - k.p));
    EXPECT_NEAR(tail(*k.sample, k.c), expected, 4.0 * sd) << (k.sample == &z ? "normal" : "t5") << " beyond " << k.c;
  }
  // Symmetric, and finite.
  const auto positive = std::count_if(t.begin(), t.end(), [](float v) { return v > 0; });
  EXPECT_NEAR(positive, draws / 2.0, 4.0 * std::sqrt(draws / 4.0));
  EXPECT_EQ(std::count_if(z.begin(), z.end(), [](float v) { return !std::isfinite(v); }), 0);
  EXPECT_EQ(std::count_if(t.begin(), t.end(), [](float v) { return !std::isfinite(v); }), 0);
}

INSTANTIATE_TEST_SUITE_P(OwnStreamsAndWarpPools, FastDraws, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "WarpPool" : "OwnStream");
                         });

// The observation densities, Gaussian and t5, against sv_model's (double, deterministic) at the same
// float inputs: within 1e-5 (1 + |log g|) (float's 2^-24 and the 2^-22 of ex2 / lg2 on z, times
// (nu + 1) / 2 for the t; the bound is about four times the worst case seen).
TEST(FastMoves, DensitiesMatchTheExactModel) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device present";
  std::vector<float> y, h;
  for (int i = -40; i <= 40; ++i) {
    for (int j = 0; j <= 30; ++j) {
      y.push_back(static_cast<float>(i == 0 ? 0.0 : std::copysign(std::pow(10.0, std::abs(i) / 10.0 - 3.0), i)));
      h.push_back(static_cast<float>(-12.0 + 0.5 * j));
    }
  }
  const auto count = static_cast<std::uint32_t>(y.size());
  float *y_d = nullptr, *h_d = nullptr, *out_d = nullptr;
  CHECK_CUDA(cudaMalloc(&y_d, count * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&h_d, count * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&out_d, count * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(y_d, y.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(h_d, h.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  for (const double nu_obs : {0.0, 5.0}) {
    const sv_model exact({.mu = -4.5, .rho = 0.97, .sigma = 0.15, .nu_state = 5, .nu_obs = nu_obs});
    densities<<<(count + 255) / 256, 256>>>(fast::sv_moves(exact, key{}), y_d, h_d, count, out_d);
    CHECK_CUDA(cudaGetLastError());
    std::vector<float> out(count);
    CHECK_CUDA(cudaMemcpy(out.data(), out_d, count * sizeof(float), cudaMemcpyDeviceToHost));
    for (std::uint32_t i = 0; i < count; ++i) {
      const double want = exact.log_likelihood(y[i], h[i]);
      ASSERT_NEAR(out[i], want, 1e-5 * (1.0 + std::fabs(want)))
          << "nu_obs " << nu_obs << ", y " << y[i] << ", h " << h[i];
    }
  }
  CHECK_CUDA(cudaFree(y_d));
  CHECK_CUDA(cudaFree(h_d));
  CHECK_CUDA(cudaFree(out_d));
}

}  // namespace
}  // namespace resample::bpf
