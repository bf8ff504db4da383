// The temp storage of a one-pass scan by decoupled look-back (ptx/look_back.ptx), shared by the
// comb kernel (ancestors.cpp) and the offspring scan (conversions.cpp): the call's status first,
// then the ticket, the per-tile flags (8 bytes a tile) and the tiles' 128-bit aggregates and
// inclusive prefixes.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "cuda/detail/temp_storage.hpp"
#include "resample/cuda/error.hpp"
#include "resample/cuda/status.hpp"

namespace resample::ptx::detail {

/// The tile of a look-back kernel: 256 threads of 8 particles each (the kernels' shared arrays
/// hold at most 8 x 256 items).
constexpr unsigned tile_threads = 256;
constexpr std::size_t tile_items = 8 * tile_threads;
constexpr std::size_t tile_count(std::size_t n) { return (n + tile_items - 1) / tile_items; }

/// The offspring scan's blocks (ptx/offspring_scan.ptx: at most its .maxntid) and tiles: 64 bytes of
/// counts a thread, so 16 int32 or 8 int64 counts; never more tiles than tile_count(n), so that the
/// storage a call carves for its comb kernel serves its scan too (src/ptx/ancestors.cpp).
constexpr unsigned offspring_scan_threads = 256;
constexpr std::size_t offspring_scan_tiles(std::size_t n, bool index64,
                                           unsigned block_threads = offspring_scan_threads) {
  const std::size_t items = 64 * std::size_t{block_threads} / (index64 ? 8 : 4);
  return (n + items - 1) / items;
}

struct look_back_storage {
  cuda::device_status* status;
  // the kernels' pointer parameters, as the .u64 they are
  std::uint64_t status_at, ticket_at, flags_at, aggregates_at, inclusives_at;
  std::size_t zeroed_bytes;  ///< from the status to the last flag: one memset clears all three

  /// Carves the status and the look-back's arrays for `tiles` tiles from `c` (nothing to clear
  /// while measuring: the carve's base is null).
  static look_back_storage take(cuda::detail::carve& c, std::size_t tiles) {
    look_back_storage s{};
    s.status = c.take<cuda::device_status>(1);
    auto* ticket = c.take<std::uint32_t>(1);
    // 8 bytes a tile: a 32-bit flag (resample_look_back), or the int32 offspring scan's flag and
    // sum in one word (resample_look_back_u32)
    auto* flags = c.take<std::uint64_t>(tiles);
    auto* aggregates = c.take<std::uint64_t>(2 * tiles);
    auto* inclusives = c.take<std::uint64_t>(2 * tiles);
    s.status_at = reinterpret_cast<std::uintptr_t>(s.status);
    s.ticket_at = reinterpret_cast<std::uintptr_t>(ticket);
    s.flags_at = reinterpret_cast<std::uintptr_t>(flags);
    s.aggregates_at = reinterpret_cast<std::uintptr_t>(aggregates);
    s.inclusives_at = reinterpret_cast<std::uintptr_t>(inclusives);
    s.zeroed_bytes = static_cast<std::size_t>(reinterpret_cast<char*>(flags + tiles) - reinterpret_cast<char*>(s.status));
    return s;
  }

  /// Zeroes the status, the ticket and the flags on `stream`: every call starts a fresh look-back.
  void clear(cudaStream_t stream) const {
    cuda::check(cudaMemsetAsync(status, 0, zeroed_bytes, stream), "cudaMemsetAsync (PTX status and look-back flags)");
  }

  /// Zeroes the ticket and the flags only, keeping the status: a second look-back in one call.
  void clear_look_back(cudaStream_t stream) const {
    const std::size_t status_bytes = ticket_at - status_at;
    cuda::check(cudaMemsetAsync(reinterpret_cast<void*>(ticket_at), 0, zeroed_bytes - status_bytes, stream),
                "cudaMemsetAsync (PTX look-back flags)");
  }
};

}  // namespace resample::ptx::detail
