# Sourced by the GPU machine's scripts (gpu_checks.sh, ptx_gpu_run.sh): OUT (absolute, created),
# BUILD, gpu_configure_and_build TARGET..., which records the device and toolkit, configures
# Release for CUDA_ARCH (default 90) and builds the targets, showing errors and warnings only, and
# print_digests "SCHEME..." "BACKEND...": the command line's same bits, an md5 of 5 draws of 20000
# fixed log-weights per scheme and backend (a scheme a backend lacks prints its refusal's digest),
# and ncu_instruction_counts KERNELS LAUNCHES BENCH: Nsight Compute on the kernels matching KERNELS
# in bench_cuda's BENCH rows, its details page (ncu_details.txt) and its per-SASS-instruction counts
# (source_sass.csv, for scripts/sass_regions.py), and run_sanitizer TOOL TEST FILTER SECONDS:
# compute-sanitizer's TOOL on TEST's gtest cases matching FILTER, as one line (exit status, the
# tool's and gtest's totals) and, when it fails, the log's last 30 lines.
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

print_digests() {
  local lw s b
  lw=$(mktemp)
  awk 'BEGIN { for (i = 0; i < 20000; i++) printf "%d.%02d\n", -((i * 7919) % 1000) / 100, (i * 31) % 100 }' >"$lw"
  for s in $1; do
    for b in $2; do
      printf '%-20s %-6s %s\n' "$s" "$b" \
        "$("$build/bin/resample" ancestors --log --backend "$b" --scheme "$s" --reps 5 --seed 7 --input "$lw" 2>&1 | md5sum | cut -c1-32)"
    done
  done
  rm -f "$lw"
}

ncu_instruction_counts() {
  ncu --kernel-name "$1" --launch-count "$2" --section SourceCounters --section InstructionStats \
    --section ComputeWorkloadAnalysis --section SpeedOfLight --import-source yes -f -o "$out/profile" \
    "$build/bin/bench_cuda" --benchmark_filter="$3" --benchmark_min_time=0.01s >"$out/ncu_run.txt" 2>&1
  ncu -i "$out/profile.ncu-rep" --page details >"$out/ncu_details.txt" 2>&1
  ncu -i "$out/profile.ncu-rep" --page source --csv --print-source sass >"$out/source_sass.csv" 2>&1
  rm -f "$out/profile.ncu-rep"
}

run_sanitizer() {
  local rc
  printf '%-10s %-22s ' "$1" "$2"
  timeout "$4" compute-sanitizer --tool "$1" --error-exitcode 99 "$build/bin/$2" --gtest_filter="$3" \
    >"$out/san_last.txt" 2>&1
  rc=$?
  echo "rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|tests? ran|PASSED|FAILED' "$out/san_last.txt" | tr '\n' ' ')"
  if [ $rc -ne 0 ]; then tail -30 "$out/san_last.txt"; fi
  rm -f "$out/san_last.txt"
}
