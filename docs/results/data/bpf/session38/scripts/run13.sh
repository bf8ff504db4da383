#!/usr/bin/env bash
# Session 38, run 13: dbl (final and each thread's running sums in double, a span's eight terms added in
# float first, so that the float sums have eight terms at any N): its fast filter test, then an A/B
# against final (faa980e) over three rounds.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/dbl source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== bpf_cuda_fast_test (dbl)"; run_gtest bpf_cuda_fast_test 240
for round in 1 2 3; do
  for v in final dbl; do
    .ab/$v/bin/bench_bpf --benchmark_filter='bpf/cuda-fast/(262144|16777216|67108864)/' \
      --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 |
      grep _median | sed "s/^/$v /" | awk '{print $1, $2, $(NF)}' | tee -a "$out/ab_run13.txt"
  done
done
