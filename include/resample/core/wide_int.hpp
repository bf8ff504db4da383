// Unsigned integers wider than 64 bits for the exact CDF: 128-bit sums (the compiler's
// unsigned __int128, on host and device) and 192-bit products for exact comparisons of ratios.
#pragma once

#include <cstdint>

#include "resample/core/config.hpp"

namespace resample {

__extension__ typedef unsigned __int128 u128;  // __extension__: GCC and nvcc accept it under -pedantic

/// A 192-bit unsigned integer, limbs least significant first.
struct u192 {
  std::uint64_t limb[3];
};

/// a * b exactly, for a < 2^128 and b < 2^64.
RESAMPLE_HOST_DEVICE inline u192 mul_wide(u128 a, std::uint64_t b) {
  const u128 lo = static_cast<u128>(static_cast<std::uint64_t>(a)) * b;
  const u128 hi = static_cast<u128>(static_cast<std::uint64_t>(a >> 64)) * b;
  const u128 mid = (lo >> 64) + static_cast<std::uint64_t>(hi);  // < 2^65: no overflow
  return {{static_cast<std::uint64_t>(lo), static_cast<std::uint64_t>(mid),
           static_cast<std::uint64_t>(hi >> 64) + static_cast<std::uint64_t>(mid >> 64)}};
}

RESAMPLE_HOST_DEVICE inline bool operator<(const u192& a, const u192& b) {
  if (a.limb[2] != b.limb[2]) return a.limb[2] < b.limb[2];
  if (a.limb[1] != b.limb[1]) return a.limb[1] < b.limb[1];
  return a.limb[0] < b.limb[0];
}

RESAMPLE_HOST_DEVICE inline bool operator<=(const u192& a, const u192& b) { return !(b < a); }

/// The nearest double (round to nearest even is not needed: only estimates use it).
RESAMPLE_HOST_DEVICE inline double to_double(u128 x) {
  return static_cast<double>(static_cast<std::uint64_t>(x >> 64)) * 18446744073709551616.0 +
         static_cast<double>(static_cast<std::uint64_t>(x));
}

/// The high 128 bits of a * b for a, b < 2^128 (a 256-bit product).
RESAMPLE_HOST_DEVICE inline u128 mul_high(u128 a, u128 b) {
  const std::uint64_t a0 = static_cast<std::uint64_t>(a), a1 = static_cast<std::uint64_t>(a >> 64);
  const std::uint64_t b0 = static_cast<std::uint64_t>(b), b1 = static_cast<std::uint64_t>(b >> 64);
  const u128 p00 = static_cast<u128>(a0) * b0;
  const u128 p01 = static_cast<u128>(a0) * b1;
  const u128 p10 = static_cast<u128>(a1) * b0;
  const u128 p11 = static_cast<u128>(a1) * b1;
  const u128 middle = (p00 >> 64) + static_cast<std::uint64_t>(p01) + static_cast<std::uint64_t>(p10);
  return p11 + (p01 >> 64) + (p10 >> 64) + (middle >> 64);
}

}  // namespace resample
