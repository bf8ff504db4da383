#!/usr/bin/env bash
# Session 41, run 3 (run 1's binaries): bench_ptx's comb rows, PTX against CUDA C, exact and fast
# (options::fast_exp, on both backends since this session), at 2^20 and 2^24. Run 2's filter for
# this had a `$` after the size, which the rows' /manual_time suffix never matches.
python3 -c "import tarfile; tarfile.open('.ab/b1.tar.xz').extractall('.')"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/new source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/bench_ptx_fast.txt"
"$build/bin/bench_ptx" --benchmark_filter='(ptx|cuda)/(systematic|stratified|multinomial_sorted)(_fast)?/(1048576|16777216)/' \
  --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 |
  grep -E 'median|copy|Run on|MHz' | tee -a "$out/bench_ptx_fast.txt"
