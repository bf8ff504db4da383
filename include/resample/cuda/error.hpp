// Errors of the CUDA backend. A failed CUDA call throws cuda_error, whose message names the
// operation and carries CUDA's own error string; bad input found on the device is reported as
// resample::invalid_input by check_status (status.hpp), with the same message as the CPU backends.
#pragma once

#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

namespace resample::cuda {

class cuda_error : public std::runtime_error {
 public:
  cuda_error(cudaError_t code, const std::string& operation)
      : std::runtime_error("CUDA error in " + operation + ": " + cudaGetErrorName(code) + " (" +
                           cudaGetErrorString(code) + ")"),
        code_(code) {}
  [[nodiscard]] cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

/// Throws cuda_error unless `code` is cudaSuccess.
inline void check(cudaError_t code, const char* operation) {
  if (code != cudaSuccess) throw cuda_error(code, operation);
}

/// After a kernel launch: a bad configuration shows up here, not at the launch.
inline void check_launch(const char* kernel) { check(cudaGetLastError(), std::string("launch of ").append(kernel).c_str()); }

/// Whether a CUDA device can be used in this process (false on machines without a GPU or driver).
inline bool device_available() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device" error
    return false;
  }
  return count > 0;
}

}  // namespace resample::cuda
