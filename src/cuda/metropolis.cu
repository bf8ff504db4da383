// Metropolis, Megopolis and rejection resampling: one thread per particle, no CDF.
//
//   metropolis: thread i runs B steps of an independent Metropolis chain from i (proposal
//               uniform over [0, N), uniforms from Philox at (i, step)); a chain still on a zero
//               weight after B steps goes on until it leaves.
//   megopolis:  the same with proposal (i + off_b) mod N, off_b from Philox at
//               (shared_index - 1 - b, step): one offset per iteration for all threads, so a warp
//               reads neighbouring weights.
//   rejection:  thread i accepts j (from j = i) with probability w_j / w_bound, else proposes
//               j ~ U[0, N).
// B comes from the exact sum (finish_pass), so the summary passes run first; the bound check of
// rejection is part of max_pass. CPU twins: metropolis.hpp, megopolis.hpp, rejection.hpp.
#include "detail/pipeline.cuh"
#include "resample/core/chains.hpp"
#include "detail/schemes.hpp"

namespace resample::cuda::detail {
namespace {

enum class chain_kind { metropolis, megopolis, rejection };

template <class T, class Index, chain_kind Kind>
__global__ void __launch_bounds__(block_threads)
    chain_pass(const T* __restrict__ lw, std::size_t n, const device_status* st, key k, step_source step_from, Index* a) {
  const std::size_t i = blockIdx.x * std::size_t{block_threads} + threadIdx.x;
  if (i >= n || st->code != 0) return;
  const std::uint32_t step = step_from.get();
  philox_stream rng(k, i, step);
  const std::uint64_t size = n;
  std::uint64_t current;
  if constexpr (Kind == chain_kind::rejection) {
    current = rejection_chain(lw, i, size, isnan(st->bound) ? st->max_log_w : st->bound, rng);
  } else if constexpr (Kind == chain_kind::metropolis) {
    current = metropolis_chain(lw, i, st->steps, rng, [&](std::uint64_t) { return uniform_below(rng, size); });
  } else {
    current = metropolis_chain(lw, i, st->steps, rng,
                               [&](std::uint64_t b) { return (i + megopolis_offset(k, step, b, size)) % size; });
  }
  a[i] = static_cast<Index>(current);
}

}  // namespace

template <class T, class Index>
std::size_t chain_ancestors(void* d_temp, scheme s, const T* lw, std::size_t n, key k, step_source step, Index* a,
                            const options& opt, cudaStream_t stream) {
  const std::size_t tiles = tile_count(n);
  carve c(d_temp);
  auto* st = c.take<device_status>(1);
  auto* sums = c.take<u128>(tiles);
  if (d_temp == nullptr) return c.bytes();
  finish_request req;
  double bound = std::numeric_limits<double>::quiet_NaN();
  if (s == scheme::rejection) {
    if (opt.rejection_log_bound) bound = *opt.rejection_log_bound;
  } else {
    req.metropolis = true;
    req.eps = opt.metropolis_eps;
    req.steps_given = opt.metropolis_steps.has_value();
    req.fixed_steps = opt.metropolis_steps.value_or(0);
  }
  summarise(lw, n, bound, st, sums, nullptr, req, stream, opt.device_gate);
  const unsigned grid = grid_for(n);
  switch (s) {
    case scheme::metropolis:
      chain_pass<T, Index, chain_kind::metropolis><<<grid, block_threads, 0, stream>>>(lw, n, st, k, step, a);
      break;
    case scheme::megopolis:
      chain_pass<T, Index, chain_kind::megopolis><<<grid, block_threads, 0, stream>>>(lw, n, st, k, step, a);
      break;
    default:
      chain_pass<T, Index, chain_kind::rejection><<<grid, block_threads, 0, stream>>>(lw, n, st, k, step, a);
      break;
  }
  check_launch("chain_pass");
  return c.bytes();
}

#define RESAMPLE_INSTANTIATE(T, Index)                                                                         \
  template std::size_t chain_ancestors<T, Index>(void*, scheme, const T*, std::size_t, key, step_source, Index*, \
                                                 const options&, cudaStream_t);
RESAMPLE_FOR_EACH_WEIGHT_AND_INDEX(RESAMPLE_INSTANTIATE)
#undef RESAMPLE_INSTANTIATE

}  // namespace resample::cuda::detail
