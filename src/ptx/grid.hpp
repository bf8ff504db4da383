// The grid-stride kernels' launch geometry and the kernels' pointer parameters, shared by the
// PTX entry points (ancestors.cpp, conversions.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace resample::ptx::detail {

constexpr unsigned threads = 256;  // the grid-stride kernels' blocks

/// Grid-stride kernels: one index per thread per step, at most 4096 blocks.
inline unsigned grid_for(std::size_t n) {
  return static_cast<unsigned>(std::clamp<std::size_t>((n + threads - 1) / threads, 1, 4096));
}

/// A device pointer as the .u64 a kernel parameter is.
inline std::uint64_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

}  // namespace resample::ptx::detail
