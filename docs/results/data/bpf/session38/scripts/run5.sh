#!/usr/bin/env bash
# Session 38, run 5: span4 (span2 and fast mode's finish in one pass by shuffles, combine_fast; finish_tick reads its scalars before its wait): the
# fast filter test, an A/B against span2 over two rounds, and the finish kernel's time.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/span4 source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== bpf_cuda_fast_test (span4)"; run_gtest bpf_cuda_fast_test 240
echo "== bpf_cuda_test (span4)"; run_gtest bpf_cuda_test 240
for round in 1 2; do
  for v in span2 span4; do
    .ab/$v/bin/bench_bpf --benchmark_filter='bpf/cuda-fast/(1024|262144|1048576|16777216)/' \
      --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 |
      grep _median | sed "s/^/$v /" | awk '{print $1, $2, $(NF)}' | tee -a "$out/ab_run5.txt"
  done
done
TIMES_BINARY=bench_bpf TIMES_SKIP=60 TIMES_COUNT=12 TIMES_FILE=kernel_times_span4.txt kernel_times_from 'bpf/cuda-fast/gated/16777216/'
cat "$out/kernel_times_span4.txt"
