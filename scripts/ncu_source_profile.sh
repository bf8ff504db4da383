#!/usr/bin/env bash
# Where a kernel's instructions go, per SASS line: builds bench_cuda with -lineinfo (Release,
# sm_90) and runs ncu_instruction_counts (gpu_common.sh) on the kernels matching KERNELS in one
# benchmark (BENCH, a --benchmark_filter). Summarise source_sass.csv with scripts/sass_regions.py.
#   usage: OUT=dir KERNELS='regex:comb_pass|tile_pass' BENCH='cuda/systematic/float/exact/16777216' scripts/ncu_source_profile.sh
source "$(dirname "$0")/gpu_common.sh"
build=${BUILD:-build-ncu}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" \
  -DCMAKE_CUDA_FLAGS=-lineinfo >/dev/null &&
  cmake --build "$build" -j "$(nproc)" --target bench_cuda 2>&1 | grep -E 'error|warning' -A3 | head -40
ncu_instruction_counts "${KERNELS:-regex:comb_pass}" "${LAUNCHES:-1}" "$BENCH"
