#!/usr/bin/env bash
# Session 38, run 16: two (e871fb2 and, in the fast kernel without the jitter's code, a resampled
# tick's particles loaded in two phases: the ancestors, a Philox block's work, then their states)
# against head (e871fb2): its fast filter test, an A/B over three rounds, the jittered GBP/USD tick.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/two source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== bpf_cuda_fast_test (two)"; run_gtest bpf_cuda_fast_test 240
for round in 1 2 3; do
  for v in head two; do
    .ab/$v/bin/bench_bpf --benchmark_filter='bpf/cuda-fast/(262144|16777216)/' \
      --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 |
      grep _median | sed "s/^/$v /" | awk '{print $1, $2, $(NF)}' | tee -a "$out/ab_run16.txt"
  done
done
model='--mu -4.5 --rho 0.97 --sigma 0.15 --nu-state 5 --nu-obs 5 --simulate 2000 --seed 3'
for x in 0 0.5 1; do
  .ab/two/bin/resample bpf $model --n 16777216 --precision fast --ess-threshold $x --out "$out/cli" 2>&1 |
    grep -E 'us_per_tick|resampled' | tr '\n' ' ' | sed "s/^/two, threshold $x: /"
  echo
done | tee -a "$out/ab_run16.txt"
.ab/two/bin/resample bpf --data data/gbp_usd_1997_1999_returns.txt --n 16777216 --precision fast --jitter 0.05 \
  --out "$out/cli" 2>&1 | grep -E 'log_likelihood|us_per_tick' | sed 's/^/two, jitter 0.05, 2^24: /' | tee -a "$out/ab_run16.txt"
rm -rf "$out/cli"
