#!/usr/bin/env bash
# Session 38, run 6: pdlcap (launch_early no longer falls back to plain launches while the stream is
# captured: the resampler's kernels in the tick graph's conditional body, and a captured call, get
# programmatic edges) against head (51fc6ef), alternating, two rounds.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
out=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for round in 1 2; do
  for v in head pdlcap; do
    .ab/$v/bin/bench_bpf --benchmark_filter='bpf/(cuda-fast/(262144|16777216)|cuda/16777216)/' \
      --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 |
      grep -E '_median|rror' | sed "s/^/$v /" | awk '{print $1, $2, $(NF)}' | tee -a "$out/ab_run6.txt"
    .ab/$v/bin/bench_cuda --benchmark_filter='cuda/graph/systematic' \
      --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 |
      grep -E '_median|rror' | sed "s/^/$v /" | awk '{print $1, $2, $3, $4}' | tee -a "$out/ab_run6.txt"
  done
done
