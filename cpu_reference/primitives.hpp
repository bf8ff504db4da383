// Code 1 of Murray, Lee & Jacob (appendix A): the primitive operations the other Codes use.
//
//   INCLUSIVE-PREFIX-SUM  W^i = sum_{j <= i} w^j
//   EXCLUSIVE-PREFIX-SUM  W^i = sum_{j <  i} w^j            (W^0 = 0)
//   ADJACENT-DIFFERENCE   w^i = W^i - W^{i-1}                (w^0 = W^0); inverse of the inclusive sum
//   SUM                   sum_i w^i
//   LOWER-BOUND           the lowest j with W^j >= u, for W sorted ascending (N if none)
//
// Indices are 0-based here and in the whole library; the paper's are 1-based. Serial, in the
// order of the index, so floating-point results are those of a left-to-right sum.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace resample::reference {

template <class T>
std::vector<T> inclusive_prefix_sum(std::span<const T> w) {
  std::vector<T> W(w.size());
  T running{};
  for (std::size_t i = 0; i < w.size(); ++i) {
    running += w[i];
    W[i] = running;
  }
  return W;
}

template <class T>
std::vector<T> exclusive_prefix_sum(std::span<const T> w) {
  std::vector<T> W(w.size());
  T running{};
  for (std::size_t i = 0; i < w.size(); ++i) {
    W[i] = running;
    running += w[i];
  }
  return W;
}

template <class T>
std::vector<T> adjacent_difference(std::span<const T> W) {
  std::vector<T> w(W.size());
  for (std::size_t i = 0; i < W.size(); ++i) w[i] = i == 0 ? W[0] : W[i] - W[i - 1];
  return w;
}

template <class T>
T sum(std::span<const T> w) {
  T total{};
  for (const T& x : w) total += x;
  return total;
}

/// Binary search; W must be sorted ascending. Returns W.size() when every W^j < u.
template <class T>
std::size_t lower_bound(std::span<const T> W, T u) {
  std::size_t lo = 0;
  std::size_t hi = W.size();
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (W[mid] < u) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace resample::reference
