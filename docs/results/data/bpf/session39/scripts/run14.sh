#!/usr/bin/env bash
# Session 39, run 14: the session's final code (the working tree over 578ebca with
# options::device_max_log_weight; binaries built on the development machine, Release, sm_90, in
# .ab/final/bin): every GPU test binary but the litmus suite (unchanged), compute-sanitizer on the
# changed paths, the sweep behind docs/results/bpf.md's table and plot, bench_cuda's rows with and
# without the given max, the graph rows, and the GBP/USD command line.
python3 -c "import tarfile; tarfile.open('.ab/b5.tar.xz').extractall('.')"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/final source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/device.txt"
for t in core_device_test fast_moves_test cuda_parity_test cuda_backend_api_test cuda_backend_test bpf_cuda_test \
  bpf_cuda_fast_test ptx_backend_test ptx_parity_test; do
  echo "== $t"; timeout 300 "$build/bin/$t" 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests? ran|Failure' | head -20
done 2>&1 | tee "$out/tests.txt"
comb='*sv_bootstrap_ess_systematic_gated:*sv_bootstrap_every_tick_stratified_gated:*sv_bootstrap_multinomial_sorted_gated'
{
  for tool in memcheck racecheck synccheck; do
    run_sanitizer "$tool" cuda_backend_test "$(sanitizer_filter "$tool" cuda_backend_test)" 240
    run_sanitizer "$tool" cuda_parity_test "$(sanitizer_filter "$tool" cuda_parity_test)" 200
    run_sanitizer "$tool" bpf_cuda_test "$comb" 200
  done
  run_sanitizer memcheck bpf_cuda_test "$(sanitizer_filter memcheck bpf_cuda_test)" 240
  run_sanitizer memcheck bpf_cuda_fast_test "$(sanitizer_filter memcheck bpf_cuda_fast_test)" 200
} 2>&1 | tee "$out/sanitizers.txt"
timeout 300 "$build/bin/bench_bpf" --benchmark_filter='bpf/(cuda|cuda-fast|ptx)/[0-9]' --benchmark_min_time=0.1 \
  --benchmark_out="$out/bench_bpf.json" --benchmark_out_format=json >"$out/bench_bpf.txt" 2>&1
echo "bench_bpf rc=$?"
python3 benchmarks/bpf_results.py --bench "$out/bench_bpf.json" --out-dir "$out" >>"$out/bench_bpf.txt" 2>&1
grep -E 'cuda-fast/(262144|16777216|67108864)/|cuda/(262144|16777216)/|ptx/(262144|16777216)/' "$out/bench_bpf.txt" | awk '{print $1, $2, $3, $NF}'
"$build/bin/bench_cuda" --benchmark_filter='cuda/(systematic|stratified|multinomial-sorted)/float/(exact|given_max)/(1048576|16777216|67108864)/|cuda/graph/systematic/|cuda/copy/(16777216|67108864)/' \
  --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 |
  grep -E '_median' | awk '{print $1, $2, $3, $NF}' | tee "$out/bench_cuda.txt"
for p in exact fast; do
  "$build/bin/resample" bpf --data data/gbp_usd_1997_1999_returns.txt --n 65536 --precision "$p" --out "$out/cli_$p" 2>&1 |
    grep -E 'log_likelihood|us_per_tick|resampled' | sed "s/^/$p: /"
done 2>&1 | tee "$out/bpf_cli.txt"
"$build/bin/resample" bpf --data data/gbp_usd_1997_1999_returns.txt --n 16777216 --precision fast --jitter 0.05 2>&1 |
  grep -E 'log_likelihood|us_per_tick' | sed 's/^/fast, jitter 0.05, 2^24: /' | tee -a "$out/bpf_cli.txt"
rm -rf "$out"/cli_*
