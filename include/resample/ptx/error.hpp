// Errors of the PTX backend. A failed driver call throws ptx_error, whose message names the
// operation and carries the driver's error name and string and, when the driver's JIT compiler
// refused the module, its error log. Bad input found on the device is reported by
// resample::cuda::check_status, as for the cuda backend.
#pragma once

#include <stdexcept>
#include <string>

namespace resample::ptx {

class ptx_error : public std::runtime_error {
 public:
  ptx_error(const std::string& operation, const std::string& driver_error, std::string jit_log = {})
      : std::runtime_error("PTX backend: " + operation + " failed: " + driver_error +
                           (jit_log.empty() ? std::string() : "\nJIT error log:\n" + jit_log)),
        jit_log_(std::move(jit_log)) {}
  /// The JIT compiler's error log (empty unless loading a module failed).
  [[nodiscard]] const std::string& jit_log() const noexcept { return jit_log_; }

 private:
  std::string jit_log_;
};

}  // namespace resample::ptx
