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
// output: resampling is exact, and the tick's statistics (log-sum-exp, ESS, mean, sd, PIT) are
// sums in the fixed order of chunk_statistics.hpp, formed chunk by chunk as the particles move,
// as the GPU filter forms them inside its propagation kernel.
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

#include "resample/bpf/chunk_statistics.hpp"
#include "resample/bpf/parameter_checks.hpp"
#include "resample/core/error.hpp"
#include "resample/core/options.hpp"
#include "resample/core/philox.hpp"
#include "resample/core/random.hpp"
#include "resample/core/validate.hpp"
#include "resample/cpu/resample.hpp"

namespace resample::bpf {

enum class filter_kind { bootstrap, auxiliary };

/// How the particles are stored and moved.
enum class filter_precision {
  /// States and log-weights in double, every draw and density from the deterministic exp / log:
  /// the same bits on every backend. The default.
  exact,
  /// The cuda backend only (cuda_filter with its own kernels): states and log-weights in float,
  /// draws and densities from the GPU's approximate ex2 / lg2 / sqrt / cos (bpf/fast_moves.cuh),
  /// 32-bit Philox words, no rejection. Half the bytes per particle and a fraction of the
  /// instructions; the resampler draws exactly on the float log-weights, its weights' exponentials
  /// by the GPU's ex2.approx (options::fast_exp) for systematic and stratified above 8192
  /// particles and by the deterministic exp otherwise, and the tick's sums are
  /// added in float per thread (its N / (512 G) particles, G the kernels' blocks: fast_blocks) and
  /// in double across threads and blocks. Log-weights carried across many ticks without resampling
  /// lose absolute precision in float (ulp(1e4) = 1e-3). Not the CPU's bits: tested statistically
  /// (against Kalman, and for calibration).
  fast,
};

struct filter_options {
  std::size_t particles = std::size_t{1} << 14;
  std::uint64_t seed = 0;
  scheme resampler = scheme::systematic;
  double ess_threshold = 0.5;  ///< resample when ESS < threshold N; 1 (or more): at every tick
  double jitter = 0.0;         ///< sd of N(0, jitter^2) noise added to resampled states (changes the target)
  filter_kind kind = filter_kind::bootstrap;
  resample::options resampling;  ///< the scheme's options (Metropolis B, rejection bound, ...)
  filter_precision precision = filter_precision::exact;
  /// Precision fast on the cuda backend: at most this many blocks for the particle kernels (each
  /// moves a share of the particles); 0, as many as the GPU runs at once (3 per multiprocessor).
  /// Fewer leave multiprocessors to other work. The draws, so the particles, do not depend on it;
  /// the rounding of the tick's float sums does. Ignored elsewhere.
  std::size_t fast_blocks = 0;
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
    refuse("ess_threshold", o.ess_threshold, "it must be a finite number >= 0 (1 = resample at every tick)");
  }
  if (!(o.jitter >= 0.0) || !std::isfinite(o.jitter)) refuse("jitter", o.jitter, "it must be finite and >= 0");
  if (o.resampling.fast_exp) {
    throw invalid_input("filter_options::resampling.fast_exp is the filter's to set: precision 'fast' gives its "
                        "resampler the GPU's approximate exp, precision 'exact' the CPU's bits");
  }
}

/// The CPU filters have exact precision only.
inline const filter_options& check_cpu_filter_options(const filter_options& o) {
  check_filter_options(o);
  if (o.precision != filter_precision::exact) {
    throw invalid_input("precision 'fast' runs on the cuda backend only (the CPU filters are exact)");
  }
  return o;
}
}  // namespace detail

template <class Model, class Exec>
class particle_filter {
 public:
  particle_filter(const Model& model, const Exec& ex, const filter_options& opt)
      : model_(model), ex_(ex), opt_(detail::check_cpu_filter_options(opt)),
        key_{static_cast<std::uint32_t>(opt.seed), static_cast<std::uint32_t>(opt.seed >> 32)},
        x_(opt.particles), lw_(opt.particles, 0.0), spare_(opt.particles),
        first_stage_(opt.kind == filter_kind::auxiliary ? opt.particles : 0), ancestors_(opt.particles),
        chunks_((opt.particles + detail::chunk - 1) / detail::chunk), lse_equal_(detail::log_sum_exp_of_equal(opt.particles)) {}

  /// Assimilates observation y_t (t = the number of earlier calls); `truth`, if not NaN, is the true
  /// state, for the PIT. Throws invalid_input, before changing anything, for a non-finite y.
  tick_summary step(double y, double truth = std::numeric_limits<double>::quiet_NaN()) {
    detail::check_observations(std::span<const double>(&y, 1), {}, tick_);
    const auto t = static_cast<std::uint32_t>(tick_);
    tick_summary out;
    double lse_before = tick_ == 0 ? lse_equal_ : lse_after_;
    const double shift = tick_ == 0 ? 0.0 : mean_;  // the last filtered mean: no cancellation in the sd
    if (tick_ == 0) {
      for_chunks([&](std::size_t i) {
        philox_stream s(key_, detail::propagation_index + i, t);
        x_[i] = model_.initial(s);
        lw_[i] = model_.log_likelihood(y, x_[i]);
      }, lw_, shift, truth);
    } else {
      const bool auxiliary = opt_.kind == filter_kind::auxiliary;
      double ess_decider = ess_after_;
      if (auxiliary) {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        for_chunks([&](std::size_t i) {
          first_stage_[i] = model_.log_first_stage(y, x_[i]);
          spare_[i] = lw_[i] + first_stage_[i];
        }, spare_, 0.0, nan);
        const auto v = statistics_of(spare_, 0.0, nan);
        out.log_likelihood_increment += v.log_sum_exp - lse_before;
        lse_before = v.log_sum_exp;
        ess_decider = v.ess;
      }
      if (opt_.ess_threshold >= 1.0 || ess_decider < opt_.ess_threshold * static_cast<double>(opt_.particles)) {
        resample_on(auxiliary ? spare_ : lw_, t, auxiliary);
        lse_before = lse_equal_;
        out.resampled = true;
      }
      for_chunks([&](std::size_t i) {
        philox_stream s(key_, detail::propagation_index + i, t);
        x_[i] = model_.propagate(x_[i], s);
        lw_[i] += model_.log_likelihood(y, x_[i]);
      }, lw_, shift, truth);
    }
    const auto stats = statistics_of(lw_, shift, truth);
    lse_after_ = stats.log_sum_exp;
    out.log_likelihood_increment += lse_after_ - lse_before;
    ess_after_ = stats.ess;
    mean_ = stats.mean;
    out.ess = stats.ess;
    out.mean = stats.mean;
    out.sd = stats.sd;
    out.pit = stats.pit;  // NaN without a truth
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
  /// `move(i)` for every particle, chunk by chunk (a task each), and then the chunk's summary of
  /// (`weights`, x): the particles are still in cache when it is formed.
  template <class Move>
  void for_chunks(const Move& move, const std::vector<double>& weights, double shift, double truth) {
    const std::size_t n = opt_.particles;
    ex_.for_tasks(chunks_.size(), [&](std::size_t c) {
      for (std::size_t i = c * detail::chunk; i < std::min(n, (c + 1) * detail::chunk); ++i) move(i);
      chunks_[c] = detail::summarise_chunk(weights, x_, c, shift, truth);
    });
  }

  /// The tick's statistics of `weights` from the chunks' summaries; a NaN / +inf log-weight or every
  /// weight zero is refused, naming the tick, the particle and its state. (The filter cannot go on.)
  detail::tick_statistics statistics_of(const std::vector<double>& weights, double shift, double truth) const {
    const auto t = detail::combine_chunks(chunks_, shift, truth == truth);
    if (t.first_bad != detail::no_index) {
      const auto i = static_cast<std::size_t>(t.first_bad);
      detail::throw_bad_tick(tick_, i, weights[i], x_[i]);
    }
    if (t.all_zero) detail::throw_bad_tick(tick_, {}, 0.0, 0.0);
    return t;
  }

  /// Ancestors from `weights`, then x and lw gathered: lw = 0, or for the auxiliary filter minus the
  /// ancestor's first-stage weight. Jitter, if asked for, moves every resampled state.
  void resample_on(const std::vector<double>& weights, std::uint32_t t, bool auxiliary) {
    const std::size_t n = opt_.particles;
    cpu::ancestors(ex_, opt_.resampler, std::span<const double>(weights), key_, t, std::span<std::uint32_t>(ancestors_),
                   opt_.resampling);
    // `weights` (lw_, or v in spare_) is spent: the gather may overwrite both.
    ex_.for_blocks(n, [&](std::size_t begin, std::size_t end, std::size_t) {
      for (std::size_t j = begin; j < end; ++j) {
        const std::size_t a = ancestors_[j];
        spare_[j] = x_[a];
        if (opt_.jitter > 0.0) {
          philox_stream s(key_, detail::jitter_index + j, t);
          spare_[j] = resample::detail::fused(opt_.jitter, standard_normal(s), spare_[j]);
        }
        lw_[j] = auxiliary ? -first_stage_[a] : 0.0;
      }
    });
    std::swap(x_, spare_);
  }

  Model model_;
  const Exec& ex_;
  filter_options opt_;
  key key_;
  std::vector<double> x_, lw_, spare_, first_stage_;
  std::vector<std::uint32_t> ancestors_;
  std::vector<detail::chunk_summary> chunks_;
  std::size_t tick_ = 0;
  double log_likelihood_ = 0;
  double lse_equal_;  ///< log sum exp of N zeros: lw before tick 0 and after every resampling
  double lse_after_ = 0, ess_after_ = 0, mean_ = 0;
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
