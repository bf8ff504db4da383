#!/bin/bash
# session 36, run 3: prev = 3f0d086 (main); tiles = the warp sum written out and inlined in the tile sums, warp 0
# scanning the warps' sums there (no thread-0 loop); new = tiles + the exact O before the tile by the
# last warp's lane 0 in the comb (warp 0 sets the comb up)
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
A=$PWD/.ab
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for v in new; do
  nvdisasm -c $A/$v/comb_from_estimates.sm_90.cubin > $OUT/comb_sass_$v.txt 2>&1
  echo "$v SASS: $(grep -c 'STL' $OUT/comb_sass_$v.txt) STL, $(grep -c 'LDL' $OUT/comb_sass_$v.txt) LDL"
done
gzip $OUT/comb_sass_*.txt
( timeout 150 $A/new/ptx_parity_test 2>&1 | tail -3 ) > $OUT/ptx_parity_test.txt
grep -E "PASSED|FAILED" $OUT/ptx_parity_test.txt
( timeout 240 $A/new/ptx_backend_test 2>&1 | tail -8 ) > $OUT/ptx_backend_test.txt
grep -E "PASSED|FAILED|SKIPPED" $OUT/ptx_backend_test.txt | head -3
for round in 1 2; do for v in prev tiles new; do
  echo "== $v round $round"
  timeout 100 $A/$v/bench_ptx --benchmark_filter='(ptx|cuda)/(systematic|stratified|multinomial_sorted|log_sum_exp)/' --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep -E 'median' | awk '{print $1, $2, $3}'
done; done > $OUT/ab_exact_last.txt 2>&1
grep -E "==|ptx/(systematic|stratified)/" $OUT/ab_exact_last.txt | paste - - - - - - - - - 
for f in 'ptx/systematic/16777216/'; do
  for v in prev tiles new; do
  echo "== $v $f"
  timeout 60 ncu --clock-control none --cache-control none --print-units base --metrics gpu__time_duration.sum,smsp__inst_executed.sum \
      --launch-skip 10 --launch-count 5 --csv $A/$v/bench_ptx --benchmark_filter="$f" --benchmark_min_time=0.05 2>&1 |
      awk -F'","' '/gpu__time_duration|inst_executed/ { sub(/\(.*/, "", $5); gsub(/"/, "", $NF); gsub(/,/, "", $NF); printf "%-32s %-26s %10s\n", $5, $(NF-2), $NF }'
  done
done > $OUT/kernel_times_exact_last.txt 2>&1
grep -E 'comb|tile|statistics' $OUT/kernel_times_exact_last.txt
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 99 $A/new/ptx_backend_test --gtest_filter='PtxAncestors.*:PtxForms.*:PtxConversions.*-*EqualCpuAndCudaBitForBit*:*LargeEqual*:*TwoSlices*:*Repeated*:*DeviceStepAndGate*' > $OUT/s1.txt 2>&1
  echo "$tool backend rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|tests? ran|PASSED|FAILED' $OUT/s1.txt | tr '\n' ' ')"
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 99 $A/new/ptx_parity_test --gtest_filter='*DoubleInt32*' > $OUT/s1.txt 2>&1
  echo "$tool parity rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|tests? ran|PASSED|FAILED' $OUT/s1.txt | tr '\n' ' ')"
done > $OUT/sanitizers.txt 2>&1
rm -f $OUT/s1.txt
cat $OUT/sanitizers.txt
