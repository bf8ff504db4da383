// The PTX kernels address resample::cuda::device_status by byte offsets (first_bad +0, max_key +16,
// code +32, fraction +36, total +48, squares +64, max_log_w +80, value +88, bound +96, result +104,
// integer +112, index +120, n +136, step +144, shared_word +148, exp_mode +152) and the codes by
// number; these
// assertions keep the struct and the PTX in step.
#pragma once

#include <cstddef>

#include "resample/cuda/status.hpp"

namespace resample::ptx::detail {
using cuda::device_status;
static_assert(offsetof(device_status, first_bad) == 0);
static_assert(offsetof(device_status, max_key) == 16);
static_assert(offsetof(device_status, code) == 32);
static_assert(offsetof(device_status, fraction) == 36);
static_assert(offsetof(device_status, total) == 48);
static_assert(offsetof(device_status, squares) == 64);
static_assert(offsetof(device_status, max_log_w) == 80);
static_assert(offsetof(device_status, value) == 88);
static_assert(offsetof(device_status, bound) == 96);
static_assert(offsetof(device_status, result) == 104);
static_assert(offsetof(device_status, integer) == 112);
static_assert(offsetof(device_status, index) == 120);
static_assert(offsetof(device_status, n) == 136);
static_assert(offsetof(device_status, step) == 144);
static_assert(offsetof(device_status, shared_word) == 148);
static_assert(offsetof(device_status, exp_mode) == 152);
// comb_one_block.ptx zeroes the first 22 words of 8 bytes (through max_seen); options::
// device_max_log_weight's fields: open_call.ptx writes them, tile_sums.ptx and weight_statistics.ptx read them.
static_assert(offsetof(device_status, max_is_given) == 168);
static_assert(offsetof(device_status, max_seen) == 172);
static_assert(offsetof(device_status, first_above_max) == 176);
static_assert(offsetof(device_status, max_given) == 184);
static_assert(static_cast<int>(cuda::status_code::max_not_largest) == 10);  // weight_statistics.ptx's code
static_assert(sizeof(device_status) == 192);
static_assert(static_cast<int>(cuda::status_code::skipped) == 9);  // open_call.ptx's gate
static_assert(static_cast<int>(cuda::status_code::bad_ancestor) == 4);  // check_indices.ptx's codes
static_assert(static_cast<int>(cuda::status_code::cumulative_decreases) == 5);
static_assert(static_cast<int>(cuda::status_code::cumulative_end) == 6);
}  // namespace resample::ptx::detail
