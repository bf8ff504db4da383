// Philox4x32-10 in PTX (ptx/philox.ptx), one thread per block of four words.
#include <cstdint>

#include "module.hpp"
#include "resample/core/error.hpp"
#include "resample/ptx/resample.hpp"

namespace resample::ptx {

void philox_blocks(key k, std::uint64_t first_index, std::size_t count, std::uint32_t step, std::uint32_t draw_block,
                   std::uint32_t* d_out, cudaStream_t stream) {
  if (count == 0) return;
  if (reinterpret_cast<std::uintptr_t>(d_out) % 16 != 0) {
    throw invalid_input("philox_blocks: the output must be 16-byte aligned (it is written 4 words at a time)");
  }
  constexpr unsigned threads = 256;
  if (count > std::size_t{threads} * 0x7fffffffu) throw invalid_input("philox_blocks: count beyond one launch");
  const auto grid = static_cast<unsigned>((count + threads - 1) / threads);
  const std::uint64_t n = count;
  const std::uint64_t out = reinterpret_cast<std::uintptr_t>(d_out);
  detail::launch("resample_philox_blocks", grid, threads, stream,
                 {&k.seed, &k.stream, &first_index, &n, &step, &draw_block, &out});
}

}  // namespace resample::ptx
