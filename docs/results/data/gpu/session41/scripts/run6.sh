#!/usr/bin/env bash
# Session 41, run 6 (run 5's binaries, and 5cc38f7's bench_cuda and bench_bpf as .ab/base): bench_cuda's
# comb rows alternated over two rounds; the fast tick alternated over three; systematic's per-kernel
# times with the max handed over, exact and fast; bench_ptx's comb rows, PTX against CUDA C, exact
# and fast; the README's command line, exact and fast.
python3 -c "import tarfile; [tarfile.open(f).extractall('.') for f in ('.ab/b2.tar.xz', '.ab/b4.tar.xz')]"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/final source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/device.txt"
rows='cuda/(systematic|stratified|multinomial.sorted)/float/(exact|given_max|fast_exp|fast_given_max)/(1048576|16777216)/|cuda/copy/16777216/'
for r in 1 2; do for v in base final; do
  .ab/$v/bin/bench_cuda --benchmark_filter="$rows" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $2}'
done; done | tee "$out/ab_cuda.txt"
for r in 1 2 3; do for v in base final; do
  .ab/$v/bin/bench_bpf --benchmark_filter='bpf/cuda-fast/(262144|16777216)/' --benchmark_min_time=0.1 \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $NF}'
done; done | tee "$out/ab_bpf.txt"
TIMES_COUNT=10 kernel_times_from 'cuda/systematic/float/given_max/16777216/' 'cuda/systematic/float/fast_given_max/16777216/'
"$build/bin/bench_ptx" --benchmark_filter='(ptx|cuda)/(systematic|stratified|multinomial_sorted)(_fast)?/(1048576|16777216)/' \
  --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 |
  grep -E 'median' | awk '{print $1, $2}' | tee "$out/bench_ptx.txt"
for prec in exact fast; do
  "$build/bin/resample" bpf --data data/gbp_usd_1997_1999_returns.txt --n 65536 --precision "$prec" --out "/tmp/cli_$prec" 2>&1
done | tee "$out/bpf_cli.txt"
