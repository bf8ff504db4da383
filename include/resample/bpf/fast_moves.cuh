// The particle moves of filter_precision::fast: the models' draws and densities in float, from the
// GPU's approximate ex2 / lg2 / rcp / sqrt (PTX ISA: ex2.approx.ftz.f32 and lg2.approx.ftz.f32
// within about 2^-22 of the exact value, relative for ex2 and absolute for lg2; rcp.approx and
// sqrt.approx within 1 ulp), and 32-bit Philox words. Device code (nvcc only); the cuda filter's
// kernels (src/cuda/bpf_filter.cu) take one of these where the exact mode takes the model itself.
//
//   philox            Philox4x32-10 (Random123's rounds and constants) with its ten round keys
//                      computed once on the host (philox_keys), where Random123 adds them up per
//                      call: the same words (tested). In a chunk whose kernel has the jitter's
//                      draws, the compiler loads them from the kernel's parameters into uniform
//                      registers in every round, hoisted out of the jitter's branch (13
//                      instructions per particle), hence the filter's kernel without that code.
//   signed_uniform     u in (-1, 1) from 21 random bits m: (2m + 1) / 2^21 - 1, odd multiples of
//                      2^-21 (symmetric, never 0 or +-1): the bits in a float of [1, 2), then
//                      2f - 3 (exact).
//   accepted_try       Marsaglia's polar try: w = u^2 + v^2 and d = 1 - u^2 - v^2, each by fmas
//                      (neither from the other rounded, which would lose the small values of d
//                      that give small variates, or of w that give the tails); three tries per
//                      Philox block (6 x 21 of its 128 bits), each accepted with probability pi / 4.
//   warp_try_pool      a warp's particles take their tries from one sequence of candidates, a
//                      Philox block per lane at a time, the accepted ones handed out in order
//                      through a ring in shared memory: about 0.5 blocks per particle (4 for a
//                      warp's 256 particles), where drawing each particle's own stream until it
//                      accepts took 1.27 (its warp waited for the slowest lane).
//   log_w              ln w: the series of ln(1 - d) to d^6 below d = 1/16 (truncation < 2e-8
//                      relative), else lg2(w) ln 2 (|ln w| >= 0.064, so lg2's absolute error is
//                      < 3e-6 relative).
//   expm1_nonnegative  e^a - 1: its series to a^6 below 1/4 (truncation < 5e-8 relative), else
//                      ex2(a log2 e) - 1 (e^a - 1 >= 0.28, ex2's error < 1.2e-6 relative).
//   normal, student_t  the polar methods of core/random.hpp (Marsaglia; Bailey's t), on one
//                      accepted try: u sqrt(-2 ln w / w) and u sqrt(nu (w^(-2/nu) - 1) / w).
//
// Each variate is a pure function of the key, the step and the particle's index (through its warp's
// group of particles: warp_try_pool), so a particle's path depends on neither N nor the launch; but
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
__device__ inline float rcp(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ inline float root(float x) {
  float y;
  asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

inline constexpr float ln2 = 0.693147180559945309f;
inline constexpr float log2e = 1.442695040888963407f;

__device__ inline float signed_uniform(std::uint32_t bits21) {
  const float f = __int_as_float(static_cast<int>(0x3f800002u + (bits21 << 2)));  // 1 + (2m + 1) / 2^22
  return __fmaf_rn(2.0f, f, -3.0f);
}

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

/// An accepted polar try: u, w = u^2 + v^2 in (0, 1) and d = 1 - u^2 - v^2.
struct accepted_try {
  float u, w, d;
};

/// Try t (0, 1, 2) of a Philox block: its two 21-bit fields, each word's top 21 bits for tries 0
/// and 1, and for try 2 the low 11 bits of words (0, 1) and (2, 3), 11 + 10 bits each. Whether it
/// is accepted: w < 1 and d > 0 (w > 0 always: u is an odd multiple of 2^-21, u^2 >= 2^-42).
__device__ inline bool polar_candidate(const uint4& b, int t, accepted_try& p) {
  const std::uint32_t fu = t == 0 ? b.x >> 11 : t == 1 ? b.z >> 11 : (b.x & 0x7ffu) | ((b.y & 0x3ffu) << 11);
  const std::uint32_t fv = t == 0 ? b.y >> 11 : t == 1 ? b.w >> 11 : (b.z & 0x7ffu) | ((b.w & 0x3ffu) << 11);
  const float u = signed_uniform(fu), v = signed_uniform(fv);
  p = {u, __fmaf_rn(u, u, v * v), __fmaf_rn(-u, u, __fmaf_rn(-v, v, 1.0f))};
  return p.w < 1.0f && p.d > 0.0f;
}

/// The first accepted polar try of the stream (index, step) (counters as philox_stream's), three
/// tries per block. The jitter's draws; the moves' come from a warp_try_pool.
__device__ inline accepted_try first_accepted_try(const philox_keys& keys, std::uint64_t index, std::uint32_t step) {
  const auto i0 = static_cast<std::uint32_t>(index), i1 = static_cast<std::uint32_t>(index >> 32);
  for (std::uint32_t block = 0;; ++block) {
    const uint4 b = philox(keys, i0, i1, step, block);
    accepted_try p;
#pragma unroll
    for (int t = 0; t < 3; ++t) {
      if (polar_candidate(b, t, p)) return p;
    }
  }
}

/// A warp's ring of accepted tries in shared memory (4 KiB), (u, w, d) in a 16-byte slot (one
/// store and one load each).
struct warp_tries {
  static constexpr unsigned capacity = 256;
  float4 slot[capacity];
};

/// The accepted polar tries of a warp's particles, handed out a round at a time, one per lane, in
/// the order of one candidate sequence per warp. Lane l's particle in round k is first + l + stride k
/// (k < rounds). Generation g (0, 1, ...) is a Philox block per lane, from the stream (first + l +
/// stride (g mod rounds), step) at block g / rounds (that of the particle (g mod rounds, l), so no
/// counter is used twice); its 96 candidates are taken try by try (t = 0, 1, 2) and lane by lane
/// within a try, and the r-th accepted candidate of the sequence is lane (r mod 32)'s try in round
/// r / 32. Accepted candidates of iid candidates are iid from the accepted law, whatever they are
/// handed to, so each particle gets a polar try as from its own stream; and each is a pure function
/// of (key, first, step): not of N (a lane past the last particle takes its try too), the launch, or
/// how far ahead fill() runs the generations.
///
/// Why: a generation yields about 75 accepted tries, so a round needs one 0.42 times on average,
/// and every lane's Philox block counts. When each lane drew from its own stream until it accepted,
/// its warp waited for the slowest lane: 1.27 blocks per particle (docs/results/bpf.md). Filling
/// ahead for several rounds at once keeps the Philox code (and its round keys) out of the other
/// rounds. Every lane of the warp calls, converged. The ring must be in shared memory (fill stores
/// to it by its shared-window address).
class warp_try_pool {
 public:
  /// At most: what fill() may leave waiting (need - 1 + 96) fits in the ring.
  static constexpr unsigned most_needed = warp_tries::capacity - 95;

  __device__ warp_try_pool(warp_tries& ring, std::uint64_t first, std::uint32_t stride, std::uint32_t rounds,
                           std::uint32_t step)
      : ring_(ring), first_(first), stride_(stride), rounds_(rounds), step_(step) {}

  /// Generations until at least `need` (<= most_needed) accepted tries wait.
  __device__ void fill(const philox_keys& keys, unsigned need) {
    if (tail_ - head_ >= need) return;
    const unsigned lane = threadIdx.x % 32;
    unsigned below;  // the lanes before this one
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(below));
    const auto ring = static_cast<unsigned>(__cvta_generic_to_shared(ring_.slot));
    __syncwarp();  // the last rounds' reads are done before their slots are written again
    do {
      const std::uint64_t index = first_ + lane + std::uint64_t{stride_} * (generation_ % rounds_);
      const uint4 b = philox(keys, static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32), step_,
                             generation_ / rounds_);
      ++generation_;
#pragma unroll
      for (int t = 0; t < 3; ++t) {
        accepted_try p;
        const bool ok = polar_candidate(b, t, p);
        const unsigned accepted = __ballot_sync(~0u, ok);
        // The slot's shared address in every lane and only the store predicated, in PTX: as C++ the
        // compiler branched around the store and, short of registers, recomputed the ring's
        // address inside the branch (about 15 instructions a try where these are 6).
        const unsigned slot = (tail_ + __popc(accepted & below)) % warp_tries::capacity;
        asm volatile(
            "{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %5, 0;\n\t@q st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n\t}"
            :
            : "r"(ring + slot * static_cast<unsigned>(sizeof(float4))), "f"(p.u), "f"(p.w), "f"(p.d), "f"(0.0f),
              "r"(static_cast<unsigned>(ok))
            : "memory");
        tail_ += __popc(accepted);
      }
    } while (tail_ - head_ < need);
    __syncwarp();  // the new tries are visible to every lane
  }

  /// This round's tries, one per lane; 32 must wait (fill).
  __device__ accepted_try take() {
    const float4 p = ring_.slot[(head_ + threadIdx.x % 32) % warp_tries::capacity];
    head_ += 32;
    return {p.x, p.y, p.z};
  }

 private:
  warp_tries& ring_;
  std::uint64_t first_;
  std::uint32_t stride_, rounds_, step_;
  std::uint32_t generation_ = 0;
  unsigned head_ = 0, tail_ = 0;  // tries handed out, and accepted (ring positions mod capacity)
};

/// ln w of an accepted try (w = 1 - d).
__device__ inline float log_w(const accepted_try& p) {
  const float d = p.d;
  const float series =
      -d * __fmaf_rn(d, __fmaf_rn(d, __fmaf_rn(d, __fmaf_rn(d, __fmaf_rn(d, 1.0f / 6, 0.2f), 0.25f), 1.0f / 3), 0.5f),
                     1.0f);
  return d < 0.0625f ? series : lg2(p.w) * ln2;
}

__device__ inline float normal(const accepted_try& p) { return p.u * root(-2.0f * log_w(p) * rcp(p.w)); }

__device__ inline float student_t(const accepted_try& p, float nu, float minus_two_over_nu) {
  return p.u * root(nu * expm1_nonnegative(minus_two_over_nu * log_w(p)) * rcp(p.w));
}

/// What both twins share: the key's round keys, the jitter's N(0, sd^2).
struct moves_base {
  using real = float;
  static constexpr bool fast = true;
  philox_keys keys;
  explicit moves_base(key k) : keys(k) {}
  __device__ float jitter(float x, double sd, std::uint64_t index, std::uint32_t step) const {
    return __fmaf_rn(static_cast<float>(sd), normal(first_accepted_try(keys, index, step)), x);
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

  __device__ float initial(const accepted_try& p) const { return __fmaf_rn(stationary_sd, fast::normal(p), mu); }
  __device__ float predicted_mean(float h) const { return __fmaf_rn(rho, h - mu, mu); }
  __device__ float propagate(float h, const accepted_try& p) const {
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

  __device__ float initial(const accepted_try& p) const { return stationary_sd * fast::normal(p); }
  __device__ float propagate(float x, const accepted_try& p) const {
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
