// The device's multiprocessor count, for kernels launched as one wave of blocks (max_pass).
#include <array>
#include <atomic>

#include <cuda_runtime_api.h>

#include "resample/cuda/error.hpp"

namespace resample::cuda::detail {

int multiprocessor_count() {
  // Per device, filled on first use; a race only asks the driver twice for the same number.
  static std::array<std::atomic<int>, 64> counts{};
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  if (device < 0 || device >= static_cast<int>(counts.size())) {
    int count = 0;
    check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    return count;
  }
  int count = counts[device].load(std::memory_order_relaxed);
  if (count == 0) {
    check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    counts[device].store(count, std::memory_order_relaxed);
  }
  return count;
}

}  // namespace resample::cuda::detail
