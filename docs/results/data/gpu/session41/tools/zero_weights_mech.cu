// Session 41: session 40's micro-benchmark (docs/results/data/gpu/session40/tools/quantise_mech.cu,
// unchanged above main) run with a share of zero weights (-inf log-weights, each particle at
// random with probability p = argv[2]), to measure the one open risk of session 40's tile pass:
// its exp takes arguments below the range to -746 and so through the subnormal branch, which a
// warp runs when any of its lanes has such a weight, where the old form selected 0 after the exp.
// Variant 0 is the old form (the library's quantised_weights), 10 the new (quantised_weights_split:
// the clamp and the high words as doubles), 12 the clamp alone; 10 and 12 are checked against 0.
//
// Session 40's header:
// Session 40's micro-benchmark of the tile pass's arithmetic: what the slow conversions (float to
// double, floor, double to u64) cost beside the deterministic exp. Each kernel sums
// quantise(deterministic_exp(lw - max), F) over a tile of 2048 float log-weights per block (256
// threads x 8, as tile_pass) and writes each warp's 128-bit sum; every variant must give the same
// sums (checked). Variants:
//   0  the library's quantised_weights (cvt.f64.f32, the exp, floor + two cvt.u64.f64 a weight)
//   1  quantise without conversions: floor by an add rounded down to 2^52 + x, the integer's
//      words read from the sum's bits
//   2  1, and float -> double by the float's bits (the hardware conversion for 0, subnormals,
//      inf and NaN only)
//   3  0 with 2's float -> double
//   4  not the library's exp: Tang's, 2^(j/64) from a table (hi and lo, read through L1) and a
//      degree-5 polynomial on |r| <= ln 2 / 128, about 12 FP64 operations where the library's takes
//      19; its sums differ in the last bits (not checked), as a cheaper exp would need a new
//      definition on every backend
//   5  4 with the table in shared memory
//   6  no exp: w = max(0, 1 + d / 1024), quantised and summed as 0 (what the rest costs)
//   7  no exp and no quantisation: the 8 log-weights' sum in double, as the low word (the loads,
//      the conversions and the warp sums)
//   8  0's arithmetic (the same sums, checked) in blocks that stay: each takes tiles b, b + G, ...
//      (G blocks, as many as fit at once), its tiles copied into shared memory by the copy engine of
//      the multiprocessor (cp.async.bulk, one thread, an mbarrier per buffer), two tiles ahead, so
//      that the loads run under the exps
//   9  8 on the no-exp arithmetic of 6 (checked against 6)
//  10  0's sums (checked) with two instructions fewer a weight: log-weights below the exp's range
//      clamped to -746 (whose exp the arithmetic itself takes to 0, through the subnormal branch)
//      instead of to 0 with the result selected to 0 after; and the 8 weights' high words
//      (floor(w 2^(F - 64)) <= 2^32) summed as doubles, exactly, and converted once
//  11  10's high words as doubles only (the exp's results selected to 0, as deterministic_exp_nonpositive does)
//  12  10's clamp only (quantise's 128-bit values summed)
//  (0-9 call the library's deterministic_exp_nonpositive, which had the -746 clamp only while run 13
//  was built; 10-12 write both forms out)
// Build: nvcc -O3 -std=c++20 --expt-relaxed-constexpr -gencode arch=compute_90,code=sm_90 -I include quantise_mech.cu
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "resample/core/exact_cdf.hpp"
#include "resample/cuda/block/load_blocked.cuh"
#include "resample/cuda/block/wide_sum.cuh"

using resample::u128;
constexpr int threads = 256, items = 8, tile = threads * items;

// 2^(j/64) = hi + lo (the correctly rounded double and the rest), j = 0 .. 63; ln 2 / 64 in two
// parts, the first with 36 significant bits (k hi exact for |k| < 2^17). From mpmath at 200 bits.
__device__ const double exp_table[128] = {
  1.0, 0.0,
  1.0108892860517005, -1.5234778603368577e-17,
  1.0218971486541166, 5.109225028973444e-17,
  1.0330248790212284, 7.600838874027088e-18,
  1.0442737824274138, 8.551889705537965e-17,
  1.0556451783605572, 1.759325738772092e-18,
  1.0671404006768237, -7.899853966841582e-17,
  1.0787607977571199, -6.656660436056593e-17,
  1.0905077326652577, -3.046782079812471e-17,
  1.102382583307841, 5.2660368715706944e-17,
  1.1143867425958924, 1.0410278456845571e-16,
  1.1265216186082418, 5.165856758795457e-17,
  1.1387886347566916, 8.912812676025408e-17,
  1.1511892299529827, 3.250710218863827e-17,
  1.1637248587775775, 3.8292048369240935e-17,
  1.1763969916502812, 5.554203254218079e-17,
  1.189207115002721, 3.982015231465646e-17,
  1.202156731452703, 6.644981499252301e-17,
  1.215247359980469, -7.712630692681488e-17,
  1.22848053610687, -1.89878163130253e-17,
  1.241857812073484, 4.658027591836937e-17,
  1.255380757024691, -6.7113898212968784e-18,
  1.2690509571917332, 2.667932131342186e-18,
  1.2828700160787783, 1.713594918243561e-17,
  1.2968395546510096, 2.5382502794888315e-17,
  1.3109612115247644, -7.181536135519454e-17,
  1.3252366431597413, -2.8587312100388614e-17,
  1.339667524053303, 8.927282594831732e-17,
  1.3542555469368927, 7.70094837980299e-17,
  1.3690024229745905, 9.593797919118849e-17,
  1.383909881963832, -6.770511658794786e-17,
  1.3989796725383112, -9.614213209051323e-17,
  1.4142135623730951, -9.667293313452913e-17,
  1.42961333839197, -1.2031642489053655e-17,
  1.4451808069770467, -3.0237581349939873e-17,
  1.460917794180647, -5.600377186075216e-17,
  1.4768261459394993, -3.483994556892796e-17,
  1.4929077282912648, 1.4192920154284036e-17,
  1.5091644275934228, -1.016455327754295e-16,
  1.5255981507445384, -1.1024941712342561e-16,
  1.5422108254079407, 7.949834809697621e-17,
  1.559004400237837, 3.7812070533575275e-17,
  1.5759808451078865, -1.0136916471278304e-17,
  1.593142151342267, -1.0094406542311964e-16,
  1.6104903319492543, 2.4707192569797888e-17,
  1.6280274218573478, -6.712955084707084e-17,
  1.645755478153965, -1.0125679913674773e-16,
  1.6636765803267364, 5.8909926967131e-17,
  1.681792830507429, 8.199010020581497e-17,
  1.7001063537185235, -8.0237193703977e-18,
  1.718619298122478, -1.851380418263111e-17,
  1.7373338352737062, 3.164389299292957e-17,
  1.7562521603732995, 2.960140695448873e-17,
  1.7753764925265212, 6.429731796556572e-17,
  1.7947090750031072, 1.8227458427912087e-17,
  1.8142521755003989, -9.969531538920349e-17,
  1.8340080864093424, 3.283107224245627e-17,
  1.8539791250833855, 9.761887490727594e-17,
  1.8741676341103, -6.122763413004143e-17,
  1.8945759815869656, 3.4034035352165297e-17,
  1.9152065613971474, -1.0619946056195963e-16,
  1.9360617934922943, 1.0332385960676326e-16,
  1.9571441241754002, 8.960767791036668e-17,
  1.978456026387951, 4.0388753109278167e-17,
};
constexpr double ln2_64_hi = 0.010830424696223417, ln2_64_lo = 2.572804622327669e-14, inv_ln2_64 = 92.33248261689366;

template <bool Shared>
__device__ inline void table_exp_nonpositive(const double (&x)[items], double (&e)[items], const double* table) {
  constexpr double lowest = -745.1332191019412, shifter = 6755399441055744.0;
#pragma unroll
  for (int m = 0; m < items; ++m) {
    const double xc = x[m] < lowest ? 0.0 : x[m];
    const double shifted = fma(xc, inv_ln2_64, shifter);
    const double k = shifted - shifter;
    double r = fma(-k, ln2_64_hi, xc);
    r = fma(-k, ln2_64_lo, r);
    const int ki = static_cast<int>(static_cast<unsigned>(__double_as_longlong(shifted)));
    const int j = ki & 63, scale = ki >> 6;
    double p = 1.0 / 120;
    p = fma(p, r, 1.0 / 24);
    p = fma(p, r, 1.0 / 6);
    p = fma(p, r, 0.5);
    p = fma(p, r, 1.0);
    p = p * r;  // e^r - 1
    double2 t;
    if constexpr (Shared) {
      t = reinterpret_cast<const double2*>(table)[j];
    } else {
      t = __ldg(reinterpret_cast<const double2*>(table) + j);
    }
    const double y = t.x + fma(t.x, p, t.y);
    const double s = __longlong_as_double(static_cast<long long>(scale + 1023) << 52);  // normal results only
    e[m] = x[m] < lowest ? 0.0 : y * s;
  }
}

__device__ inline double to_double_by_bits(float f) {
  const unsigned b = __float_as_uint(f);
  const unsigned e = (b >> 23) & 0xffu;
  const unsigned hi = (b & 0x80000000u) | (((b & 0x7fffffffu) >> 3) + (896u << 20));
  const unsigned lo = b << 29;
  double d = __hiloint2double(static_cast<int>(hi), static_cast<int>(lo));
  if (e == 0 || e == 255) d = static_cast<double>(f);
  return d;
}

/// floor(w 2^F) as quantise, without cvt: t + 2^52 rounded down is floor(t) + 2^52 for 0 <= t < 2^52.
__device__ inline u128 quantise_by_adds(double w, int fraction) {
  const double scale = __longlong_as_double(static_cast<long long>(1023 + fraction) << 52);
  const double scale_hi = __longlong_as_double(static_cast<long long>(959 + fraction) << 52);
  constexpr double two52 = 4503599627370496.0;
  const double h = __dadd_rd(w * scale_hi, two52);   // floor(w 2^(F - 64)) + 2^52, <= 2^32 + 2^52
  const double hi = h - two52;                        // exact
  const double lo = fma(hi, -18446744073709551616.0, w * scale);  // w 2^F - hi 2^64, exact, < 2^64
  const double lh = __dadd_rd(lo * 2.3283064365386963e-10, two52);  // floor(lo / 2^32) + 2^52
  const double ll = fma(lh - two52, -4294967296.0, lo) + two52;      // lo mod 2^32, + 2^52: exact
  const unsigned long long hb = __double_as_longlong(h), lhb = __double_as_longlong(lh),
                           llb = __double_as_longlong(ll);
  const unsigned long long high = hb & 0x1ffffffffull;  // hi <= 2^32: 33 bits
  const unsigned long long low = ((lhb & 0xffffffffull) << 32) | (llb & 0xffffffffull);
  return (static_cast<u128>(high) << 64) | low;
}

template <int Variant>
__global__ void __launch_bounds__(threads) tile_sums(const float* __restrict__ lw, std::size_t n, double max_lw,
                                                     int fraction, u128* out) {
  const std::size_t first = blockIdx.x * std::size_t{tile} + threadIdx.x * items;
  __shared__ alignas(16) double shared_table[Variant == 5 ? 128 : 1];
  if constexpr (Variant == 5) {
    if (threadIdx.x < 128) shared_table[threadIdx.x] = exp_table[threadIdx.x];
    __syncthreads();
  }
  float x[items];
  resample::cuda::block::load_blocked(lw, first, n, x);
  double d[items], w[items];
#pragma unroll
  for (int m = 0; m < items; ++m) {
    const double v = (Variant >= 2) ? to_double_by_bits(x[m]) : static_cast<double>(x[m]);
    d[m] = v - max_lw;
  }
  if constexpr (Variant == 6 || Variant == 7) {
#pragma unroll
    for (int m = 0; m < items; ++m) w[m] = fmax(0.0, fma(d[m], 0.0009765625, 1.0));
  } else if constexpr (Variant == 4) {
    table_exp_nonpositive<false>(d, w, exp_table);
  } else if constexpr (Variant == 5) {
    table_exp_nonpositive<true>(d, w, shared_table);
  } else {
    resample::deterministic_exp_nonpositive(d, w);
  }
  u128 sum = 0;
  if constexpr (Variant == 7) {
    double t = 0;
#pragma unroll
    for (int m = 0; m < items; ++m) t += w[m];
    sum = static_cast<u128>(__double_as_longlong(t));
  }
#pragma unroll
  for (int m = 0; m < items && Variant != 7; ++m) {
    sum += (Variant == 1 || Variant == 2) ? quantise_by_adds(w[m], fraction) : resample::quantise(w[m], fraction);
  }
  sum = resample::cuda::block::warp_sum(sum);
  if ((threadIdx.x & 31) == 0) out[(first / items) / 32] = sum;
}

__device__ inline void bulk_copy(float* dst, const float* src, unsigned bytes, unsigned long long* bar) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst)),
                 b = static_cast<unsigned>(__cvta_generic_to_shared(bar));
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(d),
               "l"(src), "r"(bytes), "r"(b)
               : "memory");
}
__device__ inline void wait_parity(unsigned long long* bar, unsigned parity) {
  const unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(bar));
  unsigned done = 0;
  while (!done) {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(b), "r"(parity)
        : "memory");
  }
}

/// Variants 8 and 9: whole tiles only (n a multiple of the tile, lw 16-byte aligned).
template <int Variant>
__global__ void __launch_bounds__(threads) tile_sums_staged(const float* __restrict__ lw, std::size_t n,
                                                            double max_lw, int fraction, u128* out) {
  __shared__ alignas(128) float buf[2][tile];
  __shared__ alignas(8) unsigned long long bar[2];
  const std::size_t tiles = n / tile, G = gridDim.x;
  if (threadIdx.x == 0) {
    for (int i = 0; i < 2; ++i) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(
                       static_cast<unsigned>(__cvta_generic_to_shared(&bar[i])))
                   : "memory");
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = 0; i < 2; ++i) {
      const std::size_t t = blockIdx.x + i * G;
      if (t < tiles) bulk_copy(buf[i], lw + t * tile, tile * sizeof(float), &bar[i]);
    }
  }
  int i = 0;
  for (std::size_t t = blockIdx.x; t < tiles; t += G, ++i) {
    const int b = i & 1;
    wait_parity(&bar[b], (i >> 1) & 1);
    float x[items];
    const float4* v = reinterpret_cast<const float4*>(&buf[b][threadIdx.x * items]);
    const float4 v0 = v[0], v1 = v[1];
    x[0] = v0.x, x[1] = v0.y, x[2] = v0.z, x[3] = v0.w, x[4] = v1.x, x[5] = v1.y, x[6] = v1.z, x[7] = v1.w;
    __syncthreads();  // buf[b] read by all: it may be filled again
    if (threadIdx.x == 0 && t + 2 * G < tiles) {
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      bulk_copy(buf[b], lw + (t + 2 * G) * tile, tile * sizeof(float), &bar[b]);
    }
    double d[items], w[items];
#pragma unroll
    for (int m = 0; m < items; ++m) d[m] = static_cast<double>(x[m]) - max_lw;
    if constexpr (Variant == 9) {
#pragma unroll
      for (int m = 0; m < items; ++m) w[m] = fmax(0.0, fma(d[m], 0.0009765625, 1.0));
    } else {
      resample::deterministic_exp_nonpositive(d, w);
    }
    u128 sum = 0;
#pragma unroll
    for (int m = 0; m < items; ++m) sum += resample::quantise(w[m], fraction);
    sum = resample::cuda::block::warp_sum(sum);
    if ((threadIdx.x & 31) == 0) out[t * (threads / 32) + threadIdx.x / 32] = sum;
  }
}

/// deterministic_exp_nonpositive's bits, the clamp to -746 (see variant 10), for x <= 0.
__device__ inline void exp_clamped(const double (&x)[items], double (&e)[items]) {
  constexpr double lowest = -745.1332191019412;
  double c[items];
#pragma unroll
  for (int m = 0; m < items; ++m) c[m] = x[m] < lowest ? -746.0 : x[m];
  resample::detail::exp_nonpositive_lockstep(c, e);
}

/// e^x as deterministic_exp_nonpositive has it: arguments below the range replaced by 0, whose exp
/// is cheap and normal, and the results selected to 0 after.
__device__ inline void exp_selected(const double (&x)[items], double (&e)[items]) {
  constexpr double lowest = -745.1332191019412;
  double c[items];
#pragma unroll
  for (int m = 0; m < items; ++m) c[m] = x[m] < lowest ? 0.0 : x[m];
  resample::detail::exp_nonpositive_lockstep(c, e);
#pragma unroll
  for (int m = 0; m < items; ++m) e[m] = x[m] < lowest ? 0.0 : e[m];
}

template <bool Clamp, bool Split>
__global__ void __launch_bounds__(threads) tile_sums_lean(const float* __restrict__ lw, std::size_t n, double max_lw,
                                                          int fraction, u128* out) {
  const std::size_t first = blockIdx.x * std::size_t{tile} + threadIdx.x * items;
  float x[items];
  resample::cuda::block::load_blocked(lw, first, n, x);
  double d[items], w[items];
#pragma unroll
  for (int m = 0; m < items; ++m) d[m] = static_cast<double>(x[m]) - max_lw;
  if constexpr (Clamp) {
    exp_clamped(d, w);
  } else {
    exp_selected(d, w);
  }
  if constexpr (!Split) {
    u128 sum = 0;
#pragma unroll
    for (int m = 0; m < items; ++m) sum += resample::quantise(w[m], fraction);
    sum = resample::cuda::block::warp_sum(sum);
    if ((threadIdx.x & 31) == 0) out[(first / items) / 32] = sum;
    return;
  }
  const double scale = __longlong_as_double(static_cast<long long>(1023 + fraction) << 52);
  const double scale_hi = __longlong_as_double(static_cast<long long>(959 + fraction) << 52);
  double high = 0;  // at most 8 2^32: exact
  u128 low = 0;
#pragma unroll
  for (int m = 0; m < items; ++m) {
    const double hi = floor(w[m] * scale_hi);
    const double lo = fma(hi, -18446744073709551616.0, w[m] * scale);
    high += hi;
    low += static_cast<unsigned long long>(lo);
  }
  u128 sum = (static_cast<u128>(static_cast<unsigned long long>(high)) << 64) + low;
  sum = resample::cuda::block::warp_sum(sum);
  if ((threadIdx.x & 31) == 0) out[(first / items) / 32] = sum;
}

#define CHECK(x)                                                                 \
  do {                                                                           \
    cudaError_t e_ = (x);                                                        \
    if (e_ != cudaSuccess) {                                                     \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e_));                       \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

template <int Variant>
float time_variant(const float* lw, std::size_t n, double max_lw, int fraction, u128* out, int reps) {
  unsigned grid = static_cast<unsigned>((n + tile - 1) / tile);
  auto kernel = Variant == 10   ? &tile_sums_lean<true, true>
                : Variant == 11 ? &tile_sums_lean<false, true>
                : Variant == 12 ? &tile_sums_lean<true, false>
                : Variant >= 8  ? &tile_sums_staged<Variant>
                                : &tile_sums<Variant>;
  if (Variant == 8 || Variant == 9) {
    int per_sm = 0, sms = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    grid = static_cast<unsigned>(per_sm * sms);
    static bool told = false;
    if (!told) std::printf("staged: %d blocks a multiprocessor, grid %u\n", per_sm, grid), told = true;
  }
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  kernel<<<grid, threads>>>(lw, n, max_lw, fraction, out);
  cudaEventRecord(a);
  for (int r = 0; r < reps; ++r) kernel<<<grid, threads>>>(lw, n, max_lw, fraction, out);
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  return 1000.0f * ms / reps;
}

int main(int argc, char** argv) {
  // argv[1]: log2 N (default 24); argv[2]: the share of -inf log-weights (default 0)
  const int log2n = argc > 1 ? std::atoi(argv[1]) : 24;
  const double p = argc > 2 ? std::atof(argv[2]) : 0.0;
  const std::size_t n = std::size_t{1} << log2n;
  std::vector<float> h(n);
  std::mt19937_64 g(40);
  std::normal_distribution<double> z;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::size_t zeros = 0;
  for (auto& v : h) {  // the paper's weights, y = 2: log phi(x + 2); -inf with probability p
    const double x = z(g) + 2.0;
    v = static_cast<float>(-0.5 * x * x - 0.9189385332046727);
    if (u(g) < p) v = -INFINITY, ++zeros;
  }
  h[777] = 0.0f;
  float mx = -INFINITY;
  for (float v : h) mx = std::max(mx, v);
  const int fraction = resample::fraction_bits(n);
  float* lw = nullptr;
  u128* out = nullptr;
  const std::size_t warps = n / 256;
  CHECK(cudaMalloc(&lw, n * sizeof(float)));
  CHECK(cudaMalloc(&out, warps * sizeof(u128)));
  CHECK(cudaMemcpy(lw, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  std::vector<u128> ref(warps), got(warps);
  std::printf("N = 2^%d, p = %g: %zu zero weights\n", log2n, p, zeros);
  for (int round = 0; round < 3; ++round) {
    const float t0 = time_variant<0>(lw, n, mx, fraction, out, 50);
    CHECK(cudaMemcpy(ref.data(), out, warps * sizeof(u128), cudaMemcpyDeviceToHost));
    const float t10 = time_variant<10>(lw, n, mx, fraction, out, 50);
    CHECK(cudaMemcpy(got.data(), out, warps * sizeof(u128), cudaMemcpyDeviceToHost));
    const bool same10 = std::memcmp(ref.data(), got.data(), warps * sizeof(u128)) == 0;
    const float t12 = time_variant<12>(lw, n, mx, fraction, out, 50);
    CHECK(cudaMemcpy(got.data(), out, warps * sizeof(u128), cudaMemcpyDeviceToHost));
    const bool same12 = std::memcmp(ref.data(), got.data(), warps * sizeof(u128)) == 0;
    std::printf("p %g us: old form (select) %.2f | new form (clamp, high words as doubles) %.2f (same %d) | "
                "clamp only %.2f (same %d)\n", p, t0, t10, same10, t12, same12);
  }
  return 0;
}
