// The hand-written PTX backend (ptx/*.ptx, embedded in the library at build time, JIT-compiled by
// the driver for the running GPU on first use in each CUDA context), on device memory, with the
// cuda backend's calling conventions: CUB's two-phase temp storage, a stream, no allocation and
// no host wait per call, capturable in a CUDA graph, the verdict in the temp storage's first bytes
// (read it with resample::cuda::check_status). Results are the bits of resample::cpu and
// resample::cuda for the same arguments.
//
//   std::size_t bytes = 0;
//   resample::ptx::log_sum_exp(nullptr, bytes, d_lw, n, d_lse);         // measures
//   resample::ptx::log_sum_exp(d_temp, bytes, d_lw, n, d_lse, stream);  // enqueues
//   resample::cuda::check_status(d_temp, stream);                       // waits, throws on bad input
//
// The backend has the weight statistics (max with NaN / +inf detection, the exact sums,
// log-sum-exp, ESS), its Philox4x32-10, every scheme of the library in the three forms, the
// conversions between the forms and Code 7's permutation (docs/ptx.md).
// A failed driver call, or a module the JIT refuses, throws ptx_error (error.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "resample/core/options.hpp"
#include "resample/core/philox.hpp"
#include "resample/cuda/status.hpp"
#include "resample/ptx/error.hpp"

namespace resample::ptx {

/// log sum_i exp(lw_i) from the exact sum, into *d_result (device memory; may be null) and the
/// status (check_status(...).result). T: float or double.
template <class T>
void log_sum_exp(void* d_temp, std::size_t& temp_bytes, const T* lw, std::size_t n, double* d_result,
                 cudaStream_t stream = nullptr);

/// (sum w)^2 / sum w^2 from the exact sums, like log_sum_exp.
template <class T>
void effective_sample_size(void* d_temp, std::size_t& temp_bytes, const T* lw, std::size_t n, double* d_result,
                           cudaStream_t stream = nullptr);

/// Both from one pass of the exact sums, into *d_lse and *d_ess (either may be null);
/// check_status(...).result is the log-sum-exp.
template <class T>
void weight_statistics(void* d_temp, std::size_t& temp_bytes, const T* lw, std::size_t n, double* d_lse,
                       double* d_ess, cudaStream_t stream = nullptr);

/// One draw of N ancestors (0-based) into a[0, N): systematic, stratified, multinomial (Code 2),
/// multinomial-sorted, residual or SSP on the exact CDF, or the Metropolis, Megopolis and rejection chains (options::metropolis_eps / metropolis_steps,
/// options::rejection_log_bound), the bits of resample::cpu::ancestors and
/// resample::cuda::ancestors. T: float or double; Index: int32 or int64. options::device_step and
/// options::device_gate are read on the device when the call runs (ptx/open_call.ptx), as on the
/// cuda backend: a call can be captured once and replayed. A float CDF throws invalid_input (it is
/// on the cuda backend).
template <class T, class Index>
void ancestors(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k, std::uint32_t step,
               Index* a, const options& opt = {}, cudaStream_t stream = nullptr);

/// The same draw as offspring counts o^i = #{j : a^j = i}: written by the comb kernel itself, or
/// counted from multinomial's or a chain's ancestors (Code 9).
template <class T, class Index>
void offspring(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k, std::uint32_t step,
               Index* o, const options& opt = {}, cudaStream_t stream = nullptr);

/// The same draw as cumulative offspring O^i = o^0 + ... + o^i.
template <class T, class Index>
void cumulative_offspring(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k,
                          std::uint32_t step, Index* O, const options& opt = {}, cudaStream_t stream = nullptr);

/// The same draw permuted by Code 7: c = permute(ancestors(...)), the bits of
/// resample::cpu::permute applied to resample::cpu::ancestors. Every drawn ancestor i sits at c^i = i
/// (the particle stays in place). The chain schemes make Code 7's PREPERMUTE claims in their own
/// kernel (paper, appendix E); the comb schemes run it after the draw.
template <class T, class Index>
void permuted_ancestors(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k,
                        std::uint32_t step, Index* c, const options& opt = {}, cudaStream_t stream = nullptr);

/// Code 9: o^i = #{j : a^j = i}; an ancestor outside [0, N) is reported (check_status), nothing written.
template <class Index>
void ancestors_to_offspring(void* d_temp, std::size_t& temp_bytes, const Index* a, std::size_t n, Index* o,
                            cudaStream_t stream = nullptr);

/// Inclusive prefix sum of offspring counts (two's complement wrap-around, as CUB's).
template <class Index>
void offspring_to_cumulative(void* d_temp, std::size_t& temp_bytes, const Index* o, std::size_t n, Index* O,
                             cudaStream_t stream = nullptr);

/// Code 8: non-decreasing cumulative offspring ending at N to sorted ancestors (else reported).
template <class Index>
void cumulative_offspring_to_ancestors(void* d_temp, std::size_t& temp_bytes, const Index* O, std::size_t n, Index* a,
                                       cudaStream_t stream = nullptr);

/// Code 7, the library's deterministic permutation (resample::cpu::permute's).
template <class Index>
void permute(void* d_temp, std::size_t& temp_bytes, const Index* a, std::size_t n, Index* c,
             cudaStream_t stream = nullptr);

/// Philox4x32-10 blocks: d_out[4 i + j] = word j of the block at counter (first_index + i, step,
/// draw_block) under k, for i < count (resample::philox4x32_10's bits). d_out: 16-byte aligned.
void philox_blocks(key k, std::uint64_t first_index, std::size_t count, std::uint32_t step, std::uint32_t draw_block,
                   std::uint32_t* d_out, cudaStream_t stream = nullptr);

}  // namespace resample::ptx
