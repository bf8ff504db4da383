// The particle filter of resample/bpf/cuda_filter.hpp with its per-particle kernels in PTX:
// resample_bpf_move (ptx/bpf_move.ptx) propagates, weights and summarises each chunk, in each of
// the filter's three stages (the first tick, the auxiliary first stage, gather + propagate), and the
// PTX backend resamples (resample::ptx::ancestors, its step and gate read on the device). The
// tick's graph, its one-block finishing kernels and its conditional node stay the filter's CUDA C.
// The bits are the CPU filter's, as with the CUDA C kernels.
//
//   const auto kernels = resample::ptx::tick_kernels_for(model);   // the model's constants
//   resample::bpf::cuda_filter<resample::bpf::sv_model> f(model, opt, stream, node, kernels);
//
// Every scheme of the library.
#pragma once

#include <memory>

#include "resample/bpf/cuda_filter.hpp"
#include "resample/bpf/linear_gaussian_model.hpp"
#include "resample/bpf/sv_model.hpp"

namespace resample::ptx {

/// The PTX kernels for a cuda_filter of `model` (one filter at a time: each holds its launches).
std::shared_ptr<bpf::tick_kernels> tick_kernels_for(const bpf::sv_model& model);
std::shared_ptr<bpf::tick_kernels> tick_kernels_for(const bpf::linear_gaussian_model& model);

}  // namespace resample::ptx
