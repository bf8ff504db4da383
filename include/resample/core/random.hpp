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

/// An accepted try of the polar methods below: u and w = u^2 + v^2, 0 < w < 1.
struct polar_point {
  double u, w;
};

/// One try of the polar methods: (u, v) uniform on (-1, 1)^2 from the next four words of s (two
/// 64-bit draws; exact), w = u^2 + v^2; whether it is accepted (0 < w < 1), with `p` set either way.
RESAMPLE_HOST_DEVICE inline bool polar_try_once(philox_stream& s, polar_point& p) {
  const double u = 2.0 * uniform_open_53(s.next64()) - 1.0;  // exact: (-1, 1)
  const double v = 2.0 * uniform_open_53(s.next64()) - 1.0;
  p = {u, detail::fused(u, u, v * v)};
  return p.w < 1.0 && p.w > 0.0;
}

/// The first accepted try of s (about 1.27 tries of 4 words). The transforms below follow it,
/// once, so that on a GPU the lanes of a warp that accept at different tries still do the costly
/// part together (and a GPU may find the tries of several particles first, then transform them).
RESAMPLE_HOST_DEVICE inline polar_point polar_try(philox_stream& s) {
  polar_point p;
  while (!polar_try_once(s, p)) {
  }
  return p;
}

/// A standard normal variate from an accepted try, by Marsaglia's polar method: u sqrt(-2 ln w / w).
RESAMPLE_HOST_DEVICE inline double standard_normal(const polar_point& p) {
  return p.u * std::sqrt(-2.0 * deterministic_log(p.w) / p.w);
}

/// A standard Student-t variate with nu > 0 degrees of freedom from an accepted try, by Bailey's
/// polar method (1994): t = u sqrt(nu (w^(-2/nu) - 1) / w).
RESAMPLE_HOST_DEVICE inline double student_t(const polar_point& p, double nu) {
  const double c = deterministic_exp(-2.0 / nu * deterministic_log(p.w)) - 1.0;
  return p.u * std::sqrt(nu * c / p.w);
}

/// A standard normal variate from s (the polar method above).
RESAMPLE_HOST_DEVICE inline double standard_normal(philox_stream& s) { return standard_normal(polar_try(s)); }

/// A standard Student-t variate with nu > 0 degrees of freedom from s (Bailey's polar method above).
RESAMPLE_HOST_DEVICE inline double student_t(philox_stream& s, double nu) { return student_t(polar_try(s), nu); }

}  // namespace resample
