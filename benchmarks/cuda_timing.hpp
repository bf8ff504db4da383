// CUDA-event timing and the copy-bandwidth yardstick, shared by the GPU benchmark programs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include <benchmark/benchmark.h>

#include "resample/cuda/error.hpp"
#include "resample/cuda/host.hpp"

namespace resample::bench {

namespace cuda = resample::cuda;

/// Events around one enqueue: the elapsed device time, launch overhead included.
class event_timer {
 public:
  event_timer() {
    cuda::check(cudaEventCreate(&start_), "cudaEventCreate");
    cuda::check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~event_timer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  template <class F>
  double seconds(cudaStream_t stream, F&& enqueue) {
    cuda::check(cudaEventRecord(start_, stream), "cudaEventRecord");
    enqueue();
    cuda::check(cudaEventRecord(stop_, stream), "cudaEventRecord");
    cuda::check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    cuda::check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms * 1e-3;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

/// The device's copy bandwidth (read + write bytes per second of a 1 GiB device-to-device copy).
inline double copy_bandwidth() {
  static const double gbps = [] {
    const std::size_t bytes = std::size_t{1} << 30;
    cuda::host::device_vector<char> a(bytes), b(bytes);
    event_timer t;
    double best = 0;
    for (int r = 0; r < 10; ++r) {
      const double s = t.seconds(nullptr, [&] {
        cuda::check(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync");
      });
      best = std::max(best, 2.0 * static_cast<double>(bytes) / s / 1e9);
    }
    return best;
  }();
  return gbps;
}

/// The largest of the n float log-weights at `lw` (arrays the benchmark keeps for its whole run), a
/// double on the device, made once per array: options::device_max_log_weight.
inline const double* device_max(const float* lw, std::size_t n) {
  static std::map<const float*, std::unique_ptr<cuda::host::device_vector<double>>> cache;
  auto& slot = cache[lw];
  if (!slot) {
    std::vector<float> f(n);
    cuda::check(cudaMemcpy(f.data(), lw, n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    const double m = *std::max_element(f.begin(), f.end());
    slot = std::make_unique<cuda::host::device_vector<double>>(std::span<const double>(&m, 1));
  }
  return slot->data();
}

/// The roofline counters of a timed benchmark: bytes_moved (bytes_per_particle N), copy_GBps and
/// pct_copy_bw = bytes_moved / time per call / copy_GBps; items and bytes per second. `seconds`:
/// the summed manual time of the state's iterations.
inline void report(benchmark::State& state, std::size_t n, double bytes_per_particle, double seconds) {
  const double bytes = bytes_per_particle * static_cast<double>(n);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
  state.counters["bytes_moved"] = bytes;
  state.counters["copy_GBps"] = copy_bandwidth();
  const double per_call = seconds / static_cast<double>(std::max<benchmark::IterationCount>(1, state.iterations()));
  state.counters["pct_copy_bw"] = 100.0 * bytes / per_call / (copy_bandwidth() * 1e9);
}

}  // namespace resample::bench
