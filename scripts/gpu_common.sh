# Sourced by the GPU machine's scripts (gpu_checks.sh, ptx_gpu_run.sh): OUT (absolute, created),
# BUILD, and gpu_configure_and_build TARGET..., which records the device and toolkit, configures
# Release for CUDA_ARCH (default 90) and builds the targets, showing errors and warnings only.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=${BUILD:-build-gpu}

gpu_configure_and_build() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version | tail -1
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" >/dev/null &&
    cmake --build "$build" -j "$(nproc)" --target "$@" 2>&1 | grep -E 'error|warning' -A3 | head -40
}
