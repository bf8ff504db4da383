// RAII over the two-phase protocol of resample.hpp: a workspace owns one device allocation that
// grows to the largest call it has seen (so a loop of same-sized calls allocates once), a stream,
// and the status of its last call.
//
//   resample::cuda::workspace ws(stream);
//   for (step ...) {
//     ws.ancestors(scheme::systematic, d_lw, n, {seed, 0}, step, d_a);   // enqueued, no host wait
//   }
//   ws.check();   // waits; throws invalid_input if any bad input was seen in the last call
#pragma once

#include <cstddef>
#include <utility>

#include "resample/cuda/resample.hpp"

namespace resample::cuda {

class workspace {
 public:
  explicit workspace(cudaStream_t stream = nullptr) : stream_(stream) {}
  workspace(const workspace&) = delete;
  workspace& operator=(const workspace&) = delete;
  workspace(workspace&& other) noexcept
      : stream_(other.stream_), data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  workspace& operator=(workspace&& other) noexcept {
    std::swap(stream_, other.stream_);
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }
  ~workspace() {
    if (data_) (void)cudaFree(data_);
  }

  [[nodiscard]] cudaStream_t stream() const { return stream_; }
  [[nodiscard]] void* data() const { return data_; }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

  /// At least `bytes` of device memory (reallocates only to grow; waits for the device then).
  void reserve(std::size_t bytes) {
    if (bytes <= bytes_) return;
    if (data_) {
      cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (workspace grows)");
      cuda::check(cudaFree(data_), "cudaFree (workspace)");
      data_ = nullptr;
      bytes_ = 0;
    }
    cuda::check(cudaMalloc(&data_, bytes), "cudaMalloc (workspace)");
    bytes_ = bytes;
  }

  /// Runs a two-phase call `f(d_temp, temp_bytes)`: measures, reserves, enqueues.
  template <class F>
  void run(F&& f) {
    std::size_t needed = 0;
    f(nullptr, needed);
    reserve(needed);
    std::size_t have = bytes_;
    f(data_, have);
  }

  /// Waits for the stream and throws invalid_input if the last call found bad input.
  device_status check() const { return check_status(data_, stream_); }

  template <class T, class Index>
  void ancestors(scheme s, const T* lw, std::size_t n, key k, std::uint32_t step, Index* a, const options& opt = {}) {
    run([&](void* t, std::size_t& b) { cuda::ancestors(t, b, s, lw, n, k, step, a, opt, stream_); });
  }
  template <class T, class Index>
  void offspring(scheme s, const T* lw, std::size_t n, key k, std::uint32_t step, Index* o, const options& opt = {}) {
    run([&](void* t, std::size_t& b) { cuda::offspring(t, b, s, lw, n, k, step, o, opt, stream_); });
  }
  template <class T, class Index>
  void cumulative_offspring(scheme s, const T* lw, std::size_t n, key k, std::uint32_t step, Index* O,
                            const options& opt = {}) {
    run([&](void* t, std::size_t& b) { cuda::cumulative_offspring(t, b, s, lw, n, k, step, O, opt, stream_); });
  }
  template <class Index>
  void ancestors_to_offspring(const Index* a, std::size_t n, Index* o) {
    run([&](void* t, std::size_t& b) { cuda::ancestors_to_offspring(t, b, a, n, o, stream_); });
  }
  template <class Index>
  void offspring_to_cumulative(const Index* o, std::size_t n, Index* O) {
    run([&](void* t, std::size_t& b) { cuda::offspring_to_cumulative(t, b, o, n, O, stream_); });
  }
  template <class Index>
  void cumulative_offspring_to_ancestors(const Index* O, std::size_t n, Index* a) {
    run([&](void* t, std::size_t& b) { cuda::cumulative_offspring_to_ancestors(t, b, O, n, a, stream_); });
  }
  template <class Index>
  void permute(const Index* a, std::size_t n, Index* c) {
    run([&](void* t, std::size_t& b) { cuda::permute(t, b, a, n, c, stream_); });
  }
  template <class T, class Index>
  void ancestors_batched(scheme s, const T* lw, const std::uint64_t* offsets, std::size_t systems, std::size_t n, key k,
                         std::uint32_t step, Index* a, const options& opt = {}) {
    run([&](void* t, std::size_t& b) {
      cuda::ancestors_batched(t, b, s, lw, offsets, systems, n, k, step, a, opt, stream_);
    });
  }
  /// log-sum-exp and ESS wait for their result.
  template <class T>
  double log_sum_exp(const T* lw, std::size_t n) {
    run([&](void* t, std::size_t& b) { cuda::log_sum_exp(t, b, lw, n, nullptr, stream_); });
    return check().result;
  }
  template <class T>
  double effective_sample_size(const T* lw, std::size_t n) {
    run([&](void* t, std::size_t& b) { cuda::effective_sample_size(t, b, lw, n, nullptr, stream_); });
    return check().result;
  }

 private:
  cudaStream_t stream_ = nullptr;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace resample::cuda
