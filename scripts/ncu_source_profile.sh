#!/usr/bin/env bash
# Where a kernel's instructions go, per SASS line: builds bench_cuda with -lineinfo (Release,
# sm_90), profiles one launch of each kernel matching KERNELS in one benchmark (BENCH, a
# --benchmark_filter) under Nsight Compute's SourceCounters and InstructionStats, and writes the
# per-instruction executed counts (CSV, with the CUDA source line) and the SASS of comb.cu under OUT.
#   usage: OUT=dir KERNELS='regex:comb_pass|tile_pass' BENCH='cuda/systematic/float/exact/16777216' scripts/ncu_source_profile.sh
source "$(dirname "$0")/gpu_common.sh"
build=${BUILD:-build-ncu}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" \
  -DCMAKE_CUDA_FLAGS=-lineinfo >/dev/null &&
  cmake --build "$build" -j "$(nproc)" --target bench_cuda 2>&1 | grep -E 'error|warning' -A3 | head -40
cuobjdump -sass "$build/src/cuda/CMakeFiles/resample_cuda.dir/comb.cu.o" >"$out/comb_sass.txt" 2>&1 || true
ncu --kernel-name "${KERNELS:-regex:comb_pass}" --launch-count "${LAUNCHES:-1}" --section SourceCounters \
  --section InstructionStats --section ComputeWorkloadAnalysis --section SpeedOfLight --import-source yes \
  -f -o "$out/profile" "$build/bin/bench_cuda" --benchmark_filter="${BENCH}" --benchmark_min_time=0.01s \
  >"$out/ncu_run.txt" 2>&1
ncu -i "$out/profile.ncu-rep" --page details >"$out/details.txt" 2>&1
ncu -i "$out/profile.ncu-rep" --page source --csv --print-source sass >"$out/source_sass.csv" 2>"$out/source_err.txt" ||
  ncu -i "$out/profile.ncu-rep" --page source --csv >"$out/source_sass.csv" 2>>"$out/source_err.txt"
ls -la "$out"
