#!/usr/bin/env bash
# Session 37, run 10: all eight rounds' loads at the chunk's start, a Philox block per two rounds
# (l8d2; 12 bytes of spill), against the final code (four rounds' loads and two blocks at a time).
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
out=${OUT:-out}
rows='bpf/cuda-fast/(262144|16777216)/'
for round in 1 2; do
  for b in final l8d2; do
    echo "== $b, round $round"
    ".ab/$b/bin/bench_bpf" --benchmark_filter="$rows" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
      --benchmark_report_aggregates_only=true 2>&1 | grep -E '_median' | awk '{print $1, $2, $3, $NF}'
  done
done 2>&1 | tee "$out/ab_loads_ahead.txt"
for b in final l8d2; do
  echo "== $b"
  ncu --clock-control none --cache-control none --print-units base --kernel-name regex:gather_propagate \
    --launch-skip 8 --launch-count 2 --csv \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,dram__throughput.avg.pct_of_peak_sustained_elapsed \
    ".ab/$b/bin/bench_bpf" --benchmark_filter='bpf/cuda-fast/gated/16777216/' --benchmark_min_time=0.05 2>&1 |
    awk -F'","' '/^==ERROR==/ { print } /gpu__time|smsp__|dram__/ { gsub(/"/, "", $NF); print $(NF-2), $NF }'
done 2>&1 | tee "$out/ncu_loads_ahead.txt"
