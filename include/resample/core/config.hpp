// Host/device annotations: the core headers compile as plain C++ and, under nvcc, as CUDA code
// callable from kernels (like Random123's R123_CUDA_DEVICE).
#pragma once

#if defined(__CUDACC__)
#define RESAMPLE_HOST_DEVICE __host__ __device__
#else
#define RESAMPLE_HOST_DEVICE
#endif

// Unrolls the loop that follows under nvcc (host compilers unroll on their own and warn about the pragma).
#if defined(__CUDACC__)
#define RESAMPLE_UNROLL _Pragma("unroll")
#else
#define RESAMPLE_UNROLL
#endif

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace resample::detail {

/// a * b + c with one rounding, on host and device alike.
RESAMPLE_HOST_DEVICE inline double fused(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

/// std::bit_width on host and device alike: in kernels (nvcc 13 with libstdc++ 13) std::bit_width
/// compiled without complaint and returned wrong widths.
RESAMPLE_HOST_DEVICE constexpr int bit_width(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return 64 - __clzll(static_cast<long long>(x));
#else
  return static_cast<int>(std::bit_width(x));
#endif
}

RESAMPLE_HOST_DEVICE inline std::uint64_t bits_of(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
#endif
}

RESAMPLE_HOST_DEVICE inline double double_of(std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(b));
#else
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
#endif
}

}  // namespace resample::detail
