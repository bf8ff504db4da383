# Sourced by the GPU machine's scripts (gpu_checks.sh, ptx_gpu_run.sh, cuda_focus_run.sh,
# ncu_source_profile.sh): OUT (absolute, created), BUILD, gpu_configure_and_build TARGET..., which
# records the device and toolkit, configures Release for CUDA_ARCH (default 90) with CUDA_FLAGS
# (if set; CMake's cache keeps them for later runs on the same BUILD) and builds the targets (the
# log in BUILD/build_log.txt, not in OUT), showing errors and warnings only, returning its status;
# print_digests "SCHEME..." "BACKEND...": the command line's same bits, an md5 of 5 draws of 20000
# fixed log-weights per scheme and backend (a scheme a backend lacks prints its refusal's digest),
# and ncu_instruction_counts KERNELS LAUNCHES BENCH [BINARY]: Nsight Compute on the kernels matching
# KERNELS in the BENCH rows of bench_cuda (or BINARY), its details page (ncu_details.txt) and its
# per-SASS-instruction counts
# (source_sass.csv, for scripts/sass_regions.py), kernel_times_from BENCH...: each kernel's duration
# as the benchmark runs it, run_gtest TEST SECONDS: a GPU test's totals and failures, and
# run_sanitizer TOOL TEST FILTER SECONDS: compute-sanitizer's TOOL on TEST's gtest cases matching
# FILTER, as one line (exit status, the tool's and gtest's totals) and, when it fails, the log's
# last 30 lines, with sanitizer_filter TOOL TEST [ptx], the one table of what each GPU test runs
# under the tools.
# Benchmark min times are bare seconds (`--benchmark_min_time=0.01`): Google Benchmark 1.8, the GPU
# machine's, takes them with or without the `s`; Debian's 1.7.1, which binaries built on the
# development machine and carried there bring along, refuses the `s` (session 37).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=${BUILD:-build-gpu}

gpu_configure_and_build() {
  local rc
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version | tail -1
  mkdir -p "$build"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" \
    ${CUDA_FLAGS:+"-DCMAKE_CUDA_FLAGS=$CUDA_FLAGS"} >"$build/build_log.txt" 2>&1 &&
    cmake --build "$build" -j "$(nproc)" --target "$@" >>"$build/build_log.txt" 2>&1
  rc=$?
  grep -E 'error|warning' -A3 "$build/build_log.txt" | head -40
  # a failed build would leave the build folder's old binaries to be tested and timed
  [ $rc -eq 0 ] || echo "== BUILD FAILED (exit $rc, $build/build_log.txt)"
  return $rc
}

# TEST's gtest totals, skipped count and failures (SECONDS at most), one block per test.
run_gtest() {
  timeout "$2" "$build/bin/$1" >"$out/gtest_last.txt" 2>&1
  grep -E '^\[  (PASSED|FAILED)  \]|tests? ran' "$out/gtest_last.txt"
  grep -c '^\[  SKIPPED \]' "$out/gtest_last.txt" | sed 's/^/skipped lines (a test is listed twice): /'
  grep -E 'Failure' -A6 "$out/gtest_last.txt" | head -40
  rm -f "$out/gtest_last.txt"
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

ncu_instruction_counts() {  # KERNELS LAUNCHES BENCH [BINARY, default bench_cuda [LAUNCHES SKIPPED, default 0]]
  ncu --kernel-name "$1" --launch-skip "${5:-0}" --launch-count "$2" --section SourceCounters \
    --section InstructionStats --section ComputeWorkloadAnalysis --section SpeedOfLight --section WarpStateStats \
    --section Occupancy --import-source yes -f -o "$out/profile" \
    "$build/bin/${4:-bench_cuda}" --benchmark_filter="$3" --benchmark_min_time=0.01 >"$out/ncu_run.txt" 2>&1
  ncu -i "$out/profile.ncu-rep" --page details >"$out/ncu_details.txt" 2>&1
  ncu -i "$out/profile.ncu-rep" --page source --csv --print-source sass >"$out/source_sass.csv" 2>&1
  rm -f "$out/profile.ncu-rep"
}

# Per-kernel durations as the benchmark runs them (boost clocks, warm caches, unlike the profile
# above): kernel_times_from BENCH... writes kernel_times.txt, for each filter (meant to match one
# bench_cuda row; the launches are counted over the whole run) 16 kernels in launch order after 40
# warm-up launches, in microseconds, and Nsight's own errors and warnings. TIMES_BINARY,
# TIMES_SKIP, TIMES_COUNT and TIMES_FILE change the benchmark binary, those two counts and the file.
kernel_times_from() {
  local f
  for f in "$@"; do
    echo "== $f"
    ncu --clock-control none --cache-control none --print-units base --metrics gpu__time_duration.sum \
      --launch-skip "${TIMES_SKIP:-40}" --launch-count "${TIMES_COUNT:-16}" --csv \
      "$build/bin/${TIMES_BINARY:-bench_cuda}" --benchmark_filter="$f" --benchmark_min_time=0.05 2>&1 |
      awk -F'","' '/^==(ERROR|WARNING)==/ { print }
        /gpu__time_duration/ { sub(/\(.*/, "", $5); gsub(/"/, "", $NF); gsub(/,/, "", $NF);
        printf "%-60s %8.1f\n", $5, $NF / 1000 }'
  done >"$out/${TIMES_FILE:-kernel_times.txt}" 2>&1
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

# What is left out is too slow under the tools (memcheck is ~100x slower): the 2^22 / 2^24, skewed
# 300000-particle and two-slice cases, ptx_backend_test's 15 sizes x 3 dispersions, repeated draws
# and the fast mode's 2,000 draws (461 s under racecheck, session 14). memcheck reports every
# failed driver call, which the loader's error tests make on purpose. The parity tests: double
# log-weights and int32 indices. The filter: racecheck and synccheck stop on conditional graph
# nodes, so they run the gated tick (resampler_node::gated, the same kernels launched every tick);
# memcheck runs both (the PTX filter's cases: ptx_gpu_run.sh chooses them), and the fast filter's
# ticks two to a graph, which only the conditional node has.
sanitizer_filter() {  # TOOL TEST [ptx]: ptx, the filter's PTX cases
  if [ "${3:-}" = ptx ] && [ "$2" = bpf_cuda_test ]; then
    echo '*gated_ptx*'  # racecheck and synccheck stop on conditional graph nodes: the gated cases
    return
  fi
  local gated='*sv_auxiliary_ess_jitter_gated:*lg_bootstrap_residual_gated:*lg_one_particle_gated'
  gated="$gated:*sv_bootstrap_metropolis_gated:*sv_bootstrap_every_tick_stratified_gated"
  gated="$gated:*sv_bootstrap_multinomial_sorted_gated"
  case "$2" in
    cuda_parity_test | ptx_parity_test) echo '*DoubleInt32*' ;;
    cuda_backend_test) echo '-*Large*:*Skewed*' ;;
    ptx_backend_test)
      echo '-*EqualCpuAndCudaBitForBit*:*LargeEqual*:*TwoSlices*:*Repeated*:*PermutedAncestors*:*DeviceStepAndGate*:PtxFastExp.MeanOffspringEqualTheWeights:PtxLoader.JitErrorLogInTheException:PtxLoader.UnknownKernelNamed'
      ;;
    bpf_cuda_test)  # the clusters' test runs 586,428 particles at its last size: too slow for racecheck
      if [ "$1" = memcheck ]; then
        local conditional='*sv_auxiliary_ess_jitter_conditional:*lg_bootstrap_residual_conditional'
        echo "$gated:$conditional:*lg_one_particle_conditional:CudaFilterInput.*:CudaFilterClusters.*"
      elif [ "$1" = synccheck ]; then
        echo "$gated:CudaFilterClusters.*"
      else
        echo "$gated"
      fi
      ;;
    bpf_cuda_fast_test)  # the gated ticks for all three; memcheck also the refusals and the paired ticks
      if [ "$1" = memcheck ]; then
        echo '*GatedRunsAreReproducible:*Refuses*:*TicksOneAtATimeGiveThePairedBits'
      else
        echo '*GatedRunsAreReproducible'
      fi
      ;;
    *) echo '*' ;;
  esac
}
