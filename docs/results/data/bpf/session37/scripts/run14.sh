#!/usr/bin/env bash
# Session 37, run 14 (the reread's candidates). final: 65be26f. cand1: the kernel with the jitter's
# code loads and draws four rounds at a time (72 -> 28 bytes of spill), the others as final (their
# device code is final's). cand2: cand1 and disk_point without its stored d (log_w takes 1 - w).
# The fast tick without jitter, final against cand2 (two rounds); with jitter (the GBP/USD command
# line at 2^24, --jitter 0.05, three runs each, alternating), final, cand1 and cand2.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
out=${OUT:-out}
rows='bpf/cuda-fast/(262144|16777216)/'
for round in 1 2; do
  for b in final cand2; do
    echo "== $b, round $round"
    ".ab/$b/bin/bench_bpf" --benchmark_filter="$rows" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
      --benchmark_report_aggregates_only=true 2>&1 | grep -E '_median' | awk '{print $1, $2, $3, $NF}'
  done
done 2>&1 | tee "$out/ab_reread.txt"
for round in 1 2 3; do
  for b in final cand1 cand2; do
    ".ab/$b/bin/resample" bpf --data data/gbp_usd_1997_1999_returns.txt --n 16777216 --precision fast --jitter 0.05 \
      --out "$out/cli_$b" 2>&1 | grep -E 'log_likelihood|us_per_tick' | tr '\n' ' ' | sed "s/^/$b, round $round: /"
    echo
  done
done 2>&1 | tee "$out/jitter_reread.txt"
rm -rf "$out"/cli_*
