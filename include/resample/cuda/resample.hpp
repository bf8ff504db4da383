// The CUDA backend's entry points, on device memory, in CUB's two-phase style:
//
//   std::size_t bytes = 0;
//   resample::cuda::ancestors(nullptr, bytes, scheme::systematic, d_lw, n, {seed, stream}, step, d_a);
//   cudaMalloc(&d_temp, bytes);                          // once, outside the per-step loop
//   resample::cuda::ancestors(d_temp, bytes, scheme::systematic, d_lw, n, {seed, stream}, step, d_a,
//                             {}, cuda_stream);          // enqueues; no allocation, no host wait
//   resample::cuda::check_status(d_temp, cuda_stream);   // when you want errors: waits, throws
//
// With d_temp == nullptr a call only sets `temp_bytes`. Otherwise it enqueues its kernels on
// `stream` and returns at once; the calls are capturable in a CUDA graph. The results are the
// bits of resample::cpu for the same arguments (DESIGN §3), except with options::fast_exp (the
// weights by the GPU's ex2.approx: the PTX backend's fast draw). Errors the host can see (N = 0, N
// beyond the index type, bad options, too little temp storage) throw invalid_input at once; bad
// values on the device are recorded in the temp storage (status.hpp) and leave the outputs
// untouched. A failed CUDA call throws cuda_error. workspace.hpp wraps all this in RAII.
//
// Instantiated for log-weights T in {float, double} and indices in {int32_t, int64_t}.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "resample/core/options.hpp"
#include "resample/core/philox.hpp"
#include "resample/cuda/error.hpp"
#include "resample/cuda/status.hpp"

namespace resample::cuda {

/// One draw of N ancestors (0-based) into a[0, N).
template <class T, class Index>
void ancestors(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k, std::uint32_t step,
               Index* a, const options& opt = {}, cudaStream_t stream = nullptr);

/// The same draw as offspring counts o^i = #{j : a^j = i}.
template <class T, class Index>
void offspring(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k, std::uint32_t step,
               Index* o, const options& opt = {}, cudaStream_t stream = nullptr);

/// The same draw as cumulative offspring O^i = o^0 + ... + o^i.
template <class T, class Index>
void cumulative_offspring(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k,
                          std::uint32_t step, Index* O, const options& opt = {}, cudaStream_t stream = nullptr);

/// Code 9 with atomics; ancestors outside [0, N) are reported.
template <class Index>
void ancestors_to_offspring(void* d_temp, std::size_t& temp_bytes, const Index* a, std::size_t n, Index* o,
                            cudaStream_t stream = nullptr);

/// Inclusive prefix sum of offspring counts.
template <class Index>
void offspring_to_cumulative(void* d_temp, std::size_t& temp_bytes, const Index* o, std::size_t n, Index* O,
                             cudaStream_t stream = nullptr);

/// Code 8: non-decreasing cumulative offspring ending at N to sorted ancestors.
template <class Index>
void cumulative_offspring_to_ancestors(void* d_temp, std::size_t& temp_bytes, const Index* O, std::size_t n, Index* a,
                                       cudaStream_t stream = nullptr);

/// Code 7, the library's deterministic permutation (the same as resample::cpu::permute).
template <class Index>
void permute(void* d_temp, std::size_t& temp_bytes, const Index* a, std::size_t n, Index* c,
             cudaStream_t stream = nullptr);

/// log sum_i exp(lw_i) from the exact sum, into *d_result (device memory; may be null) and into
/// the status (check_status(...).result).
template <class T>
void log_sum_exp(void* d_temp, std::size_t& temp_bytes, const T* lw, std::size_t n, double* d_result,
                 cudaStream_t stream = nullptr);

/// (sum w)^2 / sum w^2 from exact sums, like log_sum_exp.
template <class T>
void effective_sample_size(void* d_temp, std::size_t& temp_bytes, const T* lw, std::size_t n, double* d_result,
                           cudaStream_t stream = nullptr);

/// Both of the above from one pass of the exact sums (a particle filter's tick needs both), into
/// *d_lse and *d_ess (device memory; either may be null); check_status(...).result is the LSE.
template <class T>
void weight_statistics(void* d_temp, std::size_t& temp_bytes, const T* lw, std::size_t n, double* d_lse, double* d_ess,
                       cudaStream_t stream = nullptr);
/// Many systems in one call: system b holds lw[offsets[b], offsets[b+1]) (offsets in device memory,
/// `systems + 1` of them, offsets[0] = 0, offsets[systems] = n) and gets its ancestors, local to
/// the system, at the same positions of a, drawn as a call of its own with key {seed, stream + b}.
/// One thread block per system (block/ has the block-level primitives it is built from).
/// Supported schemes: systematic, stratified, metropolis, megopolis, rejection.
template <class T, class Index>
void ancestors_batched(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, const std::uint64_t* offsets,
                       std::size_t systems, std::size_t n, key k, std::uint32_t step, Index* a,
                       const options& opt = {}, cudaStream_t stream = nullptr);

}  // namespace resample::cuda
