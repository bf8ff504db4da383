#!/usr/bin/env bash
# Session 41, run 8: the session's last code (.ab/last: run 7's PTX change, and CUDA C's tile pass
# leaving as a block, by __syncthreads_or, when a thread's check of a given max flags a log-weight,
# where each thread had decided alone) against 743c242 (.ab/final): the CUDA C tests and the
# filter's, the three tools on cuda_backend_test's usual cases (the given-max ones among them) and
# the filters' gated ones, bench_cuda's given-max rows and the fast tick alternated.
python3 -c "import tarfile; [tarfile.open(f).extractall('.') for f in ('.ab/b4.tar.xz', '.ab/b6.tar.xz')]"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/last source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/tests.txt"
for t in cuda_backend_test cuda_parity_test bpf_cuda_test bpf_cuda_fast_test ptx_backend_test; do
  echo "== $t"; timeout 300 "$build/bin/$t" 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests? ran|Failure' -A3 | head -30
done 2>&1 | tee -a "$out/tests.txt"
{
  for tool in memcheck racecheck synccheck; do
    run_sanitizer "$tool" cuda_backend_test "$(sanitizer_filter "$tool" cuda_backend_test)" 150
    run_sanitizer "$tool" bpf_cuda_fast_test "$(sanitizer_filter "$tool" bpf_cuda_fast_test)" 150
    run_sanitizer "$tool" bpf_cuda_test "$(sanitizer_filter "$tool" bpf_cuda_test)" 200
  done
} 2>&1 | tee "$out/sanitizers.txt"
rows='cuda/(systematic|stratified|multinomial.sorted)/float/(given_max|fast_given_max)/16777216/'
for r in 1 2; do for v in final last; do
  .ab/$v/bin/bench_cuda --benchmark_filter="$rows" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $2}'
done; done | tee "$out/ab_cuda.txt"
for r in 1 2 3; do for v in final last; do
  .ab/$v/bin/bench_bpf --benchmark_filter='bpf/cuda-fast/16777216/' --benchmark_min_time=0.1 \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $NF}'
done; done | tee "$out/ab_bpf.txt"
