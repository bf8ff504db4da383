#!/usr/bin/env bash
# Session 41, run 4: the fast mode's quantisation from the float's bits (.ab/exp: add_quantised_float,
# integer operations where quantise takes three conversions) against the committed fast mode
# (.ab/new, run 1's build): CudaFastExp (the same bits as the PTX fast draw) and compute-sanitizer
# on them; bench_cuda's fast rows and the fast tick alternated; per-kernel times; bench_ptx's comb
# rows with the CUDA C call given its options (mended after run 3); the README's command line.
python3 -c "import tarfile; [tarfile.open(f).extractall('.') for f in ('.ab/b1.tar.xz', '.ab/b3.tar.xz')]"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/exp source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/tests.txt"
for t in ptx_backend_test bpf_cuda_fast_test; do
  echo "== $t"; timeout 300 "$build/bin/$t" 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests? ran|Failure' -A3 | head -30
done 2>&1 | tee -a "$out/tests.txt"
for tool in memcheck racecheck synccheck; do
  run_sanitizer "$tool" ptx_backend_test 'CudaFastExp.SameBitsAsPtxFastExp' 200
  run_sanitizer "$tool" bpf_cuda_fast_test "$(sanitizer_filter "$tool" bpf_cuda_fast_test)" 150
done 2>&1 | tee -a "$out/tests.txt"
rows='cuda/(systematic|stratified|multinomial.sorted)/float/(exact|fast_exp|fast_given_max)/(1048576|16777216)/'
for r in 1 2; do for v in new exp; do
  .ab/$v/bin/bench_cuda --benchmark_filter="$rows" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $2}'
done; done | tee "$out/ab_cuda.txt"
for r in 1 2 3; do for v in new exp; do
  .ab/$v/bin/bench_bpf --benchmark_filter='bpf/cuda-fast/16777216/' --benchmark_min_time=0.1 \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $NF}'
done; done | tee "$out/ab_bpf.txt"
TIMES_COUNT=10 kernel_times_from 'cuda/systematic/float/fast_given_max/16777216/'
"$build/bin/bench_ptx" --benchmark_filter='(ptx|cuda)/(systematic|stratified|multinomial_sorted)(_fast)?/(1048576|16777216)/' \
  --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 |
  grep -E 'median' | awk '{print $1, $2}' | tee "$out/bench_ptx.txt"
for prec in exact fast; do
  "$build/bin/resample" bpf --data data/gbp_usd_1997_1999_returns.txt --n 65536 --precision "$prec" --out "/tmp/cli_$prec" 2>&1
done | tee "$out/bpf_cli.txt"
