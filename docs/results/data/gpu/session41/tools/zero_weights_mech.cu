// Session 41: session 40's micro-benchmark (docs/results/data/gpu/session40/tools/quantise_mech.cu,
// its kernels included below) run with a share of zero weights (-inf log-weights, each particle at
// random with probability p = argv[2]), to measure the one open risk of session 40's tile pass:
// its exp takes arguments below the range to -746 and so through the subnormal branch, which a
// warp runs when any of its lanes has such a weight, where the old form selected 0 after the exp.
// Variant 0 is the old form (the library's quantised_weights), 10 the new (quantised_weights_split:
// the clamp and the high words as doubles), 12 the clamp alone; 10 and 12 are checked against 0.
//
// Build (from the repository root): nvcc -O3 -std=c++20 --expt-relaxed-constexpr
//   -gencode arch=compute_90,code=sm_90 -I include docs/results/data/gpu/session41/tools/zero_weights_mech.cu
// The kernels and time_variant are session 40's file's, included whole (its main renamed away).
#define main session40_main
#include "../../session40/tools/quantise_mech.cu"
#undef main

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
