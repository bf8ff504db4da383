// Order-preserving 64-bit keys of doubles (and 32-bit keys of floats), so that atomicMax or a
// max-reduction over unsigned integers finds the largest value exactly, in any order. -0 counts as
// +0 (its sign cannot change any quantised weight); key 0 lies below every value. Device code.
#pragma once

namespace resample::cuda {

__device__ inline unsigned long long order_key(double x) {
  if (x == 0) x = 0;
  const auto b = static_cast<unsigned long long>(__double_as_longlong(x));
  return (b >> 63) ? ~b : b | (1ULL << 63);
}

__device__ inline double from_order_key(unsigned long long k) {
  const unsigned long long b = (k >> 63) ? (k & ~(1ULL << 63)) : ~k;
  return __longlong_as_double(static_cast<long long>(b));
}

__device__ inline unsigned order_key(float x) {
  if (x == 0) x = 0;
  const unsigned b = __float_as_uint(x);
  return (b >> 31) ? ~b : b | (1u << 31);
}

__device__ inline float from_order_key(unsigned k) {
  const unsigned b = (k >> 31) ? (k & ~(1u << 31)) : ~k;
  return __uint_as_float(b);
}

}  // namespace resample::cuda
