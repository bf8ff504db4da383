// Counter-based randomness: Philox4x32-10 (Salmon et al., SC'11) from Random123, on host and device.
//
// A draw is a pure function of (key, counter): key = (seed, stream), counter = (index, step, draw
// block), so the uniform that particle i uses at resampling step t never depends on thread or
// block layout, and every backend sees the same numbers. Word layout of the 128-bit counter:
//   c0 = low 32 bits of the index, c1 = high 32 bits, c2 = step, c3 = draw block.
// Each Philox call gives 4 words; philox_stream hands them out in order, moving to the next draw
// block every 4 words, so a particle may take as many words as it needs (rejection loops, say).
#pragma once

#include <cstdint>

#include <Random123/philox.h>

#include "resample/core/config.hpp"

namespace resample {

/// The key of a resampling call: `seed` names the experiment, `stream` separates independent uses
/// of one seed (e.g. propagation vs resampling, or systems of a batch).
struct key {
  std::uint32_t seed = 0;
  std::uint32_t stream = 0;
};

/// Index reserved for draws shared by all particles of a call (Megopolis' offsets, systematic's u).
inline constexpr std::uint64_t shared_index = ~std::uint64_t{0};

/// One raw Philox4x32-10 block.
RESAMPLE_HOST_DEVICE inline r123::Philox4x32::ctr_type philox4x32_10(r123::Philox4x32::ctr_type counter,
                                                                    r123::Philox4x32::key_type k) {
  return r123::Philox4x32()(counter, k);
}

/// The words of Philox4x32-10 under `k` at counters (index, step, 0), (index, step, 1), ..., in order.
class philox_stream {
 public:
  RESAMPLE_HOST_DEVICE philox_stream(key k, std::uint64_t index, std::uint32_t step)
      : key_{{k.seed, k.stream}},
        counter_{{static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32), step, 0}} {}

  RESAMPLE_HOST_DEVICE std::uint32_t next() {
    if (lane_ == 4) {
      block_ = philox4x32_10(counter_, key_);
      ++counter_.v[3];
      lane_ = 0;
    }
    return block_.v[lane_++];
  }

  /// 64 random bits from two words (the first is the high half).
  RESAMPLE_HOST_DEVICE std::uint64_t next64() {
    const std::uint64_t hi = next();
    return (hi << 32) | next();
  }

 private:
  r123::Philox4x32::key_type key_;
  r123::Philox4x32::ctr_type counter_;
  r123::Philox4x32::ctr_type block_{};
  int lane_ = 4;
};

}  // namespace resample
