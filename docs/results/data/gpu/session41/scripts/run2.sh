#!/usr/bin/env bash
# Session 41, run 2 (same binaries as run 1): the fast particle filter's tick, whose resampler takes
# options::fast_exp since this session (.ab/new) against 5cc38f7 (.ab/base), alternated over three
# rounds at 2^18 and 2^24; the per-kernel times of systematic at 2^24 with the max handed over, exact
# and fast; PTX against CUDA C in the fast mode (bench_ptx); the command line's fast filter on the
# GBP/USD returns; and run 1's bench_cuda A/B again at 2^24, whose 5cc38f7 rows did not run there (its
# binaries were packed outside bin/, b2.tar.xz puts them there).
python3 -c "import tarfile; [tarfile.open(f).extractall('.') for f in ('.ab/b1.tar.xz', '.ab/b2.tar.xz')]"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/new source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/device.txt"
for r in 1 2 3; do for v in base new; do
  .ab/$v/bin/bench_bpf --benchmark_filter='bpf/cuda-fast/(262144|16777216)/' --benchmark_min_time=0.1 \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $NF}'
done; done | tee "$out/ab_bpf.txt"
rows='cuda/(systematic|stratified|multinomial.sorted)/float/(exact|given_max|fast_exp|fast_given_max)/16777216/|cuda/copy/16777216/'
for r in 1 2; do for v in base new; do
  .ab/$v/bin/bench_cuda --benchmark_filter="$rows" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $2}'
done; done | tee "$out/ab_cuda.txt"
TIMES_COUNT=10 kernel_times_from 'cuda/systematic/float/given_max/16777216/' 'cuda/systematic/float/fast_given_max/16777216/' \
  'cuda/stratified/float/fast_given_max/16777216/'
"$build/bin/bench_ptx" --benchmark_filter='(ptx|cuda)/(systematic|stratified|multinomial_sorted)(_fast)?/(1048576|16777216)$' \
  --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep -E 'median|copy' | tee "$out/bench_ptx_fast.txt"
for prec in exact fast; do
  "$build/bin/resample" bpf --model sv --data data/gbp_usd_1997_1999_returns.txt --mu -1.02 --rho 0.9702 --sigma 0.178 \
    --n 65536 --seed 1 --precision "$prec" --backend cuda --out "/tmp/cli_$prec" 2>&1 | grep -E 'log_likelihood|us_per_tick|precision'
done | tee "$out/bpf_cli.txt"
