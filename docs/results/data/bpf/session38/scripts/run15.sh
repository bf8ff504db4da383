#!/usr/bin/env bash
# Session 38, run 15 (fb521f5's command line, in .ab/cli/bin): where the fast tick's time goes at
# 2^24, from the benchmark's model (SV, t5 noise both, mu -4.5, rho 0.97, sigma 0.15) on 2,000
# simulated ticks: never resampling, resampling when ESS < N/2 (the benchmark's rule), at every tick.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
model='--mu -4.5 --rho 0.97 --sigma 0.15 --nu-state 5 --nu-obs 5 --simulate 2000 --seed 3'
for round in 1 2; do
  for x in 0 0.5 1; do
    .ab/cli/bin/resample bpf $model --n 16777216 --precision fast --ess-threshold $x --out "$OUT/cli" 2>&1 |
      grep -E 'us_per_tick|resampled' | tr '\n' ' ' | sed "s/^/threshold $x: /"
    echo
  done
done | tee "$OUT/tick_composition.txt"
rm -rf "$OUT/cli"
