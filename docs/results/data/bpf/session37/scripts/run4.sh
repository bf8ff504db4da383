#!/usr/bin/env bash
# Session 37, run 4: full chunks without the per-round test of the particle's existence. new: run
# 1's binary; full: this change. The fast filter's tests on full; two A/B rounds; Nsight Compute.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/full source scripts/gpu_common.sh
timeout 600 .ab/full/bin/bpf_cuda_fast_test >"$out/bpf_cuda_fast_test_full.txt" 2>&1
echo "bpf_cuda_fast_test rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' "$out/bpf_cuda_fast_test_full.txt" | tr '\n' ' ')"
rows='bpf/cuda-fast/(262144|16777216)/'
for round in 1 2; do
  for b in new full; do
    echo "== $b, round $round"
    ".ab/$b/bin/bench_bpf" --benchmark_filter="$rows" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
      --benchmark_report_aggregates_only=true 2>&1 | grep -E '_median' | awk '{print $1, $2, $3, $NF}'
  done
done 2>&1 | tee "$out/ab_full_chunks.txt"
for b in new full; do
  echo "== $b"
  ncu --clock-control none --cache-control none --print-units base --kernel-name regex:gather_propagate \
    --launch-skip 8 --launch-count 2 --csv \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active \
    ".ab/$b/bin/bench_bpf" --benchmark_filter='bpf/cuda-fast/gated/16777216/' --benchmark_min_time=0.05 2>&1 |
    awk -F'","' '/^==ERROR==/ { print } /gpu__time|smsp__|sm__/ { gsub(/"/, "", $NF); print $(NF-2), $NF }'
done 2>&1 | tee "$out/ncu_full_chunks.txt"
