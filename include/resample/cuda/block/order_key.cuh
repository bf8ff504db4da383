// Order-preserving 64-bit keys of doubles, so that atomicMax or a max-reduction over unsigned
// integers finds the largest double exactly, in any order. -0 counts as +0 (its sign cannot change
// any quantised weight); key 0 lies below every double. Device code.
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

}  // namespace resample::cuda
