// Random123's kat_vectors, "philox4x32 10": counter (4 words), key (2 words) -> output. Shared by the
// C++ generator's test (rng_test) and the PTX one's (ptx_functions_test, ptx_backend_test).
#pragma once

#include <cstdint>

namespace resample::test {

struct philox_known_answer {
  std::uint32_t ctr[4], key[2], out[4];
};
inline constexpr philox_known_answer philox_known_answers[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}, {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}, {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

}  // namespace resample::test
