// The CPU backends' entry points: resampling as a pure function of (scheme, log-weights, key, step).
//
//   resample::cpu::serial ex;          // or resample::cpu::parallel ex(16);
//   resample::cpu::ancestors(ex, resample::scheme::systematic, log_w, {seed, stream}, step, a);
//
// Templated on the log-weight type T (float, double) and the index type (int32_t, int64_t). With
// the exact CDF (the default) `serial` and `parallel` give the same bits for every scheme, size and
// thread count, and so will the CUDA and PTX backends. Errors are resample::invalid_input, thrown
// before anything is written.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "resample/core/options.hpp"
#include "resample/cpu/executor.hpp"
#include "resample/cpu/float_cdf.hpp"
#include "resample/cpu/megopolis.hpp"
#include "resample/cpu/metropolis.hpp"
#include "resample/cpu/multinomial.hpp"
#include "resample/cpu/multinomial_sorted.hpp"
#include "resample/cpu/rejection.hpp"
#include "resample/cpu/residual.hpp"
#include "resample/cpu/ssp.hpp"
#include "resample/cpu/stratified.hpp"
#include "resample/cpu/systematic.hpp"

namespace resample::cpu {

/// One draw of N ancestors a^j (0-based) into `a` (size N).
template <class Exec, class T, class Index>
void ancestors(const Exec& ex, scheme s, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> a,
               const options& opt = {}) {
  refuse_fast_exp(opt, "cpu");
  const bool cdf_scheme = s == scheme::multinomial || s == scheme::stratified || s == scheme::systematic;
  if (cdf_scheme && opt.cdf == precision::float32) return float_cdf_ancestors<float>(ex, s, lw, k, step, a);
  if (cdf_scheme && opt.cdf == precision::float64) return float_cdf_ancestors<double>(ex, s, lw, k, step, a);
  switch (s) {
    case scheme::multinomial: return multinomial_ancestors(ex, lw, k, step, a);
    case scheme::multinomial_sorted: return multinomial_sorted_ancestors(ex, lw, k, step, a);
    case scheme::stratified: return stratified_ancestors(ex, lw, k, step, a);
    case scheme::systematic: return systematic_ancestors(ex, lw, k, step, a);
    case scheme::residual: return residual_ancestors(ex, lw, k, step, a);
    case scheme::ssp: return ssp_ancestors(ex, lw, k, step, a);
    case scheme::metropolis: return metropolis_ancestors(ex, lw, k, step, a, opt);
    case scheme::megopolis: return megopolis_ancestors(ex, lw, k, step, a, opt);
    case scheme::rejection: return rejection_ancestors(ex, lw, k, step, a, opt);
  }
}

/// Code 9: offspring counts o^i = #{j : a^j = i}. Counts are exact, so the parallel increments
/// give the serial result.
template <class Exec, class Index>
void ancestors_to_offspring(const Exec& ex, std::span<const Index> a, std::span<Index> o) {
  if (o.size() != a.size()) throw invalid_input("offspring output has the wrong size");
  validate_ancestors(a);
  std::fill(o.begin(), o.end(), Index{0});
  ex.for_blocks(a.size(), [&](std::size_t begin, std::size_t end, std::size_t) {
    for (std::size_t j = begin; j < end; ++j) std::atomic_ref<Index>(o[static_cast<std::size_t>(a[j])]).fetch_add(1, std::memory_order_relaxed);
  });
}

/// One draw in the offspring form: o^i = #{j : a^j = i} for the ancestors `ancestors` would give.
template <class Exec, class T, class Index>
void offspring(const Exec& ex, scheme s, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> o,
               const options& opt = {}) {
  std::vector<Index> a(o.size());
  ancestors(ex, s, lw, k, step, std::span<Index>(a), opt);
  ancestors_to_offspring(ex, std::span<const Index>(a), o);
}

/// Inclusive prefix sum O^i = o^0 + ... + o^i (exact integers, so blocked sums agree).
template <class Exec, class Index>
void offspring_to_cumulative(const Exec& ex, std::span<const Index> o, std::span<Index> O) {
  if (O.size() != o.size()) throw invalid_input("cumulative offspring output has the wrong size");
  std::vector<Index> block_start(ex.blocks(o.size()) + 1, 0);
  ex.for_blocks(o.size(), [&](std::size_t begin, std::size_t end, std::size_t b) {
    Index sum = 0;
    for (std::size_t i = begin; i < end; ++i) sum += o[i];
    block_start[b + 1] = sum;
  });
  for (std::size_t b = 1; b < block_start.size(); ++b) block_start[b] += block_start[b - 1];
  ex.for_blocks(o.size(), [&](std::size_t begin, std::size_t end, std::size_t b) {
    Index running = block_start[b];
    for (std::size_t i = begin; i < end; ++i) O[i] = running += o[i];
  });
}

/// One draw in the cumulative-offspring form (what Codes 4 and 5 produce).
template <class Exec, class T, class Index>
void cumulative_offspring(const Exec& ex, scheme s, std::span<const T> lw, key k, std::uint32_t step,
                          std::span<Index> O, const options& opt = {}) {
  std::vector<Index> o(O.size());
  offspring(ex, s, lw, k, step, std::span<Index>(o), opt);
  offspring_to_cumulative(ex, std::span<const Index>(o), O);
}

/// Code 8: cumulative offspring O (non-decreasing, O^{N-1} = N) to sorted ancestors.
template <class Exec, class Index>
void cumulative_offspring_to_ancestors(const Exec& ex, std::span<const Index> O, std::span<Index> a) {
  const std::size_t n = O.size();
  if (a.size() != n) throw invalid_input("ancestor output has the wrong size");
  for (std::size_t i = 0; i < n; ++i) {
    if (O[i] < (i == 0 ? Index{0} : O[i - 1])) {
      throw_cumulative_decrease(i);
    }
  }
  if (n > 0 && static_cast<std::size_t>(O[n - 1]) != n) {
    throw_cumulative_end(O[n - 1], n);
  }
  ex.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t) {
    for (std::size_t i = begin; i < end; ++i) {
      for (auto j = static_cast<std::size_t>(i == 0 ? Index{0} : O[i - 1]); j < static_cast<std::size_t>(O[i]); ++j) {
        a[j] = static_cast<Index>(i);
      }
    }
  });
}

/// Code 7 with the library's deterministic semantics: PREPERMUTE's atomic minimum claims run in
/// parallel (the minimum does not depend on order); the chase runs in index order, as in
/// cpu_reference/permute_parallel.hpp, so every backend returns the same permutation.
template <class Exec, class Index>
void permute(const Exec& ex, std::span<const Index> a, std::span<Index> c) {
  const std::size_t n = a.size();
  if (c.size() != n) throw invalid_input("permute output has the wrong size");
  validate_ancestors(a);
  std::vector<Index> d(n, static_cast<Index>(n));
  ex.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t) {
    for (std::size_t i = begin; i < end; ++i) {
      std::atomic_ref<Index> slot(d[static_cast<std::size_t>(a[i])]);
      Index seen = slot.load(std::memory_order_relaxed);
      while (static_cast<Index>(i) < seen && !slot.compare_exchange_weak(seen, static_cast<Index>(i))) {
      }
    }
  });
  for (std::size_t i = 0; i < n; ++i) {
    auto x = static_cast<std::size_t>(d[static_cast<std::size_t>(a[i])]);
    if (x != i) {
      x = i;
      while (static_cast<std::size_t>(d[x]) < n) x = static_cast<std::size_t>(d[x]);
      d[x] = static_cast<Index>(i);
    }
  }
  ex.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t) {
    for (std::size_t i = begin; i < end; ++i) c[i] = a[static_cast<std::size_t>(d[i])];
  });
}

/// log sum_i exp(lw_i), from the exact sum: max + ln(Q 2^-F). The same bits on every backend.
template <class Exec, class T>
double log_sum_exp(const Exec& ex, std::span<const T> lw) {
  if (lw.empty()) throw invalid_input("no weights: N = 0");
  const auto s = summarise(ex, lw);
  return log_sum_exp_of(static_cast<double>(s.max_log_w), s.total, s.fraction);
}

/// The log-likelihood increment of a particle filter step, log(sum_i w_t^i / sum_i w_{t-1}^i):
/// lw_t are the log-weights after weighting (lw_{t-1} plus the log-likelihood of the observation),
/// lw_prev those before. With resampling at every step lw_prev is constant and this is
/// log mean exp(log g). Both sums exact (see log_sum_exp).
template <class Exec, class T>
double log_likelihood_increment(const Exec& ex, std::span<const T> lw_t, std::span<const T> lw_prev) {
  if (lw_t.size() != lw_prev.size()) throw invalid_input("log-weights before and after have different sizes");
  return log_sum_exp(ex, lw_t) - log_sum_exp(ex, lw_prev);
}

/// log sum exp and the effective sample size of the same log-weights, from one summary (one pass
/// instead of two). The bits of log_sum_exp and effective_sample_size.
struct weight_stats {
  double log_sum_exp;
  double ess;
};

template <class Exec, class T>
weight_stats weight_statistics(const Exec& ex, std::span<const T> lw) {
  if (lw.empty()) throw invalid_input("no weights: N = 0");
  const auto s = summarise(ex, lw);
  std::vector<u128> block_sum(ex.blocks(lw.size()), 0);
  ex.for_blocks(lw.size(), [&](std::size_t begin, std::size_t end, std::size_t b) {
    u128 sum = 0;
    for (std::size_t i = begin; i < end; ++i) {
      const double w = deterministic_exp(static_cast<double>(lw[i]) - static_cast<double>(s.max_log_w));
      sum += quantise(w * w, s.fraction);
    }
    block_sum[b] = sum;
  });
  u128 squares = 0;
  for (const u128 x : block_sum) squares += x;
  return {log_sum_exp_of(static_cast<double>(s.max_log_w), s.total, s.fraction),
          effective_sample_size_of(s.total, squares, s.fraction)};
}

/// Effective sample size (sum w)^2 / sum w^2, with both sums exact in fixed point (w^2 is the
/// correctly rounded square of w, quantised like w), so the same bits on every backend.
template <class Exec, class T>
double effective_sample_size(const Exec& ex, std::span<const T> lw) {
  return weight_statistics(ex, lw).ess;
}

/// Many independent systems in one call: system b has the log-weights lw[offsets[b] .. offsets[b+1])
/// and gets the ancestors (local to the system, 0-based) at the same positions of `a`; it is
/// resampled exactly as a call of its own with key {k.seed, k.stream + b}. Systems run in parallel
/// on a parallel executor, each one serially.
template <class Exec, class T, class Index>
void ancestors_batched(const Exec& ex, scheme s, std::span<const T> lw, std::span<const std::size_t> offsets, key k,
                       std::uint32_t step, std::span<Index> a, const options& opt = {}) {
  if (offsets.size() < 2 || offsets.front() != 0 || offsets.back() != lw.size() || a.size() != lw.size()) {
    throw_bad_batch_offsets();
  }
  for (std::size_t b = 0; b + 1 < offsets.size(); ++b) {
    if (offsets[b + 1] <= offsets[b]) {
      throw_empty_system(b);
    }
  }
  const serial one;
  ex.for_tasks(offsets.size() - 1, [&](std::size_t b) {
    const std::size_t begin = offsets[b];
    const std::size_t size = offsets[b + 1] - begin;
    ancestors(one, s, lw.subspan(begin, size), key{k.seed, k.stream + static_cast<std::uint32_t>(b)}, step,
              a.subspan(begin, size), opt);
  });
}

}  // namespace resample::cpu
