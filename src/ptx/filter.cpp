// The PTX backend's kernels for resample::bpf::cuda_filter (include/resample/ptx/filter.hpp): each
// of the filter's launch slots gets its own argument block in device memory (bpf_move_layout.hpp),
// written when the filter prepares the slot (outside any capture) and read by resample_bpf_move
// (ptx/bpf_move.ptx) when the launch runs, so a captured launch can be replayed: what changes from
// tick to tick (the tick, the resampling decision, the shift) is read there through pointers.
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>

#include "bpf_move_layout.hpp"
#include "grid.hpp"
#include "module.hpp"
#include "resample/cuda/error.hpp"
#include "resample/cuda/host.hpp"
#include "resample/ptx/filter.hpp"
#include "resample/ptx/resample.hpp"

namespace resample::ptx {
namespace {

constexpr int slots = 5;  // cuda_filter's: the first tick's, then two per parity

class ptx_tick_kernels final : public bpf::tick_kernels {
 public:
  explicit ptx_tick_kernels(const detail::bpf_model_words& model) : model_(model), args_(slots) {}

  void prepare(int slot, const bpf::move_launch& m, cudaStream_t stream) override {
    detail::bpf_move_args a{};
    a.stage = static_cast<std::uint32_t>(m.kind);
    a.model = model_.model;
    a.seed = m.k.seed;
    a.stream = m.k.stream;
    a.n = m.n;
    std::copy(model_.c.begin(), model_.c.end(), a.c);
    a.jitter = m.jitter;
    a.auxiliary = m.auxiliary ? 1u : 0u;
    a.tick = m.tick;
    a.resample = m.resample;
    a.shift = m.shift;
    a.y = m.y;
    a.truth = m.truth;
    a.ancestors = m.ancestors;
    a.verdict = m.verdict;
    a.x = m.x;
    a.lw = m.lw;
    a.fs = m.fs;
    a.x_out = m.x_out;
    a.lw_out = m.lw_out;
    a.chunks = m.chunks;
    grid_.at(static_cast<std::size_t>(slot)) =  // a slot out of range throws before anything is written
        static_cast<unsigned>((m.n + detail::bpf_move_chunk - 1) / detail::bpf_move_chunk);
    detail::allow_dynamic_shared("resample_bpf_move", detail::bpf_move_dynamic_shared);
    // from pageable memory: `a` is staged before the call returns, in order on `stream`
    cuda::check(cudaMemcpyAsync(args_.data() + slot, &a, sizeof a, cudaMemcpyHostToDevice, stream),
                "cudaMemcpyAsync (ptx filter arguments)");
  }

  void launch(int slot, cudaStream_t stream) override {
    const std::uint64_t at = detail::address(args_.data() + slot);
    detail::launch("resample_bpf_move", grid_.at(static_cast<std::size_t>(slot)), detail::bpf_move_threads, stream,
                   {&at}, detail::bpf_move_dynamic_shared);
  }

  void ancestors(void* d_temp, std::size_t& temp_bytes, scheme s, const double* lw, std::size_t n, key k,
                 std::uint32_t step, std::int32_t* a, const options& opt, cudaStream_t stream) override {
    ptx::ancestors<double, std::int32_t>(d_temp, temp_bytes, s, lw, n, k, step, a, opt, stream);
  }

 private:
  detail::bpf_model_words model_;
  cuda::host::device_vector<detail::bpf_move_args> args_;
  std::array<unsigned, slots> grid_{};
};

}  // namespace

std::shared_ptr<bpf::tick_kernels> tick_kernels_for(const bpf::sv_model& model) {
  return std::make_shared<ptx_tick_kernels>(detail::model_words(model));
}

std::shared_ptr<bpf::tick_kernels> tick_kernels_for(const bpf::linear_gaussian_model& model) {
  return std::make_shared<ptx_tick_kernels>(detail::model_words(model));
}

}  // namespace resample::ptx
