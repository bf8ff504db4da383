#!/bin/bash
# session 36, run 6: prev = febb7c9 (main, the final code); new = the comb's constants set up by
# every thread in straight-line code (each warp's copy), no barrier of the block before the comb.
# Then the final code alone: its tests, sanitizers, every kernel of bench_ptx, and the filter's tick.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
A=$PWD/.ab
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $OUT/device.txt
nvdisasm -c $A/new/comb_from_estimates.sm_90.cubin > $OUT/comb_sass_uniform.txt 2>&1
echo "new SASS: $(grep -c STL $OUT/comb_sass_uniform.txt) STL, $(grep -c 'MUFU.RCP64H' $OUT/comb_sass_uniform.txt) RCP64H, $(grep -c 'UFLO\|UPOPC\|USHF' $OUT/comb_sass_uniform.txt) uniform shifts/flo"
gzip $OUT/comb_sass_uniform.txt
for round in 1 2; do for v in prev new; do
  echo "== $v round $round"
  timeout 60 $A/$v/bench_ptx --benchmark_filter='ptx/(systematic|stratified)/(65536|16777216)/' --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep -E 'median' | awk '{print $1, $2, $3}'
done; done > $OUT/ab_uniform_setup.txt 2>&1
cat $OUT/ab_uniform_setup.txt | paste - - - - -
for v in prev new; do
  echo "== $v"
  timeout 60 ncu --clock-control none --cache-control none --print-units base --kernel-name regex:comb --launch-skip 4 --launch-count 2 \
      --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active \
      --csv $A/$v/bench_ptx --benchmark_filter='ptx/systematic/16777216/' --benchmark_min_time=0.05 2>&1 |
      awk -F'","' '/comb/ { sub(/\(.*/, "", $5); gsub(/"/, "", $NF); gsub(/,/, "", $NF); printf "%-75s %12s\n", $(NF-2), $NF }'
done > $OUT/comb_metrics_uniform_setup.txt 2>&1
cat $OUT/comb_metrics_uniform_setup.txt
timeout 90 compute-sanitizer --tool racecheck --error-exitcode 99 $A/new/ptx_backend_test --gtest_filter='PtxAncestors.CombMarginCovers*:PtxAncestors.SortedMarginCovers*' > $OUT/s1.txt 2>&1
echo "new racecheck rc=$? $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' $OUT/s1.txt | tr '\n' ' ')"
# the final code (prev)
( timeout 150 $A/prev/ptx_parity_test 2>&1 | tail -3 ) > $OUT/ptx_parity_test_final.txt
grep -E "PASSED|FAILED" $OUT/ptx_parity_test_final.txt
( timeout 240 $A/prev/ptx_backend_test 2>&1 | tail -8 ) > $OUT/ptx_backend_test_final.txt
grep -E "PASSED|FAILED|SKIPPED" $OUT/ptx_backend_test_final.txt | head -3
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 99 $A/prev/ptx_backend_test --gtest_filter='PtxAncestors.*:PtxForms.*:PtxConversions.*-*EqualCpuAndCudaBitForBit*:*LargeEqual*:*TwoSlices*:*Repeated*:*DeviceStepAndGate*' > $OUT/s1.txt 2>&1
  echo "$tool backend rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $OUT/s1.txt | tr '\n' ' ')"
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 99 $A/prev/ptx_parity_test --gtest_filter='*DoubleInt32*' > $OUT/s1.txt 2>&1
  echo "$tool parity rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $OUT/s1.txt | tr '\n' ' ')"
done > $OUT/sanitizers_final.txt 2>&1
rm -f $OUT/s1.txt
cat $OUT/sanitizers_final.txt
timeout 150 $A/prev/bench_ptx --benchmark_min_time=0.1 --benchmark_out=$OUT/bench_ptx_final.json --benchmark_out_format=json > $OUT/bench_ptx_final.txt 2>&1; echo "bench_ptx rc=$?"
timeout 80 $A/prev/bench_bpf --benchmark_filter='bpf/(cuda|ptx)/(262144|16777216)/' --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true > $OUT/bench_bpf_final.txt 2>&1; echo "bench_bpf rc=$?"
grep median $OUT/bench_bpf_final.txt | awk '{print $1, $2, $3}'
