// The CUDA backend on host memory, for tests, the command line and quick use: copies in, runs,
// waits, checks, copies out. Same signatures and bits as resample::cpu (minus the executor).
// Per-step code should use workspace.hpp on device memory instead.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "resample/core/validate.hpp"
#include "resample/cuda/workspace.hpp"

namespace resample::cuda::host {

/// A device array of X, freed on scope exit (movable, so an owner can replace it with a larger one).
template <class X>
class device_vector {
 public:
  device_vector() = default;
  explicit device_vector(std::size_t n) : n_(n) {
    if (n) check(cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(X)), "cudaMalloc");
  }
  /// A copy of `from`, on the device when the constructor returns: cudaMemcpy from pageable memory
  /// may return before its transfer lands, and orders it only with the default stream (0, which the
  /// synchronisation names too, legacy or per-thread), so a kernel on a non-blocking stream could
  /// otherwise read the old contents.
  explicit device_vector(std::span<const X> from) : device_vector(from.size()) {
    if (n_) {
      check(cudaMemcpy(p_, from.data(), n_ * sizeof(X), cudaMemcpyHostToDevice), "cudaMemcpy (to device)");
      check(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize (to device)");
    }
  }
  device_vector(const device_vector&) = delete;
  device_vector& operator=(const device_vector&) = delete;
  device_vector(device_vector&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  device_vector& operator=(device_vector&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  ~device_vector() {
    if (p_) (void)cudaFree(p_);
  }
  [[nodiscard]] X* data() const { return p_; }
  void copy_to(std::span<X> to) const {
    if (n_) check(cudaMemcpy(to.data(), p_, n_ * sizeof(X), cudaMemcpyDeviceToHost), "cudaMemcpy (to host)");
  }

 private:
  X* p_ = nullptr;
  std::size_t n_ = 0;
};

template <class T, class Index>
void ancestors(scheme s, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> a, const options& opt = {}) {
  check_size<Index>(lw.size(), a.size());
  workspace ws;
  const device_vector<T> d_lw(lw);
  device_vector<Index> d_a(a.size());
  ws.ancestors(s, d_lw.data(), lw.size(), k, step, d_a.data(), opt);
  ws.check();
  d_a.copy_to(a);
}

template <class T, class Index>
void offspring(scheme s, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> o, const options& opt = {}) {
  check_size<Index>(lw.size(), o.size());
  workspace ws;
  const device_vector<T> d_lw(lw);
  device_vector<Index> d_o(o.size());
  ws.offspring(s, d_lw.data(), lw.size(), k, step, d_o.data(), opt);
  ws.check();
  d_o.copy_to(o);
}

template <class T, class Index>
void cumulative_offspring(scheme s, std::span<const T> lw, key k, std::uint32_t step, std::span<Index> O,
                          const options& opt = {}) {
  check_size<Index>(lw.size(), O.size());
  workspace ws;
  const device_vector<T> d_lw(lw);
  device_vector<Index> d_O(O.size());
  ws.cumulative_offspring(s, d_lw.data(), lw.size(), k, step, d_O.data(), opt);
  ws.check();
  d_O.copy_to(O);
}

/// Index -> Index conversions: ancestors_to_offspring, offspring_to_cumulative,
/// cumulative_offspring_to_ancestors, permute.
template <class Index, class Op>
void convert(std::span<const Index> in, std::span<Index> out, Op op) {
  if (out.size() != in.size()) throw invalid_input("output has the wrong size");
  workspace ws;
  const device_vector<Index> d_in(in);
  device_vector<Index> d_out(out.size());
  op(ws, d_in.data(), in.size(), d_out.data());
  ws.check();
  d_out.copy_to(out);
}

template <class Index>
void ancestors_to_offspring(std::span<const Index> a, std::span<Index> o) {
  convert(a, o, [](workspace& ws, const Index* x, std::size_t n, Index* y) { ws.ancestors_to_offspring(x, n, y); });
}
template <class Index>
void offspring_to_cumulative(std::span<const Index> o, std::span<Index> O) {
  convert(o, O, [](workspace& ws, const Index* x, std::size_t n, Index* y) { ws.offspring_to_cumulative(x, n, y); });
}
template <class Index>
void cumulative_offspring_to_ancestors(std::span<const Index> O, std::span<Index> a) {
  convert(O, a,
          [](workspace& ws, const Index* x, std::size_t n, Index* y) { ws.cumulative_offspring_to_ancestors(x, n, y); });
}
template <class Index>
void permute(std::span<const Index> a, std::span<Index> c) {
  convert(a, c, [](workspace& ws, const Index* x, std::size_t n, Index* y) { ws.permute(x, n, y); });
}

template <class T>
double log_sum_exp(std::span<const T> lw) {
  workspace ws;
  const device_vector<T> d_lw(lw);
  return ws.log_sum_exp(d_lw.data(), lw.size());
}

template <class T>
double effective_sample_size(std::span<const T> lw) {
  workspace ws;
  const device_vector<T> d_lw(lw);
  return ws.effective_sample_size(d_lw.data(), lw.size());
}

template <class T, class Index>
void ancestors_batched(scheme s, std::span<const T> lw, std::span<const std::size_t> offsets, key k, std::uint32_t step,
                       std::span<Index> a, const options& opt = {}) {
  if (offsets.size() < 2 || a.size() != lw.size()) {
    throw_bad_batch_offsets();
  }
  const std::vector<std::uint64_t> off(offsets.begin(), offsets.end());
  workspace ws;
  const device_vector<T> d_lw(lw);
  const device_vector<std::uint64_t> d_off{std::span<const std::uint64_t>(off)};
  device_vector<Index> d_a(a.size());
  ws.ancestors_batched(s, d_lw.data(), d_off.data(), off.size() - 1, lw.size(), k, step, d_a.data(), opt);
  ws.check();
  d_a.copy_to(a);
}

}  // namespace resample::cuda::host
