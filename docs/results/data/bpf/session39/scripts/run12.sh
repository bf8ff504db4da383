#!/usr/bin/env bash
# Session 39, run 12: the tests, the sanitizers and A/B timings of the finish pass's new scan
# (binaries built on the development machine, Release, sm_90: .ab/fin = pipeline.cuh's new
# finish_pass over db2129c, .ab/base = db2129c's bench_cuda, .ab/head = 72722ae's bench_bpf).
python3 -c "import tarfile; tarfile.open('.ab/b3.tar.xz').extractall('.')"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p .ab/finb && ln -sfn ../fin .ab/finb/bin
BUILD=.ab/finb source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
for t in cuda_parity_test cuda_backend_test bpf_cuda_test bpf_cuda_fast_test; do
  echo "== $t"; timeout 300 "$build/bin/$t" 2>&1 | grep -E '^\[  (PASSED|FAILED) |tests? ran|FAILED  \]' | head -20
done 2>&1 | tee "$out/tests.txt"
{
  for tool in memcheck racecheck synccheck; do
    run_sanitizer "$tool" cuda_parity_test "$(sanitizer_filter "$tool" cuda_parity_test)" 200
  done
  run_sanitizer memcheck bpf_cuda_fast_test "$(sanitizer_filter memcheck bpf_cuda_fast_test)" 200
} 2>&1 | tee "$out/sanitizers.txt"
f='cuda/(systematic|stratified|multinomial-sorted)/float/exact/(1048576|16777216|67108864)/|cuda/graph/systematic/4096/'
for r in 1 2; do for v in base fin; do
  .ab/$v/bench_cuda --benchmark_filter="$f" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $2, $3}'
done; done 2>&1 | tee "$out/ab_finish_cuda.txt"
for r in 1 2; do for v in head fin; do
  .ab/$v/bench_bpf --benchmark_filter='bpf/cuda-fast/(262144|16777216)/|bpf/cuda/16777216/' --benchmark_min_time=0.1 \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $NF}'
done; done 2>&1 | tee "$out/ab_finish_bpf.txt"
TIMES_BINARY=bench_cuda TIMES_FILE=kernel_times_finish.txt kernel_times_from 'cuda/systematic/float/exact/16777216/'
grep -E 'finish_pass|tile_pass|comb_pass|max_pass' "$out/kernel_times_finish.txt" | head -12
