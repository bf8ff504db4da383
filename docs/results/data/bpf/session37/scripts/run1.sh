#!/usr/bin/env bash
# Session 37, run 1: the fast draws without rejection (disk points), binaries built on the
# development machine (Release, sm_90) and carried in .ab/{prev,new}/bin. The new binaries' GPU
# tests and sanitizers; the A/B of the fast tick (two rounds, alternating); Nsight Compute's kernel
# time and instructions for gather_propagate; the GBP/USD command line in both precisions.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
export BUILD=.ab/new
source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/device.txt"
for t in fast_moves_test bpf_cuda_fast_test; do
  timeout 900 "$build/bin/$t" >"$out/$t.txt" 2>&1
  echo "$t rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|tests? ran' "$out/$t.txt" | tr '\n' ' ')"
  grep -E '^\[  FAILED|Failure|error:' -A3 "$out/$t.txt" | head -30
done
{
  for tool in memcheck racecheck synccheck; do
    for t in fast_moves_test bpf_cuda_fast_test; do
      run_sanitizer "$tool" "$t" "$(sanitizer_filter "$tool" "$t")" 900
    done
  done
} 2>&1 | tee "$out/sanitizers.txt"
rows='bpf/cuda-fast/(gated/)?(262144|16777216)/'
for round in 1 2; do
  for b in prev new; do
    echo "== $b, round $round"
    ".ab/$b/bin/bench_bpf" --benchmark_filter="$rows" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
      --benchmark_report_aggregates_only=true 2>&1 | grep -E '_median|_mean'
  done
done 2>&1 | tee "$out/ab_disk_points.txt"
for b in prev new; do
  echo "== $b"
  ncu --clock-control none --cache-control none --print-units base --kernel-name regex:gather_propagate \
    --launch-skip 8 --launch-count 2 --csv \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread \
    ".ab/$b/bin/bench_bpf" --benchmark_filter='bpf/cuda-fast/gated/16777216/' --benchmark_min_time=0.05 2>&1 |
    awk -F'","' '/^==(ERROR|WARNING)==/ { print } /gpu__time|smsp__|sm__|launch__/ { gsub(/"/, "", $NF); print $(NF-2), $NF }'
done 2>&1 | tee "$out/ncu_gather_propagate.txt"
for p in exact fast; do
  .ab/new/bin/resample bpf --data data/gbp_usd_1997_1999_returns.txt --n 65536 --precision "$p" --out "$out/cli_$p" 2>&1 |
    grep -E 'log_likelihood|us_per_tick|resampled|precision' | sed "s/^/$p: /"
done 2>&1 | tee "$out/bpf_cli.txt"
rm -rf "$out"/cli_*/*.png
