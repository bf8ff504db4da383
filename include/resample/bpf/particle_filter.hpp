// The bootstrap and auxiliary particle filters on the CPU backends (serial or thread pool), for any
// model with the interface of sv_model / linear_gaussian_model, resampling with any scheme of the
// library.
//
//   resample::cpu::parallel ex;
//   resample::bpf::sv_model model(resample::bpf::sv_parameters{});  // mu -1.02, rho 0.9702, sigma 0.178
//   resample::bpf::filter_options opt;
//   opt.particles = 1 << 16;
//   resample::bpf::particle_filter pf(model, ex, opt);
//   for (double y : observations) pf.step(y);          // or bpf::run_filter(...)
//   double ll = pf.log_likelihood();
//
// Tick t (t = 0, 1, ...):
//   t = 0:  x_i ~ the initial law, lw_i = log g(y_0 | x_i)  (the first observation weights x_0)
//   t > 0:  bootstrap: if ESS(lw) < threshold N, resample (ancestors from the exact resampler,
//           key (seed), step t), gather, lw = 0; propagate; lw_i += log g(y_t | x_i).
//           auxiliary: v_i = lw_i + log ghat(y_t | x_i) (first stage); if ESS(v) < threshold N,
//           resample on v and set lw_i = -log ghat of the particle's ancestor, else keep lw;
//           propagate; lw_i += log g(y_t | x_i).
//   The likelihood increment is log sum exp(lw after) - log sum exp(lw before), plus, for the
//   auxiliary filter, the first stage's log sum exp(v) - log sum exp(lw): carrying the weights
//   between resamplings keeps the estimate of p(y_0..t) unbiased whatever the threshold.
//
// Randomness: Philox under key (low, high 32 bits of the seed). The resampler's draws use particle
// indices (counter word c1 = 0) and the shared index (c1 = 0xffffffff); a particle's initial draw
// and propagation noise use index i + 2^32 (c1 = 1) and its jitter i + 2^33 (c1 = 2), all at step
// t, so no two uses share a counter. The serial and parallel executors give the same bits for every
// output: resampling is exact, sums of doubles run over fixed chunks in chunk order.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "resample/core/error.hpp"
#include "resample/core/options.hpp"
#include "resample/core/philox.hpp"
#include "resample/core/random.hpp"
#include "resample/core/validate.hpp"
#include "resample/cpu/resample.hpp"

namespace resample::bpf {

enum class filter_kind { bootstrap, auxiliary };

struct filter_options {
  std::size_t particles = std::size_t{1} << 14;
  std::uint64_t seed = 0;
  scheme resampler = scheme::systematic;
  double ess_threshold = 0.5;  ///< resample when ESS < threshold N; 1 (or more): at every tick
  double jitter = 0.0;         ///< sd of N(0, jitter^2) noise added to resampled states (changes the target)
  filter_kind kind = filter_kind::bootstrap;
  resample::options resampling;  ///< the scheme's options (Metropolis B, rejection bound, ...)
};

/// What a tick reports. mean and sd are of the filtered law x_t | y_0..y_t (weighted particles,
/// before any resampling); `pit` is its CDF at the true state when one is supplied, else NaN.
struct tick_summary {
  double log_likelihood_increment = 0;  ///< log p^(y_t | y_0..y_{t-1})
  double mean = 0, sd = 0;
  double ess = 0;          ///< effective sample size of the weights after weighting y_t
  bool resampled = false;  ///< whether the particles were resampled before propagating to this tick
  double pit = std::numeric_limits<double>::quiet_NaN();
};

namespace detail {
inline constexpr std::uint64_t propagation_index = std::uint64_t{1} << 32;
inline constexpr std::uint64_t jitter_index = std::uint64_t{2} << 32;
/// Sums of doubles run over chunks of this many particles, combined in order: the same bits for
/// any executor.
inline constexpr std::size_t chunk = 4096;

/// log sum exp of N equal log-weights (log N) by the exact sum every backend uses: each weight
/// quantises to exactly 2^F, so Q = N 2^F and the result is log_sum_exp's bits without a pass.
inline double log_sum_exp_of_equal(std::size_t n) {
  const int fraction = fraction_bits(n);
  return log_sum_exp_of(0.0, static_cast<u128>(n) << fraction, fraction);
}

/// Observations y (ticks first_tick, first_tick + 1, ...) must be finite; `truth` empty or as long.
inline void check_observations(std::span<const double> y, std::span<const double> truth, std::size_t first_tick) {
  if (!truth.empty() && truth.size() != y.size()) {
    throw invalid_input("the true states (" + std::to_string(truth.size()) + ") and the observations (" +
                        std::to_string(y.size()) + ") differ in length");
  }
  for (std::size_t t = 0; t < y.size(); ++t) {
    if (!std::isfinite(y[t])) {
      throw invalid_input("observation " + std::to_string(first_tick + t) + " is " +
                              resample::detail::format_value(y[t]) + " (observations must be finite)",
                          first_tick + t);
    }
  }
}

/// The filter's refusal of a tick's log-weights: NaN or +inf at particle `index` (with its state),
/// or, without an index, every weight zero. The same words on every backend.
[[noreturn]] inline void throw_bad_tick(std::size_t tick, std::optional<std::size_t> index, double log_weight,
                                        double state) {
  if (!index) throw invalid_input("tick " + std::to_string(tick) + ": every particle has zero weight");
  throw invalid_input("tick " + std::to_string(tick) + ": the log-weight of particle " + std::to_string(*index) + " is " +
                          resample::detail::format_value(log_weight) + " (state " +
                          resample::detail::format_value(state) + ")",
                      *index);
}

inline void check_filter_options(const filter_options& o) {
  if (o.particles == 0) throw invalid_input("the filter needs at least one particle (N = 0)");
  if (o.particles > 0xffffffffu) throw invalid_input("the filter supports at most 2^32 - 1 particles");
  if (!(o.ess_threshold >= 0.0) || !std::isfinite(o.ess_threshold)) {
    throw invalid_input("ess_threshold = " + resample::detail::format_value(o.ess_threshold) +
                        " is invalid: it must be a finite number >= 0 (1 = resample at every tick)");
  }
  if (!(o.jitter >= 0.0) || !std::isfinite(o.jitter)) {
    throw invalid_input("jitter = " + resample::detail::format_value(o.jitter) + " is invalid: it must be finite and >= 0");
  }
}
}  // namespace detail

template <class Model, class Exec>
class particle_filter {
 public:
  particle_filter(const Model& model, const Exec& ex, const filter_options& opt)
      : model_(model), ex_(ex), opt_((detail::check_filter_options(opt), opt)),
        key_{static_cast<std::uint32_t>(opt.seed), static_cast<std::uint32_t>(opt.seed >> 32)},
        x_(opt.particles), lw_(opt.particles, 0.0), spare_(opt.particles),
        first_stage_(opt.kind == filter_kind::auxiliary ? opt.particles : 0), ancestors_(opt.particles),
        lse_equal_(detail::log_sum_exp_of_equal(opt.particles)) {}

  /// Assimilates observation y_t (t = the number of earlier calls); `truth`, if not NaN, is the true
  /// state, for the PIT. Throws invalid_input, before changing anything, for a non-finite y.
  tick_summary step(double y, double truth = std::numeric_limits<double>::quiet_NaN()) {
    detail::check_observations(std::span<const double>(&y, 1), {}, tick_);
    const auto t = static_cast<std::uint32_t>(tick_);
    const std::size_t n = opt_.particles;
    tick_summary out;
    double lse_before = tick_ == 0 ? lse_equal_ : lse_after_;
    if (tick_ == 0) {
      ex_.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t) {
        for (std::size_t i = begin; i < end; ++i) {
          philox_stream s(key_, detail::propagation_index + i, t);
          x_[i] = model_.initial(s);
          lw_[i] = model_.log_likelihood(y, x_[i]);
        }
      });
    } else {
      const bool auxiliary = opt_.kind == filter_kind::auxiliary;
      double ess_decider = ess_after_;
      if (auxiliary) {
        ex_.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t) {
          for (std::size_t i = begin; i < end; ++i) {
            first_stage_[i] = model_.log_first_stage(y, x_[i]);
            spare_[i] = lw_[i] + first_stage_[i];
          }
        });
        const auto v = weight_statistics_of(spare_);
        out.log_likelihood_increment += v.log_sum_exp - lse_before;
        lse_before = v.log_sum_exp;
        ess_decider = v.ess;
      }
      if (opt_.ess_threshold >= 1.0 || ess_decider < opt_.ess_threshold * static_cast<double>(n)) {
        resample_on(auxiliary ? spare_ : lw_, t, auxiliary);
        lse_before = lse_equal_;
        out.resampled = true;
      }
      ex_.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t) {
        for (std::size_t i = begin; i < end; ++i) {
          philox_stream s(key_, detail::propagation_index + i, t);
          x_[i] = model_.propagate(x_[i], s);
          lw_[i] += model_.log_likelihood(y, x_[i]);
        }
      });
    }
    const auto stats = weight_statistics_of(lw_);
    lse_after_ = stats.log_sum_exp;
    out.log_likelihood_increment += lse_after_ - lse_before;
    ess_after_ = stats.ess;
    out.ess = ess_after_;
    summarise(truth, out);
    log_likelihood_ += out.log_likelihood_increment;
    ++tick_;
    return out;
  }

  [[nodiscard]] double log_likelihood() const { return log_likelihood_; }
  [[nodiscard]] std::size_t ticks() const { return tick_; }
  [[nodiscard]] std::span<const double> states() const { return x_; }
  [[nodiscard]] std::span<const double> log_weights() const { return lw_; }
  [[nodiscard]] const filter_options& options() const { return opt_; }

 private:
  /// log-sum-exp and ESS of w; the exact sums' refusal (NaN, +inf, every weight zero) becomes the
  /// filter's, naming the tick, the particle and its state. (The filter cannot go on after it.)
  cpu::weight_stats weight_statistics_of(const std::vector<double>& w) const {
    try {
      return cpu::weight_statistics(ex_, std::span<const double>(w));
    } catch (const invalid_input& e) {  // N is within the exact sums' range, so these are the only refusals
      const auto i = e.index();
      detail::throw_bad_tick(tick_, i, i ? w[*i] : 0.0, i ? x_[*i] : 0.0);
    }
  }

  /// Ancestors from `weights`, then x and lw gathered: lw = 0, or for the auxiliary filter minus the
  /// ancestor's first-stage weight. Jitter, if asked for, moves every resampled state.
  void resample_on(const std::vector<double>& weights, std::uint32_t t, bool auxiliary) {
    const std::size_t n = opt_.particles;
    cpu::ancestors(ex_, opt_.resampler, std::span<const double>(weights), key_, t, std::span<std::uint32_t>(ancestors_),
                   opt_.resampling);
    ex_.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t) {
      for (std::size_t j = begin; j < end; ++j) {
        const std::size_t a = ancestors_[j];
        spare_[j] = x_[a];
        if (opt_.jitter > 0.0) {
          philox_stream s(key_, detail::jitter_index + j, t);
          spare_[j] = resample::detail::fused(opt_.jitter, standard_normal(s), spare_[j]);
        }
      }
    });
    std::swap(x_, spare_);
    ex_.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t) {
      for (std::size_t j = begin; j < end; ++j) lw_[j] = auxiliary ? -first_stage_[ancestors_[j]] : 0.0;
    });
  }

  /// Mean, sd and PIT of the weighted particles, w_i = exp(lw_i - log sum exp lw), in one pass of
  /// sums shifted by c = x_0 (no cancellation in the variance), over fixed chunks in chunk order:
  /// the GPU filter's formula, in the CPU's order.
  void summarise(double truth, tick_summary& out) {
    const std::size_t n = opt_.particles;
    const std::size_t chunks = (n + detail::chunk - 1) / detail::chunk;
    partials_.assign(chunks, partial_sums{});
    const double shift = x_[0];
    ex_.for_tasks(chunks, [&](std::size_t c) {
      partial_sums& p = partials_[c];
      for (std::size_t i = c * detail::chunk; i < std::min(n, (c + 1) * detail::chunk); ++i) {
        const double w = deterministic_exp(lw_[i] - lse_after_);
        const double d = x_[i] - shift;
        p.w += w;
        p.wx = resample::detail::fused(w, d, p.wx);
        p.wxx = resample::detail::fused(w * d, d, p.wxx);
        if (x_[i] <= truth) p.below += w;  // false for every x when truth is NaN
      }
    });
    partial_sums sum;
    for (const auto& p : partials_) {
      sum.w += p.w;
      sum.wx += p.wx;
      sum.wxx += p.wxx;
      sum.below += p.below;
    }
    const double mean_shift = sum.wx / sum.w;
    out.mean = shift + mean_shift;
    out.sd = std::sqrt(std::max(sum.wxx / sum.w - mean_shift * mean_shift, 0.0));
    if (truth == truth) out.pit = sum.below / sum.w;
  }

  struct partial_sums {
    double w = 0, wx = 0, wxx = 0, below = 0;
  };

  Model model_;
  const Exec& ex_;
  filter_options opt_;
  key key_;
  std::vector<double> x_, lw_, spare_, first_stage_;
  std::vector<std::uint32_t> ancestors_;
  std::vector<partial_sums> partials_;
  std::size_t tick_ = 0;
  double log_likelihood_ = 0;
  double lse_equal_;  ///< log sum exp of N zeros: lw before tick 0 and after every resampling
  double lse_after_ = 0, ess_after_ = 0;
};

/// The whole series through a new filter. `truth` (empty, or one true state per observation)
/// gives each tick its PIT. `progress(t)`, if given, is called after each tick.
struct filter_run {
  double log_likelihood = 0;
  std::vector<tick_summary> ticks;
};

template <class Model, class Exec>
filter_run run_filter(const Model& model, const Exec& ex, std::span<const double> y, const filter_options& opt,
                      std::span<const double> truth = {}, const std::function<void(std::size_t)>& progress = {}) {
  if (y.empty()) throw invalid_input("no observations: T = 0");
  detail::check_observations(y, truth, 0);  // all of them before the first tick runs
  particle_filter pf(model, ex, opt);
  filter_run r;
  r.ticks.reserve(y.size());
  for (std::size_t t = 0; t < y.size(); ++t) {
    r.ticks.push_back(pf.step(y[t], truth.empty() ? std::numeric_limits<double>::quiet_NaN() : truth[t]));
    if (progress) progress(t);
  }
  r.log_likelihood = pf.log_likelihood();
  return r;
}

}  // namespace resample::bpf
