#!/usr/bin/env bash
# Session 37, run 12: gpu_common.sh's ncu_instruction_counts with bare min times (c5adaa5) on the
# carried final bench_bpf: the fast SV gather_propagate at 2^24 (gated row, one launch after 8),
# its instructions by region (scripts/sass_regions.py) and its stall reasons.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/final source scripts/gpu_common.sh
ncu_instruction_counts regex:gather_propagate 1 'bpf/cuda-fast/gated/16777216/' bench_bpf 8
tail -3 "$out/ncu_run.txt"
python3 scripts/sass_regions.py "$out/source_sass.csv" gather_propagate 16777216 >"$out/sass_regions_final.txt" 2>&1
head -70 "$out/sass_regions_final.txt"
rm -f "$out/source_sass.csv" "$out/ncu_run.txt"
