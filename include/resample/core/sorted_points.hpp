// Multinomial-sorted's sorted uniforms, exactly and in parallel (host and device): N points iid
// uniform on a grid of [0, B), generated already grouped by unit stratum, so that the cumulative
// offspring O^i = #{points < r_i}, r_i = B C_i / Q, needs only the stratum r_i falls in: the comb
// of stratified resampling (Code 4) with c_K points in stratum K instead of one. The ancestors are
// then Code 3's, sorted, without Code 3's serial running product.
//
//   B = 2^b strata, b = min(bit_width(N - 1), 31) (B >= N up to N = 2^31: about a point per stratum);
//   G = 2^g super-bins of W = 2^(b - g) strata, g = min(max(b - 11, 0), 13).
//   level 1: ball j in [0, N) lies in super-bin  (word j of the level-1 stream) >> (32 - g);
//   level 2: ball m < c_g of super-bin g lies in stratum  g W + (word m of super-bin g's stream) mod W;
//   points:  stratum K holds the c_K points of ranks t in [P_K, P_K + c_K), P_K = c_0 + ... + c_{K-1},
//            point t at K + u_t 2^-32, u_t = word t of the points stream (index points_index).
// Word m of the stream at index I is word m mod 4 of Philox at (I + m / 4, step, 0) for the
// points, and at (I, step, m / 4) for the balls. Given the level-1 counts c_g, a super-bin's balls
// are independently uniform on its W strata, so the counts c_K are those of N balls thrown
// uniformly into B strata; given the c_K, the points of a stratum are iid uniform on its 2^32 grid.
// So the N points are iid uniform on the grid 2^-32 of [0, B), and the ancestor of the j-th
// smallest has P(a = i) = q_i / Q up to that grid, like systematic and stratified's 2^-32 per
// stratum. Powers of two everywhere: no rejection, one word per ball or point.
//
// Offsets by rank put a run of particles' points in consecutive words: a GPU thread walks its
// points four at a time, one Philox call each, in step with the other threads of its warp.
#pragma once

#include <cstdint>

#include "resample/core/config.hpp"
#include "resample/core/exact_offspring.hpp"
#include "resample/core/philox.hpp"
#include "resample/core/wide_int.hpp"

namespace resample {

/// Philox at (index, step, block): the four words of one draw block.
RESAMPLE_HOST_DEVICE inline r123::Philox4x32::ctr_type philox_block(key k, std::uint64_t index, std::uint32_t step,
                                                                   std::uint32_t block) {
  return philox4x32_10(r123::Philox4x32::ctr_type{{static_cast<std::uint32_t>(index),
                                                   static_cast<std::uint32_t>(index >> 32), step, block}},
                       r123::Philox4x32::key_type{{k.seed, k.stream}});
}

/// The layout of multinomial-sorted's points for N particles, and their draws.
class sorted_points {
 public:
  /// Philox indices of the three kinds of draws (above every particle index, below Megopolis').
  static constexpr std::uint64_t level1_index = std::uint64_t{1} << 32;
  static constexpr std::uint64_t level2_index = std::uint64_t{2} << 32;  // + g, g < 2^13
  static constexpr std::uint64_t points_index = std::uint64_t{3} << 32;  // + t / 4, t < 2^32

  RESAMPLE_HOST_DEVICE explicit sorted_points(std::uint64_t n)
      : n_(n),
        strata_bits_(n <= 1 ? 0 : detail::bit_width(n - 1) > 31 ? 31 : detail::bit_width(n - 1)),
        super_bin_bits_(strata_bits_ <= 11 ? 0 : strata_bits_ - 11 > 13 ? 13 : strata_bits_ - 11) {}

  [[nodiscard]] RESAMPLE_HOST_DEVICE std::uint64_t size() const { return n_; }
  [[nodiscard]] RESAMPLE_HOST_DEVICE std::uint64_t strata() const { return std::uint64_t{1} << strata_bits_; }
  [[nodiscard]] RESAMPLE_HOST_DEVICE std::uint32_t super_bins() const { return 1u << super_bin_bits_; }
  [[nodiscard]] RESAMPLE_HOST_DEVICE int width_bits() const { return strata_bits_ - super_bin_bits_; }
  [[nodiscard]] RESAMPLE_HOST_DEVICE std::uint64_t width() const { return std::uint64_t{1} << width_bits(); }

  /// The GPU backends' split of level 1 into rows of balls counted by one block each: at most 2^16
  /// balls a row and 256 rows (any split gives the same counts).
  [[nodiscard]] RESAMPLE_HOST_DEVICE unsigned level1_rows() const {
    const std::uint64_t rows = (n_ + 0xFFFF) >> 16;
    return static_cast<unsigned>(rows < 256 ? rows : 256);
  }

  /// The super-bin of a level-1 word.
  [[nodiscard]] RESAMPLE_HOST_DEVICE std::uint32_t super_bin_of(std::uint32_t word) const {
    return super_bin_bits_ == 0 ? 0u : word >> (32 - super_bin_bits_);
  }
  /// The stratum, within its super-bin, of a level-2 word.
  [[nodiscard]] RESAMPLE_HOST_DEVICE std::uint64_t stratum_in_super_bin(std::uint32_t word) const {
    return word & (width() - 1);
  }

  /// Level-1 words of balls 4 j4 .. 4 j4 + 3; level-2 words of balls 4 m4 .. of super-bin g;
  /// the offsets u_t of points 4 t4 .. 4 t4 + 3.
  RESAMPLE_HOST_DEVICE static r123::Philox4x32::ctr_type level1_words(key k, std::uint32_t step, std::uint64_t j4) {
    return philox_block(k, level1_index, step, static_cast<std::uint32_t>(j4));
  }
  RESAMPLE_HOST_DEVICE static r123::Philox4x32::ctr_type level2_words(key k, std::uint32_t step, std::uint32_t g,
                                                                       std::uint64_t m4) {
    return philox_block(k, level2_index + g, step, static_cast<std::uint32_t>(m4));
  }
  RESAMPLE_HOST_DEVICE static r123::Philox4x32::ctr_type point_words(key k, std::uint32_t step, std::uint64_t t4) {
    return philox_block(k, points_index + t4, step, 0);
  }
  /// u_t, the offset of the point of rank t.
  RESAMPLE_HOST_DEVICE static std::uint32_t point_offset(key k, std::uint32_t step, std::uint64_t t) {
    return point_words(k, step, t / 4).v[t % 4];
  }

 private:
  std::uint64_t n_;
  int strata_bits_;
  int super_bin_bits_;
};

/// Stratum K's points: P_K = c_0 + ... + c_{K-1} of them lie in the strata below it, c_K in it.
struct stratum_points {
  std::uint64_t before;
  std::uint64_t count;
};

/// O = #{points below r}, r = B C / Q, exactly: `comb` is exact_comb(Q, B) and `strata(K)` gives
/// stratum K's stratum_points. The CPU's per-particle step and the GPU's exact fallback.
template <class Strata>
RESAMPLE_HOST_DEVICE std::uint64_t sorted_points_below(const exact_comb& comb, const sorted_points& layout, u128 C,
                                                       key k, std::uint32_t step, const Strata& strata) {
  const std::uint64_t K = comb.floor_ratio(C);
  if (K >= comb.size()) return layout.size();
  const stratum_points p = strata(K);
  std::uint64_t O = p.before;
  for (std::uint64_t t = p.before; t < p.before + p.count; ++t) {
    O += detail::point_below(K, sorted_points::point_offset(k, step, t), comb.total(), comb.size(), C) ? 1 : 0;
  }
  return O;
}

}  // namespace resample
