// The schemes of the production backends and the options of a resampling call.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace resample {

enum class scheme {
  multinomial,
  multinomial_sorted,
  stratified,
  systematic,
  residual,
  ssp,
  metropolis,
  megopolis,
  rejection
};

inline constexpr std::array production_schemes = {
    scheme::multinomial, scheme::multinomial_sorted, scheme::stratified, scheme::systematic, scheme::residual,
    scheme::ssp,         scheme::metropolis,         scheme::megopolis,  scheme::rejection};

constexpr std::string_view name(scheme s) {
  switch (s) {
    case scheme::multinomial: return "multinomial";
    case scheme::multinomial_sorted: return "multinomial-sorted";
    case scheme::stratified: return "stratified";
    case scheme::systematic: return "systematic";
    case scheme::residual: return "residual";
    case scheme::ssp: return "ssp";
    case scheme::metropolis: return "metropolis";
    case scheme::megopolis: return "megopolis";
    case scheme::rejection: return "rejection";
  }
  return "?";
}

/// Whether E[o_i] = N w_i / W exactly (Metropolis and Megopolis are biased for finite B).
constexpr bool is_unbiased(scheme s) { return s != scheme::metropolis && s != scheme::megopolis; }

/// How the CDF of the weights is formed (DESIGN §3). `exact` (the default) is the fixed-point,
/// order-independent CDF that every backend reproduces bit for bit; `float32` and `float64` are the
/// floating-point prefix sums of the paper and the peers, kept to show their bias. Their results
/// depend on the order of summation, hence on the backend and the thread count.
enum class precision { exact, float32, float64 };

struct options {
  precision cdf = precision::exact;              ///< multinomial, stratified, systematic
  double metropolis_eps = 0.01;                  ///< Metropolis and Megopolis: B from the eps rule ...
  std::optional<std::uint64_t> metropolis_steps; ///< ... unless B is given
  std::optional<double> rejection_log_bound;     ///< ln of an upper bound on the weights; default: max
  /// cuda only (the CPU backends ignore it): a device int read when the call runs; 0 makes the
  /// call do nothing (no output written, check_status reports no error). For decisions made on
  /// the device, such as a particle filter's ESS test, without a host wait. Honoured by ancestors
  /// and offspring; cumulative_offspring and ancestors_batched refuse it (invalid_input).
  const int* device_gate = nullptr;
  /// cuda only: a device word read when the call runs, used instead of the `step` argument, so that
  /// a call captured once in a CUDA graph draws afresh at every replay (a particle filter's tick).
  /// Honoured by ancestors, offspring and cumulative_offspring; ancestors_batched refuses it.
  const std::uint32_t* device_step = nullptr;
  /// cuda and ptx (since session 41) only (the CPU backends ignore it), and there systematic,
  /// stratified and multinomial-sorted only (the other schemes and ancestors_batched refuse it,
  /// invalid_input): a
  /// device double read when the call runs, the largest log-weight (for float log-weights, that
  /// float's value), for a caller that has it already (a particle filter's weighting kernel). The
  /// call then skips its max pass, a read of every log-weight, and checks the value in its next pass
  /// instead: a log-weight above it, or none equal to it, fails the call (invalid_input, naming the
  /// first log-weight above it) and writes nothing. NaN and +inf log-weights are reported first, as
  /// without it. The same bits as without it.
  const double* device_max_log_weight = nullptr;
  /// The GPU backends only: ptx with systematic, stratified, multinomial and multinomial-sorted,
  /// cuda with systematic, stratified and multinomial-sorted (not its batched call): the weights'
  /// exponentials by the GPU's approximate ex2 (ex2.approx.f32 of x log2(e) rounded to single
  /// precision: relative error about 2^-22 + |x| 2^-24; weights below 2^-149 of the largest become
  /// 0) instead of the deterministic exp. The draw is then exact for those weights (the exact CDF
  /// and comb on them), not the CPU's bits; both backends compute the same weights by the same
  /// instructions, so on one GPU they draw the same bits where the driver's JIT (ptx) and nvcc
  /// (cuda) assemble ex2.approx.f32 alike (tested with driver 580.159.04 and CUDA 13.0 on an H200).
  /// The CPU backends and the other schemes refuse it (invalid_input).
  /// docs/ptx.md, "Fast mode"; docs/cuda.md.
  bool fast_exp = false;
};

}  // namespace resample
