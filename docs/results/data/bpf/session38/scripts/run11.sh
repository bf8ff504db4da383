#!/usr/bin/env bash
# Session 38, run 11 (final code, faa980e; binaries built on the development machine, Release, sm_90,
# in .ab/final/bin): racecheck on bpf_cuda_test's gated cases with room for them (run 10's 150 s
# stopped it in its fifth case), the sweep behind docs/results/bpf.md's table and plot, the graph
# call rows of bench_cuda, and the GBP/USD command line in both precisions.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/final source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
timeout 300 "$build/bin/bench_bpf" --benchmark_filter='bpf/(cuda|cuda-fast|ptx)/[0-9]' --benchmark_min_time=0.1 \
  --benchmark_out="$out/bench_bpf.json" --benchmark_out_format=json >"$out/bench_bpf.txt" 2>&1
echo "bench_bpf rc=$?"
python3 benchmarks/bpf_results.py --bench "$out/bench_bpf.json" --out-dir "$out" >>"$out/bench_bpf.txt" 2>&1
grep -E 'cuda-fast/(262144|16777216|67108864)/|cuda/(262144|16777216)/|ptx/(262144|16777216)/' "$out/bench_bpf.txt" | awk '{print $1, $2, $3, $NF}'
"$build/bin/bench_cuda" --benchmark_filter='cuda/graph/systematic' --benchmark_min_time=0.1 --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true 2>&1 | grep -E '_median' | awk '{print $1, $2, $3}' | tee "$out/bench_cuda_graph.txt"
for p in exact fast; do
  "$build/bin/resample" bpf --data data/gbp_usd_1997_1999_returns.txt --n 65536 --precision "$p" --out "$out/cli_$p" 2>&1 |
    grep -E 'log_likelihood|us_per_tick|resampled' | sed "s/^/$p: /"
done 2>&1 | tee "$out/bpf_cli.txt"
"$build/bin/resample" bpf --data data/gbp_usd_1997_1999_returns.txt --n 16777216 --precision fast --jitter 0.05 2>&1 |
  grep -E 'log_likelihood|us_per_tick' | sed 's/^/fast, jitter 0.05, 2^24: /' | tee -a "$out/bpf_cli.txt"
rm -rf "$out"/cli_*
run_sanitizer racecheck bpf_cuda_test "$(sanitizer_filter racecheck bpf_cuda_test)" 330 | tee "$out/racecheck_run11.txt"
