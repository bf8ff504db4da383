// filter_precision::fast's moves (bpf/fast_moves.cuh) on the device, against the exact laws and
// densities: its normal and Student-t draws by KS distance and tail counts over 2^20 draws, as the
// filter's chunks take them (two particles a Philox block), its densities against the exact model's
// within the float and approximate-instruction error; its disk points against a host model of their
// definition. Skips, with the reason, where no GPU is present.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <utility>
#include <vector>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "resample/bpf/calibration.hpp"
#include "resample/bpf/fast_moves.cuh"

namespace resample::bpf {
namespace {

constexpr std::uint32_t draws = 1u << 20;

/// 2^20 draws of both laws, as the filter's chunks take them: a thread's two particles from one
/// Philox block (fast::draws_of at stream i: i's draw, then its partner's).
__global__ void draw(fast::philox_keys keys, float nu, float* normal, float* student) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  const fast::draw_pair pair = fast::draws_of(keys, i, 7);
  normal[2 * i] = fast::normal(pair.first);
  normal[2 * i + 1] = fast::normal(pair.second);
  student[2 * i] = fast::student_t(pair.first, nu, -2.0f / nu);
  student[2 * i + 1] = fast::student_t(pair.second, nu, -2.0f / nu);
}

/// The disk points of `count` pairs at streams first + i.
__global__ void disk_points(fast::philox_keys keys, std::uint64_t first, std::uint32_t step, std::uint32_t count,
                            fast::disk_point* out) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const fast::draw_pair pair = fast::draws_of(keys, first + i, step);
  out[2 * i] = pair.first;
  out[2 * i + 1] = pair.second;
}

/// disk_point_of, the normal and the Student-t (nu = 5) at given word pairs.
__global__ void at_words(const std::uint32_t* a, const std::uint32_t* b, std::uint32_t count, fast::disk_point* point,
                         float* normal, float* student) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  point[i] = fast::disk_point_of(a[i], b[i]);
  normal[i] = fast::normal(point[i]);
  student[i] = fast::student_t(point[i], 5.0f, -2.0f / 5.0f);
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

/// sup |F_n - F| of `x` against the CDF `F`: the PIT sample's distance from uniform
/// (resample::bpf::ks_distance).
template <class Cdf>
double ks_distance(const std::vector<float>& x, const Cdf& F) {
  std::vector<double> u(x.size());
  std::transform(x.begin(), x.end(), u.begin(), [&](float v) { return F(static_cast<double>(v)); });
  return resample::bpf::ks_distance(std::move(u));
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

// The disk points are their definition: from the Philox block at (index, step, 0), words (0, 1) for
// the first and (2, 3) for the second, w = (a + 1/2) 2^-32 rounded to float (the host's conversion
// and fmaf give the device's bits), d = 1 - w, and c = cos(theta) with theta = 2 pi (f - 3/2), f the
// float of [1, 2) holding b's top 23 bits, within 2^-20 of cos(theta) for the exact theta: __cosf's
// 2^-21.41, plus theta's own error, below 4.9e-7 (2 pi and 3 pi rounded to float, 1.75e-7 f and
// 2.4e-8, and the fma's rounding, 1.2e-7). Indices past 2^32, as the filter's propagation streams.
TEST(FastMoves, DiskPointsFollowTheirDefinition) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device present";
  constexpr std::uint32_t count = 1u << 16;
  fast::disk_point* out = nullptr;
  CHECK_CUDA(cudaMalloc(&out, 2 * count * sizeof(fast::disk_point)));
  struct stream_case {
    key k;
    std::uint64_t first;
    std::uint32_t step;
  };
  double worst_c = 0;
  for (const stream_case& c : {stream_case{key{0, 0}, 0, 1},
                               stream_case{key{0xdeadbeef, 5}, (std::uint64_t{1} << 32) + 4096, 77},
                               stream_case{key{~0u, ~0u}, (std::uint64_t{1} << 33) - 64, ~0u}}) {
    disk_points<<<count / 256, 256>>>(fast::philox_keys(c.k), c.first, c.step, count, out);
    CHECK_CUDA(cudaGetLastError());
    std::vector<fast::disk_point> got(2 * count);
    CHECK_CUDA(cudaMemcpy(got.data(), out, got.size() * sizeof(fast::disk_point), cudaMemcpyDeviceToHost));
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::uint64_t index = c.first + i;
      const auto words = philox4x32_10(
          {{static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32), c.step, 0}},
          {{c.k.seed, c.k.stream}});
      for (int half = 0; half < 2; ++half) {
        const std::uint32_t a = words.v[2 * half], b = words.v[2 * half + 1];
        const float w = std::fmaf(static_cast<float>(a), 0x1p-32f, 0x1p-33f);
        const double f = std::bit_cast<float>(0x3f800000u | (b >> 9));
        const double cos_theta = std::cos(2.0 * std::numbers::pi * (f - 1.5));
        const fast::disk_point& g = got[2 * i + half];
        ASSERT_TRUE(std::bit_cast<std::uint32_t>(g.w) == std::bit_cast<std::uint32_t>(w) &&
                    std::bit_cast<std::uint32_t>(g.d) == std::bit_cast<std::uint32_t>(1.0f - w))
            << "key " << c.k.seed << ", index " << index << ", half " << half << ": w " << g.w << " against " << w;
        ASSERT_GT(g.w, 0.0f);
        worst_c = std::max(worst_c, std::fabs(g.c - cos_theta));
      }
    }
  }
  EXPECT_LT(worst_c, 0x1p-20) << "worst |c - cos(theta)|";
  CHECK_CUDA(cudaFree(out));
}

// The edge words: a = 0 gives the smallest w, 2^-33 (finite variates, |normal| <= sqrt(66 ln 2));
// a from 2^32 - 128 up rounds w to 1 (d = 0), whose variates are exactly 0; b = 0 and b = 2^32 - 1
// give theta's ends, -pi and just below pi (c within 2^-20 of -1); and words between them.
TEST(FastMoves, DiskPointsAtTheEdgeWords) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device present";
  const std::vector<std::uint32_t> as = {0u, 1u, 0x7fffffffu, 0x80000000u, 0xffffff7fu, 0xffffff80u, 0xffffffffu};
  const std::vector<std::uint32_t> bs = {0u, 0x1ffu, 0x200u, 0x80000000u, 0xfffffe00u, 0xffffffffu};
  std::vector<std::uint32_t> a, b;
  for (const std::uint32_t x : as) {
    for (const std::uint32_t y : bs) a.push_back(x), b.push_back(y);
  }
  const auto count = static_cast<std::uint32_t>(a.size());
  std::uint32_t *da = nullptr, *db = nullptr;
  fast::disk_point* dp = nullptr;
  float *dn = nullptr, *dt = nullptr;
  CHECK_CUDA(cudaMalloc(&da, count * sizeof(std::uint32_t)));
  CHECK_CUDA(cudaMalloc(&db, count * sizeof(std::uint32_t)));
  CHECK_CUDA(cudaMalloc(&dp, count * sizeof(fast::disk_point)));
  CHECK_CUDA(cudaMalloc(&dn, count * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dt, count * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(da, a.data(), count * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(db, b.data(), count * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  at_words<<<1, 64>>>(da, db, count, dp, dn, dt);
  CHECK_CUDA(cudaGetLastError());
  std::vector<fast::disk_point> p(count);
  std::vector<float> normal(count), student(count);
  CHECK_CUDA(cudaMemcpy(p.data(), dp, count * sizeof(fast::disk_point), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(normal.data(), dn, count * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(student.data(), dt, count * sizeof(float), cudaMemcpyDeviceToHost));
  for (std::uint32_t i = 0; i < count; ++i) {
    SCOPED_TRACE(testing::Message() << "a " << a[i] << ", b " << b[i]);
    const float w = std::fmaf(static_cast<float>(a[i]), 0x1p-32f, 0x1p-33f);
    const double theta = 2.0 * std::numbers::pi * (std::bit_cast<float>(0x3f800000u | (b[i] >> 9)) - 1.5);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(p[i].w), std::bit_cast<std::uint32_t>(w));
    EXPECT_EQ(p[i].d, 1.0f - w);
    EXPECT_GT(p[i].w, 0.0f);
    EXPECT_LE(p[i].w, 1.0f);
    EXPECT_LT(std::fabs(p[i].c - std::cos(theta)), 0x1p-20);
    EXPECT_TRUE(std::isfinite(normal[i]) && std::isfinite(student[i])) << normal[i] << ", " << student[i];
    EXPECT_LE(std::fabs(normal[i]), std::sqrt(66.0 * std::numbers::ln2) * (1 + 1e-5));
    if (a[i] >= 0xffffff80u) {  // w rounds to 1
      EXPECT_EQ(p[i].w, 1.0f);
      EXPECT_EQ(normal[i], 0.0f);
      EXPECT_EQ(student[i], 0.0f);
    } else {
      EXPECT_LT(p[i].w, 1.0f);
    }
    if (b[i] < 0x200u) {  // f = 1: theta = -pi
      EXPECT_LT(std::fabs(p[i].c + 1.0), 0x1p-20);
    }
  }
  EXPECT_EQ(p[0].w, 0x1p-33f);  // a = 0
  for (void* q : {static_cast<void*>(da), static_cast<void*>(db), static_cast<void*>(dp), static_cast<void*>(dn),
                  static_cast<void*>(dt)}) {
    CHECK_CUDA(cudaFree(q));
  }
}

// Both laws from the same disk points (nu = 5): sqrt(n) D under the Kolmogorov law's 0.1% point,
// 1.949 (a t4 for a t5 differs by about 0.007 in the CDF, nearly 4 times the allowance of 0.0019 at
// n = 2^20), and the tails P(|X| > c) (where the transforms work on w near 0) within 4 binomial sd;
// a pair's two normals, and their squares, uncorrelated (each correlation within 4 / sqrt(n / 2)).
TEST(FastMoves, NormalAndStudentDrawsFollowTheirLaws) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device present";
  float *normal = nullptr, *student = nullptr;
  CHECK_CUDA(cudaMalloc(&normal, draws * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&student, draws * sizeof(float)));
  draw<<<draws / 2 / 256, 256>>>(fast::philox_keys(key{11, 3}), 5.0f, normal, student);
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
  // A pair's two normals (entries 2i and 2i + 1) are independent: the sample correlation of the
  // normals, and of their centred squares (z^2 - 1), which catches two points sharing a radius word:
  // z^2 = -2 ln w cos^2 theta, so a shared w gives the squares a correlation of 1/2. Each within
  // 4 / sqrt(n / 2), 4 sd of a correlation of independent pairs.
  const auto correlation = [&](auto f) {
    double sxy = 0, sxx = 0, syy = 0;
    for (std::uint32_t i = 0; i < draws / 2; ++i) {
      const double a = f(z[2 * i]), b = f(z[2 * i + 1]);
      sxy += a * b, sxx += a * a, syy += b * b;
    }
    return sxy / std::sqrt(sxx * syy);
  };
  EXPECT_LT(std::fabs(correlation([](double v) { return v; })), 4.0 / std::sqrt(draws / 2.0));
  EXPECT_LT(std::fabs(correlation([](double v) { return v * v - 1.0; })), 4.0 / std::sqrt(draws / 2.0));
}

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
