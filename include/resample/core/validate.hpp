// Input checks shared by every resampler. Each names the problem and the first offending index.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>

#include "resample/core/error.hpp"
#include "resample/core/exact_cdf.hpp"
#include "resample/core/options.hpp"

namespace resample {

namespace detail {
template <class T>
std::string format_value(T x) {
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}
}  // namespace detail

/// Linear weights, one by one: N >= 1, each finite and >= 0 (-0.0 counts as zero), at least one > 0.
template <class T>
void validate_weight_values(std::span<const T> w) {
  if (w.empty()) throw invalid_input("no weights: N = 0");
  bool any_positive = false;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const T x = w[i];
    if (std::isnan(x)) throw invalid_input("weight at index " + std::to_string(i) + " is NaN", i);
    if (std::isinf(x)) {
      throw invalid_input(
          "weight at index " + std::to_string(i) + " is " + (x > 0 ? "+inf" : "-inf"), i);
    }
    if (x < 0) {
      throw invalid_input("weight at index " + std::to_string(i) + " is negative (" +
                              detail::format_value(x) + ")",
                          i);
    }
    any_positive = any_positive || x > 0;
  }
  if (!any_positive) throw invalid_input("all weights are zero");
}

/// Linear weights for an algorithm that sums them: validate_weight_values, and N times their sum
/// must be finite (scale huge weights down, or give log-weights).
template <class T>
void validate_weights(std::span<const T> w) {
  validate_weight_values(w);
  T total = 0;
  for (const T x : w) total += x;
  if (!std::isfinite(total * static_cast<T>(w.size()))) {
    throw invalid_input("N times the sum of the weights overflows; scale the weights down (or give log-weights)");
  }
}

/// Whether a log-weight is legal: not NaN and not +inf (-inf is a zero weight).
template <class T>
bool is_valid_log_weight(T x) {
  return !std::isnan(x) && !(std::isinf(x) && x > 0);
}

/// Throws the error for the illegal log-weight x found at index i.
template <class T>
[[noreturn]] void throw_bad_log_weight(T x, std::size_t i) {
  throw invalid_input("log-weight at index " + std::to_string(i) + " is " + (std::isnan(x) ? "NaN" : "+inf"), i);
}

[[noreturn]] inline void throw_all_log_weights_zero() {
  throw invalid_input("all log-weights are -inf (every weight is zero)");
}

/// Log-weights: N >= 1, none NaN or +inf, at least one > -inf. -inf is a legal zero weight.
template <class T>
void validate_log_weights(std::span<const T> lw) {
  if (lw.empty()) throw invalid_input("no weights: N = 0");
  bool any_finite = false;
  for (std::size_t i = 0; i < lw.size(); ++i) {
    if (!is_valid_log_weight(lw[i])) throw_bad_log_weight(lw[i], i);
    any_finite = any_finite || !std::isinf(lw[i]);
  }
  if (!any_finite) throw_all_log_weights_zero();
}

}  // namespace resample

namespace resample {

// The errors every backend gives for the same bad input, in one place so that the messages agree.

[[noreturn]] inline void throw_bad_metropolis_eps(double eps) {
  throw invalid_input("Metropolis eps must lie in (0, 1), got " + detail::format_value(eps));
}

[[noreturn]] inline void throw_rejection_bound_not_finite(double log_bound) {
  throw invalid_input("rejection bound must be finite, got log bound " + detail::format_value(log_bound));
}

/// options::fast_exp belongs to the GPU backends (ptx and cuda); the CPU ones compute the exact
/// exponentials only.
inline void refuse_fast_exp(const options& opt, const char* backend) {
  if (opt.fast_exp) {
    throw invalid_input(std::string("options::fast_exp is the GPU backends' (ptx, cuda); the ") + backend +
                        " backend computes the weights' exponentials exactly");
  }
}

/// The options a scheme checks on the host before any work (the device backends, whose other
/// checks run on the device): Metropolis' eps when B is not given, rejection's bound.
inline void check_scheme_options(scheme s, const options& opt) {
  if ((s == scheme::metropolis || s == scheme::megopolis) && !opt.metropolis_steps &&
      !(opt.metropolis_eps > 0.0 && opt.metropolis_eps < 1.0)) {
    throw_bad_metropolis_eps(opt.metropolis_eps);
  }
  if (s == scheme::rejection && opt.rejection_log_bound && !std::isfinite(*opt.rejection_log_bound)) {
    throw_rejection_bound_not_finite(*opt.rejection_log_bound);
  }
}

/// log_w, the first log-weight above the bound, at index i.
[[noreturn]] inline void throw_rejection_bound_below(double log_bound, double log_w, std::size_t i) {
  throw invalid_input("rejection bound (log " + detail::format_value(log_bound) + ") is below the log-weight " +
                          detail::format_value(log_w) + " at index " + std::to_string(i),
                      i);
}

template <class Index>
[[noreturn]] void throw_bad_ancestor(Index value, std::size_t i, std::size_t n) {
  throw invalid_input("ancestor at index " + std::to_string(i) + " is " + detail::format_value(value) +
                          ", outside [0, " + std::to_string(n) + ")",
                      i);
}

[[noreturn]] inline void throw_cumulative_decrease(std::size_t i) {
  throw invalid_input("cumulative offspring decrease at index " + std::to_string(i), i);
}

template <class Index>
[[noreturn]] void throw_cumulative_end(Index last, std::size_t n) {
  throw invalid_input("cumulative offspring end at " + std::to_string(last) + ", not at N = " + std::to_string(n),
                      n - 1);
}

[[noreturn]] inline void throw_bad_batch_offsets() {
  throw invalid_input("batched offsets must run from 0 to N, with one more entry than systems");
}

[[noreturn]] inline void throw_empty_system(std::size_t b) {
  throw invalid_input("system " + std::to_string(b) + " of the batch is empty (offsets must increase)", b);
}

/// Throws invalid_input unless 1 <= N <= the largest size both the exact CDF and Index can address,
/// and the output has N entries.
template <class Index>
void check_size(std::size_t n, std::size_t out_size) {
  if (n == 0) throw invalid_input("no weights: N = 0");
  if (out_size != n) {
    throw invalid_input("output has " + std::to_string(out_size) + " entries for N = " + std::to_string(n) + " weights");
  }
  const auto largest_index = static_cast<std::uint64_t>(std::numeric_limits<Index>::max());
  if (n - 1 > largest_index) {
    throw invalid_input("N = " + std::to_string(n) + " is beyond the index type (largest index " +
                        std::to_string(largest_index) + ")");
  }
  if (n > exact_cdf_max_size) {
    throw invalid_input("N = " + std::to_string(n) + " is beyond the exact CDF (at most 2^32 - 1 particles)");
  }
}

/// Ancestor (or any index) vector: every entry in [0, N), N = its length.
template <class Index>
void validate_ancestors(std::span<const Index> a) {
  const std::size_t n = a.size();
  for (std::size_t i = 0; i < n; ++i) {
    bool negative = false;
    if constexpr (std::is_signed_v<Index>) negative = a[i] < 0;
    if (negative || static_cast<std::size_t>(a[i]) >= n) throw_bad_ancestor(a[i], i, n);
  }
}

}  // namespace resample
