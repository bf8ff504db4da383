#!/usr/bin/env bash
# Session 41, run 10: the review's refactor (.ab/ded: the fast weights' sum by exact_cdf.hpp's
# quantised_sum_split, shared with quantised_weights_split; the exact kernels' PTX is unchanged, the
# fast ones' order of operations is) against 743c242 (.ab/final): CudaFastExp (the same bits as the
# PTX fast draw) and bench_cuda's fast rows at 2^24 alternated over two rounds.
python3 -c "import tarfile; [tarfile.open(f).extractall('.') for f in ('.ab/b4.tar.xz', '.ab/b8.tar.xz')]"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/ded source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/tests.txt"
"$build/bin/ptx_backend_test" --gtest_filter='CudaFastExp.*:PtxFastExp.*' 2>&1 | grep -E '^\[  (PASSED|FAILED) |Failure' -A3 | tee -a "$out/tests.txt"
rows='cuda/(systematic|stratified)/float/(fast_exp|fast_given_max)/16777216/'
for r in 1 2; do for v in final ded; do
  .ab/$v/bin/bench_cuda --benchmark_filter="$rows" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $2}'
done; done | tee "$out/ab_cuda.txt"
