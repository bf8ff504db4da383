#!/usr/bin/env bash
# Where a kernel's instructions go, per SASS line: builds bench_cuda with -lineinfo (Release,
# sm_90) and runs ncu_instruction_counts (gpu_common.sh) on the kernels matching KERNELS in one
# benchmark (BENCH, a --benchmark_filter), and writes comb.cu's SASS (comb_sass.txt). Summarise
# source_sass.csv with scripts/sass_regions.py.
#   usage: OUT=dir KERNELS='regex:comb_pass|tile_pass' BENCH='cuda/systematic/float/exact/16777216' scripts/ncu_source_profile.sh
source "$(dirname "$0")/gpu_common.sh"
build=${BUILD:-build-ncu}
bench=${BENCH:?a bench_cuda filter}  # asked before the build
CUDA_FLAGS=-lineinfo gpu_configure_and_build bench_cuda || exit 1
cuobjdump -sass "$build/src/cuda/CMakeFiles/resample_cuda.dir/comb.cu.o" >"$out/comb_sass.txt" 2>&1 || true
ncu_instruction_counts "${KERNELS:-regex:comb_pass}" "${LAUNCHES:-1}" "$bench"
