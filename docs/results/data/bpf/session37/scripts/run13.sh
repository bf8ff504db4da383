#!/usr/bin/env bash
# Session 37, run 13: fast chunks in reverse order on every other tick (rev: block b runs chunk
# blocks - 1 - b in the odd tick graph), against the final code. Two A/B rounds; the GBP/USD command
# line at 2^20 particles (256 chunks, folded in groups) with both binaries, whose outputs must be
# the same bits; the fast filter's tests on rev.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
out=${OUT:-out}
rows='bpf/cuda-fast/(262144|16777216)/'
for round in 1 2; do
  for b in final rev; do
    echo "== $b, round $round"
    ".ab/$b/bin/bench_bpf" --benchmark_filter="$rows" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
      --benchmark_report_aggregates_only=true 2>&1 | grep -E '_median' | awk '{print $1, $2, $3, $NF}'
  done
done 2>&1 | tee "$out/ab_reverse.txt"
for b in final rev; do
  ".ab/$b/bin/resample" bpf --data data/gbp_usd_1997_1999_returns.txt --n 1048576 --precision fast --out "$out/cli_$b" 2>&1 |
    grep -E 'log_likelihood|us_per_tick' | sed "s/^/$b: /"
  md5sum < "$out/cli_$b/bpf.csv" | sed "s/^/$b csv: /"
done 2>&1 | tee "$out/bits_reverse.txt"
rm -rf "$out"/cli_*
timeout 300 .ab/rev/bin/bpf_cuda_fast_test >"$out/bpf_cuda_fast_test_rev.txt" 2>&1
echo "bpf_cuda_fast_test rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' "$out/bpf_cuda_fast_test_rev.txt" | tr '\n' ' ')"
