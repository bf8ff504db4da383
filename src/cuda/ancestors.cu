// The CUDA backend's public entry points for log-weights: host checks, the two-phase protocol, and
// dispatch to the per-scheme files; the offspring and cumulative forms; log-sum-exp and ESS; and
// check_status, which turns a device verdict into the CPU backends' exception.
#include <cmath>
#include <string>

#include "detail/code8.cuh"
#include "detail/schemes.hpp"
#include "resample/core/validate.hpp"
#include "resample/cuda/resample.hpp"

namespace resample::cuda {
namespace detail {
namespace {

/// The host-side checks of resample::cpu for a call with these arguments.
template <class Index>
void check_call(scheme s, std::size_t n, const options& opt) {
  check_size<Index>(n, n);
  if (opt.fast_exp && !comb_scheme(s)) {
    throw invalid_input("options::fast_exp is supported by systematic, stratified and multinomial-sorted only "
                        "(cuda); " + std::string(name(s)) + " computes its exponentials exactly there");
  }
  const bool cdf_scheme = s == scheme::multinomial || s == scheme::stratified || s == scheme::systematic;
  if (cdf_scheme && opt.cdf != precision::exact) {
    throw invalid_input("the cuda backend has the exact CDF only (float32 / float64 CDFs are on the CPU backends)");
  }
  check_scheme_options(s, opt);
  if (opt.device_max_log_weight && !comb_scheme(s)) {
    throw invalid_input("options::device_max_log_weight is supported by systematic, stratified and "
                        "multinomial-sorted only (cuda), not by " + std::string(name(s)));
  }
}

template <class T, class Index>
std::size_t enqueue_ancestors(void* d_temp, scheme s, const T* lw, std::size_t n, key k, std::uint32_t step, Index* a,
                              const options& opt, cudaStream_t stream) {
  const step_source step_from{step, opt.device_step};
  switch (s) {
    case scheme::systematic:
    case scheme::stratified:
    case scheme::multinomial_sorted:
      return comb_ancestors(d_temp, s, lw, n, k, step_from, a, opt.device_gate, opt.device_max_log_weight,
                            opt.fast_exp, stream);
    case scheme::multinomial: return multinomial_ancestors(d_temp, lw, n, k, step_from, a, opt.device_gate, stream);
    case scheme::residual: return residual_ancestors(d_temp, false, lw, n, k, step_from, a, opt.device_gate, stream);
    case scheme::ssp: return residual_ancestors(d_temp, true, lw, n, k, step_from, a, opt.device_gate, stream);
    case scheme::metropolis:
    case scheme::megopolis:
    case scheme::rejection: return chain_ancestors(d_temp, s, lw, n, k, step_from, a, opt, stream);
  }
  throw invalid_input("unknown scheme");
}

/// The offspring (and, when O is given, cumulative) form: ancestors into temp storage after the
/// scheme's own, then counted.
template <class T, class Index>
void enqueue_offspring(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k,
                       std::uint32_t step, Index* o, Index* O, const options& opt, cudaStream_t stream) {
  check_call<Index>(s, n, opt);
  const std::size_t scheme_bytes = enqueue_ancestors<T, Index>(nullptr, s, lw, n, k, step, nullptr, opt, stream);
  carve c(d_temp);
  void* scheme_temp = c.take<char>(scheme_bytes);  // offset 0: its status is the call's status
  auto* a = c.take<Index>(n);
  std::size_t scan_bytes = 0;
  if (O) {
    check(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, o, O, static_cast<int64_t>(n)),
          "cub::DeviceScan::InclusiveSum (size)");
  }
  void* scan_temp = c.take<char>(scan_bytes);
  if (measure_only(d_temp, temp_bytes, c.bytes())) return;
  const auto* st = static_cast<const device_status*>(scheme_temp);
  enqueue_ancestors<T, Index>(scheme_temp, s, lw, n, k, step, a, opt, stream);
  zero_pass<Index><<<grid_for(n), block_threads, 0, stream>>>(n, st, o);
  check_launch("zero_pass");
  count_pass<Index><<<grid_for(n), block_threads, 0, stream>>>(a, n, st, o);
  check_launch("count_pass");
  if (O) {
    check(cub::DeviceScan::InclusiveSum(scan_temp, scan_bytes, o, O, static_cast<int64_t>(n), stream),
          "cub::DeviceScan::InclusiveSum (offspring)");
  }
}

template <class T>
void enqueue_reduction(void* d_temp, std::size_t& temp_bytes, const T* lw, std::size_t n, bool lse, bool ess,
                       double* d_lse, double* d_ess, cudaStream_t stream) {
  check_size<std::uint64_t>(n, n);  // N >= 1 and within the exact CDF (no index type here)
  const std::size_t tiles = tile_count(n);
  carve c(d_temp);
  auto* st = c.take<device_status>(1);
  auto* sums = c.take<u128>(tiles);
  auto* squares = ess ? c.take<u128>(tiles) : nullptr;
  if (measure_only(d_temp, temp_bytes, c.bytes())) return;
  finish_request req;
  req.lse = lse;
  req.ess = ess;
  req.d_result = lse ? d_lse : d_ess;
  req.d_ess = lse ? d_ess : nullptr;
  summarise(lw, n, std::numeric_limits<double>::quiet_NaN(), st, sums, squares, req, stream);
}

}  // namespace
}  // namespace detail

template <class T, class Index>
void ancestors(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k, std::uint32_t step,
               Index* a, const options& opt, cudaStream_t stream) {
  detail::check_call<Index>(s, n, opt);
  const std::size_t needed = detail::enqueue_ancestors<T, Index>(nullptr, s, lw, n, k, step, a, opt, stream);
  if (detail::measure_only(d_temp, temp_bytes, needed)) return;
  detail::enqueue_ancestors<T, Index>(d_temp, s, lw, n, k, step, a, opt, stream);
}

template <class T, class Index>
void offspring(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k, std::uint32_t step,
               Index* o, const options& opt, cudaStream_t stream) {
  detail::enqueue_offspring<T, Index>(d_temp, temp_bytes, s, lw, n, k, step, o, nullptr, opt, stream);
}

template <class T, class Index>
void cumulative_offspring(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k,
                          std::uint32_t step, Index* O, const options& opt, cudaStream_t stream) {
  // Its last step, CUB's in-place scan, cannot be gated: it would sum whatever O held.
  if (opt.device_gate) throw invalid_input("options::device_gate is not supported by cumulative_offspring");
  // The counts go to O first and are summed in place.
  detail::enqueue_offspring<T, Index>(d_temp, temp_bytes, s, lw, n, k, step, O, O, opt, stream);
}

template <class T>
void log_sum_exp(void* d_temp, std::size_t& temp_bytes, const T* lw, std::size_t n, double* d_result,
                 cudaStream_t stream) {
  detail::enqueue_reduction(d_temp, temp_bytes, lw, n, true, false, d_result, nullptr, stream);
}

template <class T>
void effective_sample_size(void* d_temp, std::size_t& temp_bytes, const T* lw, std::size_t n, double* d_result,
                           cudaStream_t stream) {
  detail::enqueue_reduction(d_temp, temp_bytes, lw, n, false, true, nullptr, d_result, stream);
}

template <class T>
void weight_statistics(void* d_temp, std::size_t& temp_bytes, const T* lw, std::size_t n, double* d_lse, double* d_ess,
                       cudaStream_t stream) {
  detail::enqueue_reduction(d_temp, temp_bytes, lw, n, true, true, d_lse, d_ess, stream);
}

device_status check_status(const void* d_temp, cudaStream_t stream) {
  if (d_temp == nullptr) throw invalid_input("check_status: no temp storage");
  device_status st{};
  check(cudaMemcpyAsync(&st, d_temp, sizeof st, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync (status)");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  const auto index = static_cast<std::size_t>(st.index);
  switch (static_cast<status_code>(st.code)) {
    case status_code::ok:
    case status_code::skipped: return st;
    case status_code::bad_log_weight: throw_bad_log_weight(st.value, index);
    case status_code::all_weights_zero: throw_all_log_weights_zero();
    case status_code::above_bound: throw_rejection_bound_below(st.bound, st.value, index);
    case status_code::max_not_largest: {
      const std::string given = "options::device_max_log_weight is " + resample::detail::format_value(st.max_given);
      if (index < st.n) {
        throw invalid_input(given + ", but log-weight " + std::to_string(index) + " is " +
                                resample::detail::format_value(st.value) + ": it must be the largest log-weight",
                            index);
      }
      throw invalid_input(given + ", but no log-weight equals it: it must be the largest log-weight");
    }
    case status_code::bad_ancestor: throw_bad_ancestor(st.integer, index, static_cast<std::size_t>(st.n));
    case status_code::cumulative_decreases: throw_cumulative_decrease(index);
    case status_code::cumulative_end: throw_cumulative_end(st.integer, static_cast<std::size_t>(st.n));
    case status_code::batch_offsets: throw_bad_batch_offsets();
    case status_code::batch_system_empty: throw_empty_system(index);
  }
  throw invalid_input("unknown device status " + std::to_string(st.code));
}

#define RESAMPLE_INSTANTIATE(T, Index)                                                                                \
  template void ancestors<T, Index>(void*, std::size_t&, scheme, const T*, std::size_t, key, std::uint32_t, Index*,  \
                                    const options&, cudaStream_t);                                                   \
  template void offspring<T, Index>(void*, std::size_t&, scheme, const T*, std::size_t, key, std::uint32_t, Index*,  \
                                    const options&, cudaStream_t);                                                   \
  template void cumulative_offspring<T, Index>(void*, std::size_t&, scheme, const T*, std::size_t, key,             \
                                               std::uint32_t, Index*, const options&, cudaStream_t);
RESAMPLE_FOR_EACH_WEIGHT_AND_INDEX(RESAMPLE_INSTANTIATE)
#undef RESAMPLE_INSTANTIATE
template void log_sum_exp<float>(void*, std::size_t&, const float*, std::size_t, double*, cudaStream_t);
template void log_sum_exp<double>(void*, std::size_t&, const double*, std::size_t, double*, cudaStream_t);
template void effective_sample_size<float>(void*, std::size_t&, const float*, std::size_t, double*, cudaStream_t);
template void effective_sample_size<double>(void*, std::size_t&, const double*, std::size_t, double*, cudaStream_t);
template void weight_statistics<float>(void*, std::size_t&, const float*, std::size_t, double*, double*, cudaStream_t);
template void weight_statistics<double>(void*, std::size_t&, const double*, std::size_t, double*, double*, cudaStream_t);

}  // namespace resample::cuda
