#!/usr/bin/env bash
# Session 40, run 15: the comb's rerun of a warp out of line (__noinline__; its registers off the
# estimates' path: systematic's comb kernel 104 -> 0 bytes of spill loads, stratified's 260 -> 8,
# multinomial-sorted's 548 -> 136), .ab/noinline, against run 14's final code (.ab/final): the CUDA
# C tests that reach the comb, then bench_cuda alternated over two rounds and the per-kernel times.
python3 -c "import tarfile; [tarfile.open(f).extractall('.') for f in ('.ab/b4.tar.xz', '.ab/b5.tar.xz')]"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/noinline source scripts/gpu_common.sh
for t in cuda_parity_test cuda_backend_test bpf_cuda_test; do
  echo "== $t"; timeout 300 "$build/bin/$t" 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests? ran|Failure' | head -20
done 2>&1 | tee "$out/tests.txt"
rows='cuda/(systematic|stratified|multinomial.sorted)/float/(exact|given_max|equal)/(1048576|16777216)/'
for r in 1 2; do for v in final noinline; do
  .ab/$v/bin/bench_cuda --benchmark_filter="$rows" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $2}'
done; done | tee "$out/ab_cuda.txt"
for v in final noinline; do
  BUILD=.ab/$v source scripts/gpu_common.sh
  TIMES_COUNT=10 TIMES_FILE=kernel_times_$v.txt kernel_times_from 'cuda/systematic/float/exact/16777216/' 'cuda/stratified/float/exact/16777216/'
done
