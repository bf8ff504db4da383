#!/usr/bin/env bash
# Session 37, run 11 (final code, as run 8 with run 10's loads; binaries built on the development machine, Release, sm_90,
# in .ab/final/bin; session 36's bench_bpf in .ab/prev/bin): the filter's GPU tests and sanitizers,
# the A/B of the fast tick, the sweep behind docs/results/bpf.md's table, the GBP/USD command line.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/final source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/device.txt"
for t in fast_moves_test bpf_cuda_fast_test bpf_cuda_test; do
  timeout 500 "$build/bin/$t" >"$out/${t}_final11.txt" 2>&1
  echo "$t rc=$? $(grep -E '^\[  PASSED|^\[  FAILED|SKIPPED \]' "$out/${t}_final11.txt" | tr '\n' ' ')"
  grep -E '^\[  FAILED|Failure' -A3 "$out/${t}_final11.txt" | head -20
done
{
  for tool in memcheck racecheck synccheck; do
    for t in fast_moves_test bpf_cuda_fast_test bpf_cuda_test; do
      run_sanitizer "$tool" "$t" "$(sanitizer_filter "$tool" "$t")" 240
    done
  done
} 2>&1 | tee "$out/sanitizers_final11.txt"
rows='bpf/cuda-fast/(262144|16777216)/'
for round in 1 2; do
  for b in prev final; do
    echo "== $b, round $round"
    ".ab/$b/bin/bench_bpf" --benchmark_filter="$rows" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
      --benchmark_report_aggregates_only=true 2>&1 | grep -E '_median' | awk '{print $1, $2, $3, $NF}'
  done
done 2>&1 | tee "$out/ab_final11.txt"
timeout 300 "$build/bin/bench_bpf" --benchmark_filter='bpf/(cuda|cuda-fast|ptx)/[0-9]' --benchmark_min_time=0.1 \
  --benchmark_out="$out/bench_bpf11.json" --benchmark_out_format=json >"$out/bench_bpf11.txt" 2>&1
echo "bench_bpf rc=$?"
python3 benchmarks/bpf_results.py --bench "$out/bench_bpf11.json" --out-dir "$out" >>"$out/bench_bpf11.txt" 2>&1
grep -E 'cuda-fast/(262144|16777216|67108864)/|cuda/(262144|16777216)/|ptx/(262144|16777216)/' "$out/bench_bpf11.txt" | awk '{print $1, $2, $3, $NF}'
for p in exact fast; do
  "$build/bin/resample" bpf --data data/gbp_usd_1997_1999_returns.txt --n 65536 --precision "$p" --out "$out/cli_$p" 2>&1 |
    grep -E 'log_likelihood|us_per_tick|resampled' | sed "s/^/$p: /"
done 2>&1 | tee "$out/bpf_cli_final11.txt"
rm -rf "$out"/cli_*
