#!/usr/bin/env bash
# Session 38, run 3: span2 (run 2's span with G = min(ceil(R / 4), resident blocks)): the fast
# filter test, an A/B against v12 over two rounds, the tick's kernel times at 2^24 (gated row, boost
# clocks) and Nsight Compute's instruction regions and stall reasons of gather_propagate.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/span2 source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== bpf_cuda_fast_test (span2)"; run_gtest bpf_cuda_fast_test 240
for round in 1 2; do
  for v in v12 span2; do
    .ab/$v/bin/bench_bpf --benchmark_filter='bpf/cuda-fast/(262144|1048576|16777216)/' \
      --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 |
      grep _median | sed "s/^/$v /" | awk '{print $1, $2, $(NF)}' | tee -a "$out/ab_run3.txt"
  done
done
TIMES_BINARY=bench_bpf TIMES_SKIP=60 TIMES_COUNT=24 TIMES_FILE=kernel_times_span2.txt kernel_times_from 'bpf/cuda-fast/gated/16777216/'
BUILD=.ab/v12; build=.ab/v12
TIMES_BINARY=bench_bpf TIMES_SKIP=60 TIMES_COUNT=24 TIMES_FILE=kernel_times_v12.txt kernel_times_from 'bpf/cuda-fast/gated/16777216/'
build=.ab/span2
head -30 "$out/kernel_times_span2.txt"; head -30 "$out/kernel_times_v12.txt"
ncu_instruction_counts regex:gather_propagate 1 'bpf/cuda-fast/gated/16777216/' bench_bpf 8
tail -3 "$out/ncu_run.txt"
python3 scripts/sass_regions.py "$out/source_sass.csv" gather_propagate 16777216 >"$out/sass_regions_span2.txt" 2>&1
head -40 "$out/sass_regions_span2.txt"
grep -E "Duration|Issue Slots|Warp Cycles Per Issued|Achieved Occupancy|Registers Per|DRAM Throughput" "$out/ncu_details.txt"
rm -f "$out/source_sass.csv" "$out/ncu_run.txt"
