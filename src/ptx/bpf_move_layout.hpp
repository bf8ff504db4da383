// The particle filter's move kernel (ptx/bpf_move.ptx, resample_bpf_move) takes one argument, the
// global address of a bpf_move_args, and writes one resample::bpf::detail::chunk_summary per
// chunk; it addresses both by byte offsets, which these assertions keep in step with the structs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "resample/bpf/chunk_statistics.hpp"
#include "resample/bpf/linear_gaussian_model.hpp"
#include "resample/bpf/sv_model.hpp"

namespace resample::ptx::detail {

/// resample_bpf_move's arguments, in device memory. Launch: ceil(n / 4096) blocks (one per chunk)
/// of bpf_move_threads threads, with bpf_move_dynamic_shared bytes of dynamic shared memory.
struct bpf_move_args {
  std::uint32_t stage;            ///< +0: 0 initial weight (tick 0), 1 first stage (auxiliary), 2 gather + propagate
  std::uint32_t model;            ///< +4: 0 sv_model, 1 linear_gaussian_model
  std::uint32_t seed, stream;     ///< +8, +12: the filter's Philox key {seed, stream}
  std::uint64_t n;                ///< +16: particles
  /// +24: the model's constants. sv: {mu, rho, sigma, nu_state, nu_obs, stationary_sd, log_norm, 0};
  /// linear-Gaussian: {rho, sigma, stationary_sd, log_norm, inv_tau2, predictive_log_norm,
  /// inv_predictive_var, 0}
  double c[8];
  double jitter;                  ///< +88: stage 2: the regularisation jitter's sd (0: none)
  std::uint32_t auxiliary;        ///< +96: stage 2: 1 = auxiliary filter (a gathered weight starts at -fs[a])
  std::uint32_t unused;           ///< +100
  const std::uint32_t* tick;      ///< +104: device scalar: the tick t being run (stages 1, 2)
  const int* resample;            ///< +112: device scalar: this tick resamples (stage 2)
  const double* shift;            ///< +120: device scalar: the sums' shift (stage 2; stages 0, 1 use 0)
  const double* y;                ///< +128: observations, y[t]
  const double* truth;            ///< +136: null, or per-tick true states (NaN where none); stage 1 never reads it
  const std::int32_t* ancestors;  ///< +144: stage 2
  /// +152: stage 2: the resampler's device_status, its int32 code at +32; resampled =
  /// *resample != 0 && code == 0
  const void* verdict;
  const double* x;                ///< +160: stages 1, 2: states in
  const double* lw;               ///< +168: stages 1, 2: log-weights in
  double* fs;                     ///< +176: stage 1 writes fs_i; stage 2 reads fs[a] when auxiliary
  double* x_out;                  ///< +184: stages 0, 2: states out
  double* lw_out;                 ///< +192: stages 0, 2: log-weights out; stage 1: v_i = lw_i + fs_i
  void* chunks;                   ///< +200: a chunk_summary per 4096-particle chunk
};

/// A model as bpf_move_args::model and ::c: its number and its constants, the host-computed ones
/// taken from the model itself so that libm's last bits are the C++ model's.
struct bpf_model_words {
  std::uint32_t model;
  std::array<double, 8> c;
};
inline bpf_model_words model_words(const bpf::sv_model& m) {
  const auto& p = m.params();
  return {0, {p.mu, p.rho, p.sigma, p.nu_state, p.nu_obs, m.stationary_sd(), m.log_norm(), 0.0}};
}
inline bpf_model_words model_words(const bpf::linear_gaussian_model& m) {
  const auto& p = m.params();
  return {1, {p.rho, p.sigma, m.stationary_sd(), m.log_norm(), m.inv_tau2(), m.predictive_log_norm(),
              m.inv_predictive_var(), 0.0}};
}

inline constexpr unsigned bpf_move_threads = 512;  ///< threads per block (256 works too; .maxntid 512)
inline constexpr std::size_t bpf_move_chunk = 4096;  ///< particles per block
/// dynamic shared memory per block: each particle's accepted try's w (a double), then the lanes' sums
inline constexpr unsigned bpf_move_dynamic_shared = 32768;
static_assert(bpf_move_chunk == bpf::detail::chunk && bpf::detail::lanes == 256);
static_assert(bpf_move_dynamic_shared >= bpf_move_chunk * sizeof(double) &&
              bpf_move_dynamic_shared >= 5 * bpf::detail::lanes * sizeof(double));

static_assert(offsetof(bpf_move_args, stage) == 0);
static_assert(offsetof(bpf_move_args, model) == 4);
static_assert(offsetof(bpf_move_args, seed) == 8);
static_assert(offsetof(bpf_move_args, stream) == 12);
static_assert(offsetof(bpf_move_args, n) == 16);
static_assert(offsetof(bpf_move_args, c) == 24);
static_assert(offsetof(bpf_move_args, jitter) == 88);
static_assert(offsetof(bpf_move_args, auxiliary) == 96);
static_assert(offsetof(bpf_move_args, unused) == 100);
static_assert(offsetof(bpf_move_args, tick) == 104);
static_assert(offsetof(bpf_move_args, resample) == 112);
static_assert(offsetof(bpf_move_args, shift) == 120);
static_assert(offsetof(bpf_move_args, y) == 128);
static_assert(offsetof(bpf_move_args, truth) == 136);
static_assert(offsetof(bpf_move_args, ancestors) == 144);
static_assert(offsetof(bpf_move_args, verdict) == 152);
static_assert(offsetof(bpf_move_args, x) == 160);
static_assert(offsetof(bpf_move_args, lw) == 168);
static_assert(offsetof(bpf_move_args, fs) == 176);
static_assert(offsetof(bpf_move_args, x_out) == 184);
static_assert(offsetof(bpf_move_args, lw_out) == 192);
static_assert(offsetof(bpf_move_args, chunks) == 200);
static_assert(sizeof(bpf_move_args) == 208);

// The summary the kernel's thread 0 writes at chunks + 56 c.
using bpf::detail::chunk_summary;
using bpf::detail::moments;
static_assert(offsetof(chunk_summary, max) == 0);
static_assert(offsetof(chunk_summary, first_bad) == 8);
static_assert(offsetof(chunk_summary, sums) + offsetof(moments, w) == 16);
static_assert(offsetof(chunk_summary, sums) + offsetof(moments, w2) == 24);
static_assert(offsetof(chunk_summary, sums) + offsetof(moments, wd) == 32);
static_assert(offsetof(chunk_summary, sums) + offsetof(moments, wdd) == 40);
static_assert(offsetof(chunk_summary, sums) + offsetof(moments, below) == 48);
static_assert(sizeof(chunk_summary) == 56);

}  // namespace resample::ptx::detail
