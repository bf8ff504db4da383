// The particle moves of filter_precision::fast: the models' draws and densities in float, from the
// GPU's approximate ex2 / lg2 / sqrt / cos (PTX ISA: ex2.approx.ftz.f32 and lg2.approx.ftz.f32
// within about 2^-22 of the exact value, relative for ex2 and absolute for lg2; sqrt.approx within
// 1 ulp; __cosf within 2^-21.41 absolute on [-pi, pi], the CUDA guide's bound), and 32-bit Philox
// words. Device code (nvcc only); the cuda filter's kernels (src/cuda/bpf_filter.cu) take one of
// these where the exact mode takes the model itself.
//
//   philox            Philox4x32-10 (Random123's rounds and constants) with its ten round keys
//                      computed once on the host (philox_keys), where Random123 adds them up per
//                      call: the same words (tested). In a chunk whose kernel has the jitter's
//                      draws, the compiler loads them from the kernel's parameters into uniform
//                      registers in every round, hoisted out of the jitter's branch (13
//                      instructions per particle), hence the filter's kernel without that code.
//   disk_point        a point uniform on the unit disk as the trigonometric polar methods take it:
//                      w = r^2 uniform on (0, 1) (d = 1 - w beside it), and c = cos(theta), from two
//                      32-bit words (a conversion, an fma, __cosf); no rejection.
//   draws_of          two particles' disk points from one Philox block (half a block per particle).
//                      Session 37: it replaced Marsaglia's polar tries from a warp's pool (three
//                      tries per block, accepted with probability pi / 4, handed out through a ring in
//                      shared memory): the tick's propagation kernel ran 183 instructions a particle
//                      with the pool, 138 with these (docs/results/bpf.md).
//   log_w              ln w: the series of ln(1 - d) to d^6 below d = 1/16 (truncation < 2e-8
//                      relative), else lg2(w) ln 2 (|ln w| >= 0.064, so lg2's absolute error is
//                      < 3e-6 relative).
//   expm1_nonnegative  e^a - 1: its series to a^6 below 1/4 (truncation < 5e-8 relative), else
//                      ex2(a log2 e) - 1 (e^a - 1 >= 0.28, ex2's error < 1.2e-6 relative).
//   normal, student_t  the polar methods of core/random.hpp (Marsaglia; Bailey's t) in their
//                      trigonometric form: c sqrt(-2 ln w) (Box and Muller) and c sqrt(nu (w^(-2/nu) -
//                      1)), the laws of u sqrt(-2 ln w / w) and u sqrt(nu (w^(-2/nu) - 1) / w).
//
// Each variate is a pure function of the key, the step and the particle's index (through the pair of
// particles draws_of serves), so a particle's path depends on neither N nor the launch; but
// these are not the exact mode's variates (32-bit words, float arithmetic), nor the CPU's bits.
#pragma once

#include <cstdint>

#include "resample/bpf/linear_gaussian_model.hpp"
#include "resample/bpf/sv_model.hpp"
#include "resample/core/philox.hpp"

namespace resample::bpf::fast {

__device__ inline float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ inline float lg2(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ inline float root(float x) {
  float y;
  asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

inline constexpr float ln2 = 0.693147180559945309f;
inline constexpr float log2e = 1.442695040888963407f;

/// e^a - 1 for a >= 0.
__device__ inline float expm1_nonnegative(float a) {
  const float series =
      a * __fmaf_rn(a,
                    __fmaf_rn(a, __fmaf_rn(a, __fmaf_rn(a, __fmaf_rn(a, 1.0f / 720, 1.0f / 120), 1.0f / 24), 1.0f / 6),
                              0.5f),
                    1.0f);
  return a < 0.25f ? series : ex2(a * log2e) - 1.0f;
}

/// Philox4x32-10's round keys for one key: round r uses (seed + r W0, stream + r W1).
struct philox_keys {
  std::uint32_t k0[10], k1[10];
  explicit philox_keys(key k) {
    for (std::uint32_t r = 0; r < 10; ++r) {
      k0[r] = k.seed + r * 0x9E3779B9u;  // Random123's PHILOX_W32_0
      k1[r] = k.stream + r * 0xBB67AE85u;  // PHILOX_W32_1
    }
  }
};

/// Philox4x32-10 of counter (c0, c1, c2, c3): philox4x32_10's words.
__device__ inline uint4 philox(const philox_keys& keys, std::uint32_t c0, std::uint32_t c1, std::uint32_t c2,
                               std::uint32_t c3) {
#pragma unroll
  for (int r = 0; r < 10; ++r) {
    const std::uint32_t lo0 = 0xD2511F53u * c0, hi0 = __umulhi(0xD2511F53u, c0);  // PHILOX_M4x32_0
    const std::uint32_t lo1 = 0xCD9E8D57u * c2, hi1 = __umulhi(0xCD9E8D57u, c2);  // PHILOX_M4x32_1
    c0 = hi1 ^ c1 ^ keys.k0[r];
    c1 = lo1;
    c2 = hi0 ^ c3 ^ keys.k1[r];
    c3 = lo0;
  }
  return make_uint4(c0, c1, c2, c3);
}

/// A point uniform on the unit disk as the trigonometric forms of the polar methods take it: its
/// squared radius w, uniform on (0, 1), with d = 1 - w, and c = cos(theta) of its angle, theta
/// uniform on [-pi, pi). (w, theta) is a uniform point of the disk (P(r^2 <= w) = w), so Marsaglia's
/// u sqrt(-2 ln w / w) with u = sqrt(w) cos(theta) is c sqrt(-2 ln w) (Box and Muller), and Bailey's
/// t, u sqrt(nu (w^(-2/nu) - 1) / w), is c sqrt(nu (w^(-2/nu) - 1)): the same laws with no rejection.
/// d is stored though log_w could take 1 - w itself (the same bits): so derived, the filter's kernel
/// spilled 24 bytes instead of 12 and its tick at 2^24 took 4-5 us more (session 37, run 14).
struct disk_point {
  float w, d, c;
};

/// The disk point of two Philox words: w = (a + 1/2) 2^-32 rounded to float (a's conversion, then
/// one fma: never 0, and 1 only where a rounds to 2^32, probability 2^-25, which gives the variate
/// 0), d = 1 - w (exact for w >= 1/2, where d's small values matter; log_w takes w elsewhere), and
/// theta = 2 pi (f - 3/2) for f in [1, 2) holding b's top 23 bits, as one fma with 2 pi and 3 pi
/// rounded to float (within 4.9e-7 of it: an interval 1.7e-7 longer than the period).
__device__ inline disk_point disk_point_of(std::uint32_t a, std::uint32_t b) {
  const float w = __fmaf_rn(__uint2float_rn(a), 0x1p-32f, 0x1p-33f);
  const float f = __int_as_float(static_cast<int>(0x3f800000u | (b >> 9)));
  return {w, 1.0f - w, __cosf(__fmaf_rn(f, 6.283185307179586f, -9.42477796076938f))};
}

/// The draws of the particle at stream `index` and of its partner (in the filter's fast chunk, the
/// same thread's particle of the next round, k + 1 for an even k): the Philox block at counter
/// (index, step, 0), its words (0, 1) for the first and (2, 3) for the second. Half a Philox block
/// per particle, and each draw a pure function of the key, the step and the particle's index.
struct draw_pair {
  disk_point first, second;
};
__device__ inline draw_pair draws_of(const philox_keys& keys, std::uint64_t index, std::uint32_t step) {
  const uint4 b = philox(keys, static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32), step, 0);
  return {disk_point_of(b.x, b.y), disk_point_of(b.z, b.w)};
}

/// ln w of a disk point.
__device__ inline float log_w(const disk_point& p) {
  const float d = p.d;
  const float series =
      -d * __fmaf_rn(d, __fmaf_rn(d, __fmaf_rn(d, __fmaf_rn(d, __fmaf_rn(d, 1.0f / 6, 0.2f), 0.25f), 1.0f / 3), 0.5f),
                     1.0f);
  return d < 0.0625f ? series : lg2(p.w) * ln2;
}

__device__ inline float normal(const disk_point& p) { return p.c * root(-2.0f * log_w(p)); }

__device__ inline float student_t(const disk_point& p, float nu, float minus_two_over_nu) {
  return p.c * root(nu * expm1_nonnegative(minus_two_over_nu * log_w(p)));
}

/// What both twins share: the key's round keys, the jitter's N(0, sd^2).
struct moves_base {
  using real = float;
  static constexpr bool fast = true;
  philox_keys keys;
  explicit moves_base(key k) : keys(k) {}
  __device__ float jitter(float x, double sd, std::uint64_t index, std::uint32_t step) const {
    return __fmaf_rn(static_cast<float>(sd), normal(draws_of(keys, index, step).first), x);
  }
};

/// The fast twin of sv_model.
struct sv_moves : moves_base {
  float mu, rho, sigma, nu_state, nu_obs, minus_two_over_nu_state, stationary_sd, log_norm, minus_half_nu1_ln2,
      inv_nu_obs;

  sv_moves(const sv_model& m, key k)
      : moves_base(k), mu(static_cast<float>(m.params().mu)), rho(static_cast<float>(m.params().rho)),
        sigma(static_cast<float>(m.params().sigma)), nu_state(static_cast<float>(m.params().nu_state)),
        nu_obs(static_cast<float>(m.params().nu_obs)),
        minus_two_over_nu_state(m.params().nu_state == 0.0 ? 0.0f : static_cast<float>(-2.0 / m.params().nu_state)),
        stationary_sd(static_cast<float>(m.stationary_sd())), log_norm(static_cast<float>(m.log_norm())),
        minus_half_nu1_ln2(static_cast<float>(-0.5 * (m.params().nu_obs + 1.0) * 0.6931471805599453)),
        inv_nu_obs(m.params().nu_obs == 0.0 ? 0.0f : static_cast<float>(1.0 / m.params().nu_obs)) {}

  __device__ float initial(const disk_point& p) const { return __fmaf_rn(stationary_sd, fast::normal(p), mu); }
  __device__ float predicted_mean(float h) const { return __fmaf_rn(rho, h - mu, mu); }
  __device__ float propagate(float h, const disk_point& p) const {
    const float eps = nu_state == 0.0f ? fast::normal(p) : student_t(p, nu_state, minus_two_over_nu_state);
    return __fmaf_rn(sigma, eps, predicted_mean(h));
  }
  __device__ float log_likelihood(float y, float h) const {
    const float scaled = y * ex2(-0.5f * log2e * h);  // y e^(-h/2): z overflows only where g underflows
    const float z = y == 0.0f ? 0.0f : scaled * scaled;
    const float base = __fmaf_rn(-0.5f, h, log_norm);
    if (nu_obs == 0.0f) return __fmaf_rn(-0.5f, z, base);
    return __fmaf_rn(minus_half_nu1_ln2, lg2(__fmaf_rn(z, inv_nu_obs, 1.0f)), base);
  }
  __device__ float log_first_stage(float y, float h_prev) const { return log_likelihood(y, predicted_mean(h_prev)); }
};

/// The fast twin of linear_gaussian_model.
struct linear_gaussian_moves : moves_base {
  float rho, sigma, stationary_sd, log_norm, inv_tau2, predictive_log_norm, inv_predictive_var;

  linear_gaussian_moves(const linear_gaussian_model& m, key k)
      : moves_base(k), rho(static_cast<float>(m.params().rho)), sigma(static_cast<float>(m.params().sigma)),
        stationary_sd(static_cast<float>(m.stationary_sd())), log_norm(static_cast<float>(m.log_norm())),
        inv_tau2(static_cast<float>(m.inv_tau2())), predictive_log_norm(static_cast<float>(m.predictive_log_norm())),
        inv_predictive_var(static_cast<float>(m.inv_predictive_var())) {}

  __device__ float initial(const disk_point& p) const { return stationary_sd * fast::normal(p); }
  __device__ float propagate(float x, const disk_point& p) const {
    return __fmaf_rn(sigma, fast::normal(p), rho * x);
  }
  __device__ float log_likelihood(float y, float x) const {
    const float d = y - x;
    return __fmaf_rn(-0.5f * d, d * inv_tau2, log_norm);
  }
  __device__ float log_first_stage(float y, float x_prev) const {
    const float d = __fmaf_rn(-rho, x_prev, y);
    return __fmaf_rn(-0.5f * d, d * inv_predictive_var, predictive_log_norm);
  }
};

inline sv_moves moves_for(const sv_model& m, key k) { return sv_moves(m, k); }
inline linear_gaussian_moves moves_for(const linear_gaussian_model& m, key k) { return linear_gaussian_moves(m, k); }

}  // namespace resample::bpf::fast
