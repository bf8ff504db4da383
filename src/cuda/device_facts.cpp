// Facts about the current device that launches depend on, asked of the driver once per device:
// its multiprocessor count (max_pass runs one wave of blocks), whether it has programmatic
// dependent launch (compute capability 9.0 and later) and whether it launches thread-block clusters
// (the particle filter's exact chunks). detail/device_facts.hpp.
#include "detail/device_facts.hpp"

#include <array>
#include <atomic>

namespace resample::cuda::detail {
namespace {

struct facts {
  int multiprocessors = 0;
  int major = 0;
  int clusters = 0;
};

facts ask(int device) {
  facts f;
  check(cudaDeviceGetAttribute(&f.multiprocessors, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  check(cudaDeviceGetAttribute(&f.major, cudaDevAttrComputeCapabilityMajor, device), "cudaDeviceGetAttribute");
  check(cudaDeviceGetAttribute(&f.clusters, cudaDevAttrClusterLaunch, device), "cudaDeviceGetAttribute");
  return f;
}

facts current() {
  // Per device, filled on first use; a race only asks the driver twice for the same numbers.
  static std::array<std::atomic<int>, 64> multiprocessors{}, major{}, clusters{};
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  if (device < 0 || device >= static_cast<int>(multiprocessors.size())) return ask(device);
  facts f;
  f.multiprocessors = multiprocessors[device].load(std::memory_order_acquire);  // stored last, so the rest are there
  if (f.multiprocessors == 0) {
    f = ask(device);
    major[device].store(f.major, std::memory_order_relaxed);
    clusters[device].store(f.clusters, std::memory_order_relaxed);
    multiprocessors[device].store(f.multiprocessors, std::memory_order_release);
    return f;
  }
  f.major = major[device].load(std::memory_order_relaxed);
  f.clusters = clusters[device].load(std::memory_order_relaxed);
  return f;
}

}  // namespace

int multiprocessor_count() { return current().multiprocessors; }

bool programmatic_launch_supported() { return current().major >= 9; }

bool cluster_launch_supported() { return current().clusters != 0; }

}  // namespace resample::cuda::detail
