// The CUDA backend's per-scheme enqueue functions, one .cu file each. Each returns the temp bytes it
// needs and, when d_temp is not null, enqueues its kernels on `stream` (temp storage starts with
// the device_status). Host checks are done by the caller (ancestors.cu).
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "resample/core/options.hpp"
#include "resample/core/philox.hpp"
#include "resample/cuda/status.hpp"

/// Applies M(T, Index) to the four instantiations of the backend's entry points: log-weights
/// float or double, indices int32 or int64.
#define RESAMPLE_FOR_EACH_WEIGHT_AND_INDEX(M) \
  M(float, std::int32_t)                      \
  M(float, std::int64_t)                      \
  M(double, std::int32_t)                     \
  M(double, std::int64_t)

namespace resample::cuda::detail {

/// A call's Philox step: the host's argument, or the device word of options::device_step, read by
/// each kernel when it runs.
struct step_source {
  std::uint32_t value = 0;
  const std::uint32_t* device = nullptr;
#ifdef __CUDACC__
  __device__ std::uint32_t get() const { return device ? *device : value; }
#endif
};

/// Up to this many particles, systematic and stratified run as one kernel of one block (comb.cu's
/// small_comb_pass, the system resident in it), which a closed gate leaves at once.
inline constexpr std::size_t comb_one_block_n = 8192;
constexpr bool comb_in_one_block(scheme s, std::size_t n) {
  return n <= comb_one_block_n && (s == scheme::systematic || s == scheme::stratified);
}

/// The schemes comb_ancestors runs, and so the ones that take options::device_max_log_weight and
/// options::fast_exp.
constexpr bool comb_scheme(scheme s) {
  return s == scheme::systematic || s == scheme::stratified || s == scheme::multinomial_sorted;
}

/// Systematic (Code 5), stratified (Code 4) or multinomial-sorted fused with Code 8: comb.cu.
/// `fast`: options::fast_exp (the weights by ex2.approx; never the one-block path).
template <class T, class Index>
std::size_t comb_ancestors(void* d_temp, scheme s, const T* lw, std::size_t n, key k, step_source step, Index* a,
                           const int* gate, const double* given_max, bool fast, cudaStream_t stream);

/// Multinomial (Code 2): multinomial.cu.
template <class T, class Index>
std::size_t multinomial_ancestors(void* d_temp, const T* lw, std::size_t n, key k, step_source step, Index* a,
                                  const int* gate, cudaStream_t stream);

/// Multinomial-sorted's P_K for the B + 1 strata boundaries of sorted_points(n) (sorted_points.cu);
/// nothing when the status is bad. Returns its own temp bytes (P not included).
std::size_t points_before_strata(void* d_temp, std::size_t n, key k, step_source step, const device_status* st,
                                 std::uint32_t* P, cudaStream_t stream);

/// Residual and SSP: residual.cu.
template <class T, class Index>
std::size_t residual_ancestors(void* d_temp, bool ssp, const T* lw, std::size_t n, key k, step_source step,
                               Index* a, const int* gate, cudaStream_t stream);

// `gate` (options::device_gate, may be null): the call does nothing when it reads 0.

/// Metropolis, Megopolis and rejection: metropolis.cu (the gate in opt).
template <class T, class Index>
std::size_t chain_ancestors(void* d_temp, scheme s, const T* lw, std::size_t n, key k, step_source step, Index* a,
                            const options& opt, cudaStream_t stream);

}  // namespace resample::cuda::detail
