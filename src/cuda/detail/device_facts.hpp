// What launches depend on about the current device and about the library's device code, asked of the
// driver once (device_facts.cpp), for the backend's passes (pipeline.cuh) and the particle filter
// (bpf_filter.cu) alike.
#pragma once

#include <cuda_runtime_api.h>

#include "resample/cuda/error.hpp"

namespace resample::cuda::detail {

/// The current device's multiprocessor count, asked once per device (no synchronisation).
int multiprocessor_count();
/// Whether the current device has programmatic dependent launch (compute capability 9.0 and later).
bool programmatic_launch_supported();
/// Whether the current device launches thread-block clusters (cudaDevAttrClusterLaunch).
bool cluster_launch_supported();

/// Whether the code the device runs for `kernel` is PTX for sm_90 or later, so that it has Hopper's
/// instructions (griddepcontrol, clusters). A build for older architectures only, JIT-compiled for a
/// Hopper GPU, has not: its kernels must neither start early nor run in clusters. Asked once (the
/// library's kernels share one build, and every device that runs it picks the same code).
template <class... Params>
bool compiled_for_sm90(void (*kernel)(Params...)) {
  static const bool yes = [kernel] {
    cudaFuncAttributes attributes{};
    check(cudaFuncGetAttributes(&attributes, kernel), "cudaFuncGetAttributes");
    return attributes.ptxVersion >= 90;
  }();
  return yes;
}

}  // namespace resample::cuda::detail
