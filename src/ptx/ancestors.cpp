// Ancestors, offspring, cumulative offspring and permuted ancestors on the PTX backend, on the
// caller's stream. Systematic and stratified ancestors, offspring and cumulative offspring of
// N <= 4096 take one launch, resample_comb_one_block (the whole call in one block:
// ptx/comb_one_block.ptx). Every other call starts with
//   resample_open_call  the status, the look-back's ticket and (for the calls that look back) its
//                 per-tile flags zeroed; the step
//                 (options::device_step or the argument), systematic's U (Philox at
//                 (shared_index, step)) and the gate (options::device_gate) into the status
//   resample_max_pass, resample_weight_sums, resample_weight_statistics
//                 the verdict (NaN / +inf first, then all zero, then above rejection's bound),
//                 max lw, F, Q and Metropolis' B (weight_summary.hpp)
// then, by scheme:
//   systematic, stratified, multinomial-sorted: the summary by tiles instead (resample_tile_sums:
//                 each tile's Q_t and each warp's C within it; the finishing block also writes each
//                 tile's C before it); multinomial-sorted's points per stratum P_K (ptx/sorted_points.ptx:
//                 level 1's rows, their column sums and the super-bins' scan, level 2); then
//                 resample_comb_from_estimates, one block per tile of 2048 particles: the comb from
//                 estimated weights from each warp's exact C (the exact weights only in a warp where
//                 an estimate cannot decide), then Code 8, o or O (ptx/comb_from_estimates.ptx): the
//                 counts are written from the comb directly. Multinomial-sorted compares the c_K
//                 points of stratum K where stratified has one.
//   multinomial:  the summary by tiles, as the comb's; resample_cdf_from_offsets writes the exact C_i
//                 from its offsets (16 bytes per particle of temp storage), then resample_multinomial
//                 draws and searches (ptx/cdf_from_offsets.ptx, ptx/multinomial.ptx);
//   residual, ssp: resample_split_expected_offspring (N q_i = f_i Q + r_i); then SSP's
//                 resample_ssp_pairing on one thread, or residual's table of C (the comb kernel's
//                 form 3), the scan of the floors and resample_residual_draws (ptx/residual.ptx);
//                 then the offspring scan and (ancestors) Code 8 (resample_cumulative_to_ancestors);
//   metropolis, megopolis, rejection: resample_chains, one thread per particle (ptx/chains.ptx).
//   Multinomial and the chains count their offspring by Code 9 (resample_count_offspring) from
//   ancestors in temp storage; cumulative offspring by the offspring scan after it.
// Permuted ancestors add Code 7's passes (ptx/permute.ptx); the chain kernel makes the PREPERMUTE
// claims itself.
#include <algorithm>
#include <cstdint>
#include <string>

#include "cuda/detail/temp_storage.hpp"
#include "module.hpp"
#include "resample/core/sorted_points.hpp"
#include "resample/core/validate.hpp"
#include "resample/cuda/error.hpp"
#include "resample/ptx/resample.hpp"
#include "grid.hpp"
#include "look_back_storage.hpp"
#include "status_layout.hpp"
#include "weight_summary.hpp"

namespace resample::ptx {
namespace detail {
namespace {

template <class Index>
void check_call(scheme s, std::size_t n, const options& opt) {
  check_size<Index>(n, n);
  if (opt.cdf != precision::exact) throw invalid_input("the ptx backend has the exact CDF only");
  if (opt.device_max_log_weight && s != scheme::systematic && s != scheme::stratified &&
      s != scheme::multinomial_sorted) {
    throw invalid_input("options::device_max_log_weight is supported by systematic, stratified and "
                        "multinomial-sorted only (ptx), not by " + std::string(name(s)));
  }
  if (opt.fast_exp && s != scheme::systematic && s != scheme::stratified && s != scheme::multinomial &&
      s != scheme::multinomial_sorted) {
    throw invalid_input(std::string("options::fast_exp is for systematic, stratified, multinomial and "
                                    "multinomial-sorted; ") + std::string(name(s)) +
                        " computes its exponentials exactly on the ptx backend");
  }
  check_scheme_options(s, opt);
}

/// The call's opening (ptx/open_call.ptx): the status and (for the calls that look back) the
/// look-back's flags zeroed, the step (options::device_step, else `step`), systematic's U and the
/// exp mode (options::fast_exp) into the status, and the gate (options::device_gate) closed there
/// when it reads 0, which every later kernel obeys; options::device_max_log_weight's max, as the max
/// pass would have left it, and the flag that has the tile sums check it.
void open_call(const look_back_storage& scan, const options& opt, std::uint32_t step, key k, cudaStream_t stream) {
  const std::uint64_t words = scan.zeroed_bytes / 4, gate = address(opt.device_gate),
                      step_at = address(opt.device_step), given_max = address(opt.device_max_log_weight);
  const std::uint32_t mode = opt.fast_exp ? 1 : 0;
  const auto grid = static_cast<unsigned>(std::min<std::uint64_t>((words + threads - 1) / threads, 64));
  launch("resample_open_call", grid, threads, stream,
         {&scan.status_at, &words, &gate, &step_at, &step, &k.seed, &k.stream, &mode, &given_max});
}

/// What a call writes: the comb kernel's form_in, and permuted ancestors (Code 7 after the draw).
enum class form : std::uint32_t { ancestors = 0, offspring = 1, cumulative = 2, permuted = 3 };

bool is_chain(scheme s) { return s == scheme::metropolis || s == scheme::megopolis || s == scheme::rejection; }

/// Schemes whose kernels write ancestors only (the chains and multinomial): their offspring forms
/// are counted from the ancestors.
bool draws_ancestors_only(scheme s) { return is_chain(s) || s == scheme::multinomial; }

/// The chain kernel's kind_in.
std::uint32_t chain_kind(scheme s) { return s == scheme::metropolis ? 0 : s == scheme::megopolis ? 1 : 2; }

/// What the finishing block computes for scheme s: B for Metropolis and Megopolis, the bound check
/// for rejection.
summary_request request_for(scheme s, const options& opt) {
  summary_request req;
  if (s == scheme::metropolis || s == scheme::megopolis) {
    req.wanted = summary_request::steps;
    if (opt.metropolis_steps) req.wanted |= summary_request::steps_given;
    req.eps = opt.metropolis_eps;
    req.fixed_steps = opt.metropolis_steps.value_or(0);
  }
  if (s == scheme::rejection && opt.rejection_log_bound) req.bound = *opt.rejection_log_bound;
  return req;
}

constexpr unsigned chain_threads = 256;  // one particle per thread

/// What every stage of one call shares: its buffers' device addresses and its scalars, as the
/// .u64 / .u32 kernel parameters they are, and its grids.
struct call {
  const look_back_storage& scan;
  std::uint64_t weights, count, status;
  std::uint64_t out, drawn, slots;  ///< the output; the draw's ancestors (the output unless temp); Code 7's slots
  std::uint32_t is_double, index64;
  key k;
  form f;
  unsigned grid, tiles;
  cudaStream_t stream;
};

/// The comb kernel's scheme_in.
std::uint32_t comb_scheme(scheme s) { return s == scheme::stratified ? 1 : s == scheme::multinomial_sorted ? 2 : 0; }

/// The look-back comb (ptx/comb_look_back.ptx) writing the exact C_i to `to` (its form 3: residual's
/// table; multinomial's comes from resample_cdf_from_offsets).
void launch_cdf(const call& c, std::uint64_t to) {
  const std::uint32_t systematic = 0, written = 3;
  launch("resample_comb_look_back", c.tiles, tile_threads, c.stream,
         {&c.weights, &c.count, &c.is_double, &c.index64, &systematic, &c.scan.status_at, &c.scan.ticket_at,
          &c.scan.flags_at, &c.scan.aggregates_at, &c.scan.inclusives_at, &c.k.seed, &c.k.stream, &to, &written});
}

/// The one-block path's largest N: ptx/comb_one_block.ptx's 512 threads of 8 particles.
constexpr std::size_t one_block_items = 4096;

/// Systematic or stratified resampling of at most one_block_items particles in one launch
/// (ptx/comb_one_block.ptx): the opening, the summary and the comb, which take five launches from
/// the tiles' kernels, for the latency of small systems; a block of 8 particles a thread. Writes
/// form c.f (not permuted).
void comb_in_one_block(const call& c, scheme s, const options& opt, std::uint32_t step) {
  const std::uint64_t gate = address(opt.device_gate), step_at = address(opt.device_step);
  const std::uint32_t scheme_in = comb_scheme(s), mode = opt.fast_exp ? 1 : 0;
  const auto written = static_cast<std::uint32_t>(c.f);
  const auto warps = static_cast<unsigned>((c.count + 255) / 256);
  launch("resample_comb_one_block", 1, 32 * warps, c.stream,
         {&c.weights, &c.count, &c.is_double, &c.index64, &scheme_in, &c.status, &gate, &step_at, &step, &c.k.seed,
          &c.k.stream, &mode, &c.out, &written});
}

/// The comb from estimated weights' tile arrays (ptx/tile_sums.ptx, comb_from_estimates.ptx): each
/// tile's Q_t and C before it, each warp's C within its tile; {lo, hi} pairs.
struct tile_storage {
  std::uint64_t *sums = nullptr, *offsets = nullptr, *warp_offsets = nullptr;

  static tile_storage take(cuda::detail::carve& c, std::size_t tiles) {
    tile_storage t;
    t.sums = c.take<std::uint64_t>(2 * tiles);
    t.offsets = c.take<std::uint64_t>(2 * tiles);
    t.warp_offsets = c.take<std::uint64_t>(2 * tiles * (tile_threads / 32));
    return t;
  }
};

/// Multinomial-sorted's temp storage: level 1's rows of G counts, the super-bins' counts and first
/// points, P_0 .. P_B, and the column sums' count of blocks done (ptx/sorted_points.ptx).
struct points_storage {
  std::uint32_t *rows = nullptr, *super_count = nullptr, *super_before = nullptr, *points = nullptr;
  std::uint32_t* finished = nullptr;

  static points_storage take(cuda::detail::carve& c, std::size_t n) {
    const sorted_points layout(n);
    points_storage p;
    p.rows = c.take<std::uint32_t>(std::size_t{layout.level1_rows()} * layout.super_bins());
    p.super_count = c.take<std::uint32_t>(layout.super_bins());
    p.super_before = c.take<std::uint32_t>(layout.super_bins());
    p.points = c.take<std::uint32_t>(layout.strata() + 1);
    p.finished = c.take<std::uint32_t>(1);
    return p;
  }
};

/// P_K, the points below stratum K, for K = 0 .. B (ptx/sorted_points.ptx): three kernels launched
/// early, level 1 drawing its balls while the summary finishes. The step as open_call takes it.
void enqueue_points(const call& c, const points_storage& p, const options& opt, std::uint32_t step) {
  const sorted_points layout(c.count);
  const std::uint32_t rows_count = layout.level1_rows();
  const std::uint64_t rows = address(p.rows), super_count = address(p.super_count),
                      super_before = address(p.super_before), points = address(p.points),
                      finished = address(p.finished), step_at = address(opt.device_step);
  launch_early("resample_points_level1", rows_count, threads, c.stream,
               {&c.count, &c.status, &c.k.seed, &c.k.stream, &step_at, &step, &rows, &finished});
  static_assert(threads * 32 == 8192, "the super-bins' scan: one block, 32 of sorted_points' 2^13 super-bins per thread");
  launch_early("resample_points_super_bin_sums", (layout.super_bins() + threads - 1) / threads, threads, c.stream,
               {&c.count, &c.status, &rows, &rows_count, &super_count, &super_before, &finished});
  launch_early("resample_points_level2", layout.super_bins(), threads, c.stream,
               {&c.count, &c.status, &c.k.seed, &c.k.stream, &super_count, &super_before, &points});
}

/// The offspring scan (ptx/offspring_scan.ptx): inclusive sums of the counts at `counts` into `to`.
void scan_counts(const call& c, std::uint64_t counts, std::uint64_t to) {
  launch("resample_offspring_scan", static_cast<unsigned>(offspring_scan_tiles(c.count, c.index64 != 0)),
         offspring_scan_threads, c.stream,
         {&counts, &c.count, &c.index64, &c.scan.ticket_at, &c.scan.flags_at, &c.scan.aggregates_at,
          &c.scan.inclusives_at, &to, &c.status});
}

/// Residual and SSP: the split into counts f_i (and SSP's remainders), residual's draws or SSP's
/// pairing on the counts, then (unless the counts are the output) their scan and Code 8.
void enqueue_split(const call& c, bool ssp, std::uint64_t counts, std::uint64_t remainders, std::uint64_t cdf,
                   std::uint64_t floors, std::uint64_t cumulative) {
  launch("resample_split_expected_offspring", c.grid, threads, c.stream,
         {&c.weights, &c.count, &c.is_double, &c.index64, &c.status, &counts, &remainders});
  if (ssp) {
    launch("resample_ssp_pairing", 1, 1, c.stream,
           {&remainders, &counts, &c.count, &c.index64, &c.status, &c.k.seed, &c.k.stream});
  } else {  // residual: C (the comb kernel's form 3), F (the scan of the floors), then the draws
    launch_cdf(c, cdf);
    c.scan.clear_look_back(c.stream);
    scan_counts(c, counts, floors);
    launch("resample_residual_draws", c.grid, threads, c.stream,
           {&cdf, &floors, &counts, &c.count, &c.index64, &c.status, &c.k.seed, &c.k.stream});
    if (c.f != form::offspring) c.scan.clear_look_back(c.stream);
  }
  if (c.f == form::offspring) return;
  const std::uint64_t scanned = c.f == form::cumulative ? c.out : cumulative;
  scan_counts(c, counts, scanned);
  if (c.f != form::cumulative) {
    launch("resample_cumulative_to_ancestors", c.tiles, tile_threads, c.stream,
           {&scanned, &c.count, &c.index64, &c.status, &c.drawn});
  }
}

/// Code 9 from the drawn ancestors (multinomial's, a chain's) into o, then (cumulative) their scan.
void count_drawn(const call& c, std::uint64_t counts) {
  const std::uint64_t o = c.f == form::cumulative ? counts : c.out, zero = 0;
  launch("resample_fill_indices", c.grid, threads, c.stream, {&o, &c.count, &c.index64, &zero, &c.status});
  launch("resample_count_offspring", c.grid, threads, c.stream, {&c.drawn, &c.count, &c.index64, &c.status, &o});
  if (c.f != form::cumulative) return;
  scan_counts(c, o, c.out);  // the look-back's flags as open_call left them: nothing before looked back
}

template <class T, class Index>
void enqueue(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k, std::uint32_t step,
             Index* out, form f, const options& opt, cudaStream_t stream) {
  check_call<Index>(s, n, opt);
  const bool chain = is_chain(s), counted = draws_ancestors_only(s), multinomial = s == scheme::multinomial;
  // residual and SSP make counts first (the split, then their draws or pairing); their ancestors
  // come from the offspring scan and Code 8
  const bool residual = s == scheme::residual, ssp = s == scheme::ssp, split = residual || ssp;
  const std::size_t tiles = tile_count(n);
  cuda::detail::carve c(d_temp);
  const bool sorted = s == scheme::multinomial_sorted;
  // the comb from estimates
  const bool estimated = s == scheme::systematic || s == scheme::stratified || sorted;
  // the status, and the look-back's flags and prefixes for the kernels that look back: residual's
  // (its table and its scans), SSP's scan of its counts (not in the offspring form, whose counts
  // are the output), and the offspring scan of a draw's counts (the cumulative form); for the
  // others open_call zeroes the status and the ticket only (multinomial at 2^24 had zeroed 64 KB of
  // flags)
  const bool scans_drawn_counts = counted && f == form::cumulative;
  const bool looks_back = residual || (ssp && f != form::offspring) || scans_drawn_counts;
  const auto scan = look_back_storage::take(c, looks_back ? tiles : 0);
  // the summary by tiles (each tile's C before it, each warp's within it): the comb from estimates'
  // starts and multinomial's table's (resample_cdf_from_offsets); the others' by the weight sums
  const bool tiled = estimated || multinomial;
  auto* sums = tiled ? nullptr : c.take<std::uint64_t>(2 * std::size_t{weight_sum_blocks(n)});
  // the draw's ancestors (or a chain's counts) when they are not the output; Code 7's slots
  Index* drawn = (f == form::permuted || (counted && f != form::ancestors)) ? c.take<Index>(n) : nullptr;
  Index* counts = scans_drawn_counts ? c.take<Index>(n) : nullptr;
  auto* cdf = multinomial || residual ? c.take<std::uint64_t>(2 * n) : nullptr;  // C_i, {lo, hi}
  auto* remainders = ssp ? c.take<std::uint64_t>(2 * n) : nullptr;                // r_i, {lo, hi}
  Index* floors = residual ? c.take<Index>(n) : nullptr;  // F_i = f_0 + ... + f_i
  // the counts (unless they are the output) and, for ancestors, their cumulative sums
  Index* split_counts = split && f != form::offspring ? c.take<Index>(n) : nullptr;
  Index* split_cumulative = split && (f == form::ancestors || f == form::permuted) ? c.take<Index>(n) : nullptr;
  Index* slots = f == form::permuted ? c.take<Index>(n) : nullptr;
  const points_storage points = sorted ? points_storage::take(c, n) : points_storage{};
  const tile_storage tile_arrays = tiled ? tile_storage::take(c, tiles) : tile_storage{};
  if (cuda::detail::measure_only(d_temp, temp_bytes, c.bytes())) return;
  if (address(out) % sizeof(Index) != 0) {
    throw invalid_input("the output's device pointer is not aligned to its index type");
  }
  const call at{scan,
                address(lw),
                n,
                scan.status_at,
                address(out),
                address(drawn != nullptr ? drawn : out),
                address(slots),
                sizeof(T) == 8 ? 1u : 0u,
                sizeof(Index) == 8 ? 1u : 0u,
                k,
                f,
                grid_for(n),
                static_cast<unsigned>(tiles),
                stream};
  // the one-block comb finds the max itself; a call handed the max takes the tiles' kernels
  if (estimated && !sorted && f != form::permuted && n <= one_block_items && !opt.device_max_log_weight) {
    comb_in_one_block(at, s, opt, step);
    return;
  }
  open_call(scan, opt, step, k, stream);
  if (tiled) {
    enqueue_tile_summary(lw, sizeof(T) == 8, n, scan.status, tile_arrays.sums, tile_arrays.warp_offsets,
                         tile_arrays.offsets, request_for(s, opt), stream, opt.device_max_log_weight != nullptr);
  } else {
    enqueue_weight_summary(lw, sizeof(T) == 8, n, scan.status, sums, nullptr, request_for(s, opt), stream);
  }
  if (slots != nullptr) {  // Code 7's d = N, written once the verdict is good
    launch("resample_fill_indices", at.grid, threads, stream,
           {&at.slots, &at.count, &at.index64, &at.count, &at.status});
  }
  if (split) {
    enqueue_split(at, ssp, address(split_counts != nullptr ? split_counts : out), address(remainders), address(cdf),
                  address(floors), address(split_cumulative));
  } else if (chain) {
    const std::uint32_t kind = chain_kind(s);
    launch("resample_chains", static_cast<unsigned>((n + chain_threads - 1) / chain_threads), chain_threads, stream,
           {&at.weights, &at.count, &at.is_double, &at.index64, &kind, &at.status, &k.seed, &k.stream, &at.drawn,
            &at.slots});
  } else if (multinomial) {
    const std::uint64_t table = address(cdf), offsets = address(tile_arrays.offsets),
                        warp_offsets = address(tile_arrays.warp_offsets);
    const auto fraction = static_cast<std::uint32_t>(fraction_bits(n));
    launch_early("resample_cdf_from_offsets", at.tiles, tile_threads, stream,
                 {&at.weights, &at.count, &at.is_double, &fraction, &at.status, &offsets, &warp_offsets, &table});
    const auto draw_blocks = static_cast<unsigned>((n + threads - 1) / threads);  // a thread per particle
    launch("resample_multinomial", draw_blocks, threads, stream,
           {&table, &at.count, &at.index64, &at.status, &k.seed, &k.stream, &at.drawn});
  } else {  // systematic, stratified, multinomial-sorted: the comb writes the form itself (permuted: ancestors first)
    const auto written = static_cast<std::uint32_t>(f == form::permuted ? form::ancestors : f);
    const std::uint64_t to = f == form::permuted ? at.drawn : at.out;
    if (sorted) enqueue_points(at, points, opt, step);
    const std::uint32_t scheme_in = comb_scheme(s);
    const std::uint64_t offsets = address(tile_arrays.offsets), warp_offsets = address(tile_arrays.warp_offsets);
    const std::uint64_t strata_points = address(points.points);  // 0 unless multinomial-sorted
    launch_early("resample_comb_from_estimates", at.tiles, tile_threads, stream,
                 {&at.weights, &at.count, &at.is_double, &at.index64, &scheme_in, &at.status, &offsets, &warp_offsets,
                  &k.seed, &k.stream, &to, &written, &strata_points});
  }
  if (f == form::permuted) {  // Code 7: the chains made their claims already
    if (!chain) {
      launch("resample_prepermute", at.grid, threads, stream,
             {&at.drawn, &at.count, &at.index64, &at.status, &at.slots});
    }
    launch("resample_chase", at.grid, threads, stream, {&at.drawn, &at.count, &at.index64, &at.status, &at.slots});
    launch("resample_gather", at.grid, threads, stream,
           {&at.drawn, &at.slots, &at.count, &at.index64, &at.status, &at.out});
  } else if (counted && f != form::ancestors) {
    count_drawn(at, address(counts));
  }
}

}  // namespace
}  // namespace detail

template <class T, class Index>
void ancestors(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k, std::uint32_t step,
               Index* a, const options& opt, cudaStream_t stream) {
  detail::enqueue(d_temp, temp_bytes, s, lw, n, k, step, a, detail::form::ancestors, opt, stream);
}

template <class T, class Index>
void offspring(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k, std::uint32_t step,
               Index* o, const options& opt, cudaStream_t stream) {
  detail::enqueue(d_temp, temp_bytes, s, lw, n, k, step, o, detail::form::offspring, opt, stream);
}

template <class T, class Index>
void cumulative_offspring(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k,
                          std::uint32_t step, Index* O, const options& opt, cudaStream_t stream) {
  detail::enqueue(d_temp, temp_bytes, s, lw, n, k, step, O, detail::form::cumulative, opt, stream);
}

template <class T, class Index>
void permuted_ancestors(void* d_temp, std::size_t& temp_bytes, scheme s, const T* lw, std::size_t n, key k,
                        std::uint32_t step, Index* c, const options& opt, cudaStream_t stream) {
  detail::enqueue(d_temp, temp_bytes, s, lw, n, k, step, c, detail::form::permuted, opt, stream);
}

#define RESAMPLE_PTX_ANCESTORS(T, Index)                                                                             \
  template void ancestors<T, Index>(void*, std::size_t&, scheme, const T*, std::size_t, key, std::uint32_t, Index*,   \
                                    const options&, cudaStream_t);                                                  \
  template void offspring<T, Index>(void*, std::size_t&, scheme, const T*, std::size_t, key, std::uint32_t, Index*,   \
                                    const options&, cudaStream_t);                                                  \
  template void cumulative_offspring<T, Index>(void*, std::size_t&, scheme, const T*, std::size_t, key,               \
                                               std::uint32_t, Index*, const options&, cudaStream_t);                \
  template void permuted_ancestors<T, Index>(void*, std::size_t&, scheme, const T*, std::size_t, key, std::uint32_t, \
                                             Index*, const options&, cudaStream_t);
RESAMPLE_PTX_ANCESTORS(float, std::int32_t)
RESAMPLE_PTX_ANCESTORS(float, std::int64_t)
RESAMPLE_PTX_ANCESTORS(double, std::int32_t)
RESAMPLE_PTX_ANCESTORS(double, std::int64_t)
#undef RESAMPLE_PTX_ANCESTORS

}  // namespace resample::ptx
