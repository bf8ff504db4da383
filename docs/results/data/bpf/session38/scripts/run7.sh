#!/usr/bin/env bash
# Session 38, run 7: stage (5dbdb35 and the fast spans staged a span ahead in shared memory by
# cp.async where particles move from their own slots): its filter tests, an A/B against pdlcap
# (5dbdb35) over two rounds, and the kernel times.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/stage source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== bpf_cuda_fast_test (stage)"; run_gtest bpf_cuda_fast_test 240
echo "== bpf_cuda_test (stage)"; run_gtest bpf_cuda_test 240
for round in 1 2; do
  for v in pdlcap stage; do
    .ab/$v/bin/bench_bpf --benchmark_filter='bpf/cuda-fast/(1024|262144|1048576|16777216|67108864)/' \
      --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 |
      grep _median | sed "s/^/$v /" | awk '{print $1, $2, $(NF)}' | tee -a "$out/ab_run7.txt"
  done
done
TIMES_BINARY=bench_bpf TIMES_SKIP=60 TIMES_COUNT=12 TIMES_FILE=kernel_times_stage.txt kernel_times_from 'bpf/cuda-fast/gated/16777216/'
cat "$out/kernel_times_stage.txt"
