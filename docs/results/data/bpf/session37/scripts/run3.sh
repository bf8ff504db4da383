#!/usr/bin/env bash
# Session 37, run 3: the SASS of run 1's fast SV gather_propagate kernels (cuobjdump), and Nsight
# Compute's per-instruction counts of the one without the jitter's code (gated row, 2^24), by region.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/new source scripts/gpu_common.sh
cuobjdump -sass "$build/bin/bench_bpf" |
  awk -v k='gather_propagate.*4fast8sv_moves' '$0 ~ "Function : .*" k { on = 1 }
    on && /Function : / && $0 !~ k { on = 0 } on' >"$out/bpf_fast_sass.txt"
wc -l "$out/bpf_fast_sass.txt"
ncu_instruction_counts regex:gather_propagate 1 'bpf/cuda-fast/gated/16777216/' bench_bpf 8
tail -5 "$out/ncu_run.txt"
python3 scripts/sass_regions.py "$out/source_sass.csv" gather_propagate 16777216 >"$out/sass_regions.txt" 2>&1
cat "$out/sass_regions.txt" | head -90
gzip -9 "$out/source_sass.csv"
rm -f "$out/ncu_details.txt"
