#!/usr/bin/env bash
# Session 37, run 2: where the fast chunk keeps its draws. new: run 1's binary (two disk points per
# Philox block computed at once, four rounds of loads ahead); raw4: the block's words kept and each
# point computed in its round; raw2: the same, two rounds of loads ahead (no spill). Two rounds of
# the three alternating; Nsight Compute's time and instructions, and the SASS regions.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
source scripts/gpu_common.sh
rows='bpf/cuda-fast/(gated/)?(262144|16777216)/'
for round in 1 2; do
  for b in new raw4 raw2; do
    echo "== $b, round $round"
    ".ab/$b/bin/bench_bpf" --benchmark_filter="$rows" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
      --benchmark_report_aggregates_only=true 2>&1 | grep -E '_median' | awk '{print $1, $2, $3, $NF}'
  done
done 2>&1 | tee "$out/ab_draw_rounds.txt"
for b in new raw4 raw2; do
  echo "== $b"
  ncu --clock-control none --cache-control none --print-units base --kernel-name regex:gather_propagate \
    --launch-skip 8 --launch-count 2 --csv \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active \
    ".ab/$b/bin/bench_bpf" --benchmark_filter='bpf/cuda-fast/gated/16777216/' --benchmark_min_time=0.05 2>&1 |
    awk -F'","' '/^==ERROR==/ { print } /gpu__time|smsp__|sm__/ { gsub(/"/, "", $NF); print $(NF-2), $NF }'
done 2>&1 | tee "$out/ncu_draw_rounds.txt"
for b in raw4 raw2; do
  BUILD=.ab/$b build=.ab/$b ncu_instruction_counts regex:gather_propagate 1 'bpf/cuda-fast/gated/16777216/' bench_bpf 8
  python3 scripts/sass_regions.py "$out/source_sass.csv" gather_propagate 16777216 >"$out/sass_regions_$b.txt" 2>&1
  head -60 "$out/sass_regions_$b.txt"
  rm -f "$out/source_sass.csv" "$out/ncu_details.txt" "$out/ncu_run.txt"
done
