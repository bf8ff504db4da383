#!/usr/bin/env bash
# Session 41, run 9: run 8's fix by a warp vote instead of a block barrier (.ab/warp: a warp of
# CUDA C's tile pass leaves together, by __any_sync, when a lane's check of a given max flags a
# log-weight) against 743c242 (.ab/final): the CUDA C tests and the filter's, the three tools on
# cuda_backend_test's usual cases and the filters' gated ones, bench_cuda's given-max rows and the
# fast tick alternated.
python3 -c "import tarfile; [tarfile.open(f).extractall('.') for f in ('.ab/b4.tar.xz', '.ab/b7.tar.xz')]"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/warp source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/tests.txt"
for t in cuda_backend_test bpf_cuda_test bpf_cuda_fast_test; do
  echo "== $t"; timeout 300 "$build/bin/$t" 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests? ran|Failure' -A3 | head -30
done 2>&1 | tee -a "$out/tests.txt"
{
  for tool in memcheck racecheck synccheck; do
    run_sanitizer "$tool" cuda_backend_test "$(sanitizer_filter "$tool" cuda_backend_test)" 150
    run_sanitizer "$tool" bpf_cuda_fast_test "$(sanitizer_filter "$tool" bpf_cuda_fast_test)" 150
  done
} 2>&1 | tee "$out/sanitizers.txt"
rows='cuda/(systematic|stratified|multinomial.sorted)/float/(given_max|fast_given_max)/16777216/'
for r in 1 2; do for v in final warp; do
  .ab/$v/bin/bench_cuda --benchmark_filter="$rows" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $2}'
done; done | tee "$out/ab_cuda.txt"
for r in 1 2 3; do for v in final warp; do
  .ab/$v/bin/bench_bpf --benchmark_filter='bpf/cuda-fast/16777216/' --benchmark_min_time=0.1 \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $NF}'
done; done | tee "$out/ab_bpf.txt"
