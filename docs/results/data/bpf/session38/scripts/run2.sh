#!/usr/bin/env bash
# Session 38, run 2: "span" (the fast blocks as many as the GPU runs at once, each a balanced range of
# row pairs, running sums per thread): its GPU filter tests, then an A/B against v12 (5359033) over
# two rounds.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in fast_moves_test bpf_cuda_fast_test bpf_cuda_test; do
  echo "== $t (span)"
  timeout 240 .ab/span/bin/$t >"$OUT/$t.txt" 2>&1
  echo "exit $?"
  grep -E '^\[  (PASSED|FAILED)  \]|tests? ran' "$OUT/$t.txt"
  grep -E 'Failure|error' -A5 "$OUT/$t.txt" | head -30
done
for round in 1 2; do
  for v in v12 span; do
    .ab/$v/bin/bench_bpf --benchmark_filter='bpf/cuda-fast/(1024|262144|1048576|4194304|16777216|67108864)/' \
      --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 |
      grep _median | sed "s/^/$v /" | awk '{print $1, $2, $(NF)}' | tee -a "$OUT/ab_run2.txt"
  done
done
