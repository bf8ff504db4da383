#!/usr/bin/env bash
# Session 39, run 20: the reread's mends (detail::comb_scheme, launch_finish_tick, the given-max
# test's one check, bench_cuda's max from the row's own weights), built on the development machine
# (Release, sm_90) in .ab/mend/bin: the tests they touch, memcheck on the paired ticks, the given-max
# rows and the fast tick.
python3 -c "import tarfile; tarfile.open('.ab/b9.tar.xz').extractall('.')"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/mend source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
for t in cuda_backend_test bpf_cuda_test bpf_cuda_fast_test; do
  echo "== $t"; timeout 300 "$build/bin/$t" 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests? ran|Failure' | head -20
done 2>&1 | tee "$out/tests.txt"
run_sanitizer memcheck bpf_cuda_fast_test "$(sanitizer_filter memcheck bpf_cuda_fast_test)" 200 | tee "$out/sanitizers.txt"
"$build/bin/bench_cuda" --benchmark_filter='cuda/systematic/float/(exact|given_max)/16777216/' --benchmark_min_time=0.1 \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep median | awk '{print $1, $2, $3, $NF}' | tee "$out/bench.txt"
"$build/bin/bench_bpf" --benchmark_filter='bpf/cuda-fast/16777216/' --benchmark_min_time=0.1 --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true 2>&1 | grep median | awk '{print $1, $NF}' | tee -a "$out/bench.txt"
