// CUB's two-phase temp-storage protocol, shared by the cuda and ptx backends' host code (plain
// C++: no device code here).
#pragma once

#include <cstddef>
#include <string>

#include "resample/core/error.hpp"

namespace resample::cuda::detail {

/// Carves one temp-storage allocation into aligned arrays; with a null base it only measures.
class carve {
 public:
  explicit carve(void* base) : base_(static_cast<char*>(base)) {}
  template <class X>
  X* take(std::size_t count) {
    offset_ = aligned(offset_);
    X* p = base_ ? reinterpret_cast<X*>(base_ + offset_) : nullptr;
    offset_ += count * sizeof(X);
    return p;
  }
  [[nodiscard]] std::size_t bytes() const { return aligned(offset_); }

 private:
  static std::size_t aligned(std::size_t x) { return (x + 255) / 256 * 256; }
  char* base_;
  std::size_t offset_ = 0;
};

/// Two-phase protocol: returns true when the call only measures (d_temp null); throws when the
/// caller's storage is too small.
inline bool measure_only(void* d_temp, std::size_t& temp_bytes, std::size_t needed) {
  if (d_temp == nullptr) {
    temp_bytes = needed;
    return true;
  }
  if (temp_bytes < needed) {
    throw invalid_input("CUDA temp storage of " + std::to_string(temp_bytes) + " bytes is too small: this call needs " +
                        std::to_string(needed));
  }
  return false;
}

}  // namespace resample::cuda::detail
