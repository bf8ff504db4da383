// What a CUDA call found on the device. Bad input (a NaN log-weight, all weights zero, an ancestor
// out of range, ...) can only be seen on the device, and the per-step path never waits for the
// device, so every call records its verdict in the first bytes of its temp storage and its kernels
// write no output when the verdict is bad. check_status() waits for the stream, reads the verdict
// and throws resample::invalid_input with the message the CPU backends give for the same input.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "resample/core/wide_int.hpp"

namespace resample::cuda {

enum class status_code : int {
  ok = 0,
  bad_log_weight,        ///< NaN or +inf; index, value
  all_weights_zero,      ///< every log-weight is -inf
  above_bound,           ///< rejection: a log-weight above the bound; index, value, bound
  bad_ancestor,          ///< outside [0, N); index, integer
  cumulative_decreases,  ///< index
  cumulative_end,        ///< the last cumulative offspring is not N; integer
  batch_offsets,         ///< batched: offsets do not run from 0 to N
  batch_system_empty,    ///< batched: system `index` is empty
  skipped,               ///< options::device_gate was 0: the call did nothing (not an error)
  max_not_largest,       ///< options::device_max_log_weight: index (n: none equals it), value, max_given
};

/// The verdict and the exact sums of one call (temp storage offset 0). Plain data: host and device.
struct device_status {
  // Written with atomics during the first pass (zeroed by the call first).
  unsigned long long first_bad;    ///< ~i for the first bad input index i, 0 when none
  unsigned long long first_above;  ///< ~i for the first log-weight above the rejection bound
  unsigned long long max_key;      ///< the largest log-weight as an order-preserving key
  unsigned long long floor_sum;    ///< residual and SSP: sum of floor(N q_i / Q)
  // Decided by the finishing kernel.
  int code;
  int fraction;                    ///< F of the exact CDF
  u128 total;                      ///< Q
  u128 squares;                    ///< sum of quantised w_i^2 (effective sample size)
  double max_log_w;
  double value;                    ///< the offending value (bad log-weight, log-weight above bound)
  double bound;                    ///< the rejection bound in use
  double result;                   ///< log-sum-exp or ESS
  long long integer;               ///< the offending integer (ancestor, last cumulative offspring)
  unsigned long long index;        ///< the first offending index
  unsigned long long steps;        ///< Metropolis and Megopolis: B
  unsigned long long n;
  // The PTX backend's call opening (ptx/open_call.ptx) writes these for its kernels to read.
  std::uint32_t step;              ///< the call's Philox step (options::device_step or the argument)
  std::uint32_t shared_word;       ///< systematic's U: the first word of Philox at (shared_index, step)
  std::uint32_t exp_mode;          ///< 1: options::fast_exp (the weights by ex2.approx), else 0
  std::uint32_t blocks_done;        ///< the batched call: blocks finished (the last one writes the verdict)
  // The comb's heavy runs (src/cuda/comb.cu): slots reserved, and a bit per slot whose run is published.
  std::uint32_t heavy_runs_reserved;
  std::uint32_t heavy_runs_ready;
  // options::device_max_log_weight (the CUDA C kernels; after the fields the PTX kernels know).
  std::uint32_t max_is_given;           ///< 1: the call took the max from the option, not a max pass
  std::uint32_t max_seen;               ///< 1: a log-weight equals it
  unsigned long long first_above_max;   ///< ~i for the first log-weight above it
  double max_given;                     ///< its value
};

/// Waits for `stream`, reads the verdict at the start of `d_temp` and throws invalid_input (with
/// the CPU backends' message) if the call found bad input. Returns the verdict otherwise.
device_status check_status(const void* d_temp, cudaStream_t stream);

}  // namespace resample::cuda
