#!/usr/bin/env bash
# Session 37, run 6: the fast chunk's summary at one barrier (each warp's max and sums, then warp 0
# rescales; the group fold by warp 0 alone), on top of run 4's full chunks. The fast filter's tests
# and sanitizers on it; two A/B rounds of new (run 1), full (run 4) and onebar; Nsight Compute.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/onebar source scripts/gpu_common.sh
for t in fast_moves_test bpf_cuda_fast_test; do
  timeout 600 "$build/bin/$t" >"$out/${t}_onebar.txt" 2>&1
  echo "$t rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' "$out/${t}_onebar.txt" | tr '\n' ' ')"
  grep -E '^\[  FAILED|Failure' -A3 "$out/${t}_onebar.txt" | head -20
done
{
  for tool in memcheck racecheck synccheck; do
    run_sanitizer "$tool" bpf_cuda_fast_test "$(sanitizer_filter "$tool" bpf_cuda_fast_test)" 600
  done
  run_sanitizer memcheck bpf_cuda_fast_test '*OutlyingObservations*' 600  # folded chunk summaries
  run_sanitizer racecheck bpf_cuda_fast_test '*OutlyingObservations*' 600
} 2>&1 | tee "$out/sanitizers_onebar.txt"
rows='bpf/cuda-fast/(262144|16777216)/'
for round in 1 2; do
  for b in new full onebar; do
    echo "== $b, round $round"
    ".ab/$b/bin/bench_bpf" --benchmark_filter="$rows" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
      --benchmark_report_aggregates_only=true 2>&1 | grep -E '_median' | awk '{print $1, $2, $3, $NF}'
  done
done 2>&1 | tee "$out/ab_one_barrier.txt"
for b in full onebar; do
  echo "== $b"
  ncu --clock-control none --cache-control none --print-units base --kernel-name regex:gather_propagate \
    --launch-skip 8 --launch-count 2 --csv \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio \
    ".ab/$b/bin/bench_bpf" --benchmark_filter='bpf/cuda-fast/gated/16777216/' --benchmark_min_time=0.05 2>&1 |
    awk -F'","' '/^==ERROR==/ { print } /gpu__time|smsp__|sm__/ { gsub(/"/, "", $NF); print $(NF-2), $NF }'
done 2>&1 | tee "$out/ncu_one_barrier.txt"
