#!/usr/bin/env bash
# Session 37, run 5: Nsight Compute's warp states (stall reasons) and memory throughput for the fast
# SV gather_propagate at 2^24 (gated row, one launch after 8), run 1's binary (new) and run 4's (full).
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
out=${OUT:-out}
for b in new full; do
  echo "== $b"
  ncu --clock-control none --cache-control none --kernel-name regex:gather_propagate --launch-skip 8 --launch-count 1 \
    --section SchedulerStats --section SpeedOfLight --section Occupancy \
    --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    ".ab/$b/bin/bench_bpf" --benchmark_filter='bpf/cuda-fast/gated/16777216/' --benchmark_min_time=0.05 2>&1 |
    grep -E 'Duration|stalled|Issued|Eligible|Active Warps|Throughput|Achieved|Block Limit|No Eligible|One or More' | awk '$NF+0 >= 0.05 || !/stalled/'
done 2>&1 | tee "$out/ncu_stalls.txt"
