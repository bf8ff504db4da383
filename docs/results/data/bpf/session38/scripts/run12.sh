#!/usr/bin/env bash
# Session 38, run 12: pf (final and: the first span's states and log-weights prefetched to L2 at the
# particle kernel's start; finish_tick's ESS test from what it knows, not a reload of the scalars):
# its filter tests, then an A/B against final (faa980e) over three rounds.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/pf source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== bpf_cuda_fast_test (pf)"; run_gtest bpf_cuda_fast_test 240
echo "== bpf_cuda_test (pf)"; run_gtest bpf_cuda_test 240
for round in 1 2 3; do
  for v in final pf; do
    .ab/$v/bin/bench_bpf --benchmark_filter='bpf/cuda-fast/(1024|262144|16777216)/' \
      --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 |
      grep _median | sed "s/^/$v /" | awk '{print $1, $2, $(NF)}' | tee -a "$out/ab_run12.txt"
  done
done
