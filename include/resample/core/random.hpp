// Draws from a philox_stream that give the same bits on host and device: uniforms that are never
// 0 or 1, uniform integers without modulo bias, normal and Student-t variates built only from
// deterministic_log / deterministic_exp, sqrt and basic operations (all correctly rounded).
#pragma once

#include <cstdint>

#include "resample/core/deterministic_math.hpp"
#include "resample/core/philox.hpp"
#include "resample/core/wide_int.hpp"

namespace resample {

/// (2x + 1) / 2^33 for a 32-bit x: one of 2^32 equally spaced doubles in (0, 1), exact.
RESAMPLE_HOST_DEVICE inline double uniform_open_32(std::uint32_t x) {
  return (2.0 * static_cast<double>(x) + 1.0) * 1.16415321826934814453125e-10;  // 2^-33
}

/// (2m + 1) / 2^53 for the top 52 bits m of a 64-bit x: 2^52 equally spaced doubles in (0, 1), exact.
RESAMPLE_HOST_DEVICE inline double uniform_open_53(std::uint64_t x) {
  return static_cast<double>(((x >> 12) << 1) | 1u) * 1.1102230246251565404236316680908203125e-16;  // 2^-53
}

/// A uniform double in (0, 1) with 52 random bits, from the next two words of s.
RESAMPLE_HOST_DEVICE inline double uniform_open(philox_stream& s) { return uniform_open_53(s.next64()); }

/// j ~ U{0, ..., n - 1}, exactly, for 1 <= n < 2^32 (Lemire, 2019: multiply, and reject the few
/// low products that would bias the result; one word per try, rarely more than one).
RESAMPLE_HOST_DEVICE inline std::uint32_t uniform_below(philox_stream& s, std::uint32_t n) {
  std::uint64_t m = static_cast<std::uint64_t>(s.next()) * n;
  auto low = static_cast<std::uint32_t>(m);
  if (low < n) {
    const std::uint32_t threshold = (0u - n) % n;  // 2^32 mod n
    while (low < threshold) {
      m = static_cast<std::uint64_t>(s.next()) * n;
      low = static_cast<std::uint32_t>(m);
    }
  }
  return static_cast<std::uint32_t>(m >> 32);
}

/// j ~ U{0, ..., n - 1}, exactly, for 1 <= n < 2^64 (Lemire, with 64-bit words).
RESAMPLE_HOST_DEVICE inline std::uint64_t uniform_below(philox_stream& s, std::uint64_t n) {
  u128 m = static_cast<u128>(s.next64()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0u - n) % n;
    while (low < threshold) {
      m = static_cast<u128>(s.next64()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

/// v ~ U{0, ..., n - 1}, exactly, for 1 <= n < 2^128 (Lemire, with 128-bit words from 4 words).
RESAMPLE_HOST_DEVICE inline u128 uniform_below(philox_stream& s, u128 n) {
  auto draw = [&s] { return (static_cast<u128>(s.next64()) << 64) | s.next64(); };
  u128 x = draw();
  u128 low = x * n;  // the low 128 bits of the 256-bit product
  if (low < n) {
    const u128 threshold = (0 - n) % n;
    while (low < threshold) {
      x = draw();
      low = x * n;
    }
  }
  return mul_high(x, n);
}

/// A standard normal variate, by Marsaglia's polar method (rejection: about 1.27 tries of 4 words).
/// The loop only finds the accepted pair; the log and the square root follow it, once, so that on
/// a GPU the lanes of a warp that accept at different tries still do the costly part together.
RESAMPLE_HOST_DEVICE inline double standard_normal(philox_stream& s) {
  double u, v, r2;
  do {
    u = 2.0 * uniform_open_53(s.next64()) - 1.0;  // exact: (-1, 1)
    v = 2.0 * uniform_open_53(s.next64()) - 1.0;
    r2 = detail::fused(u, u, v * v);
  } while (!(r2 < 1.0 && r2 > 0.0));
  return u * std::sqrt(-2.0 * deterministic_log(r2) / r2);
}

/// A standard Student-t variate with nu > 0 degrees of freedom, by Bailey's polar method (1994):
/// t = u sqrt(nu (w^(-2/nu) - 1) / w), w = u^2 + v^2 < 1 (the costly part after the loop, as above).
RESAMPLE_HOST_DEVICE inline double student_t(philox_stream& s, double nu) {
  double u, v, w;
  do {
    u = 2.0 * uniform_open_53(s.next64()) - 1.0;
    v = 2.0 * uniform_open_53(s.next64()) - 1.0;
    w = detail::fused(u, u, v * v);
  } while (!(w < 1.0 && w > 0.0));
  const double c = deterministic_exp(-2.0 / nu * deterministic_log(w)) - 1.0;
  return u * std::sqrt(nu * c / w);
}

}  // namespace resample
