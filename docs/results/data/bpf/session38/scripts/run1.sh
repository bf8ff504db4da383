#!/usr/bin/env bash
# Session 38, run 1: the GPU filter tests on v124 (acq_rel group count, finish_tick launched early,
# two ticks a graph), then an A/B of base (8a41688), v12 and v124 over two rounds.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in bpf_cuda_fast_test bpf_cuda_test; do
  echo "== $t (v124)"
  timeout 240 .ab/v124/bin/$t >"$OUT/$t.txt" 2>&1
  echo "exit $?"
  grep -E '^\[  (PASSED|FAILED)  \]|tests? ran' "$OUT/$t.txt"
  grep -E 'Failure|error' -A5 "$OUT/$t.txt" | head -30
done
for round in 1 2; do
  for v in base v12 v124; do
    .ab/$v/bin/bench_bpf --benchmark_filter='bpf/cuda-fast/(1024|262144|16777216)/' --benchmark_min_time=0.1 \
      --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep _median | sed "s/^/$v /" |
      awk '{print $1, $2, $(NF)}' | tee -a "$OUT/ab_run1.txt"
  done
done
