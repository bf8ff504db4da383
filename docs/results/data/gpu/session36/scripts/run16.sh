#!/bin/bash
# session 36, run 2: prev = 3f0d086 (main); new2 = the comb's constants set up per warp (no block
# barrier before the comb) + the warps' chain; new3 = new2 with the chain turned off (every tile
# through the block barrier, as prev)
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
A=$PWD/.ab
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for v in new2 new3; do
  nvdisasm -c $A/$v/comb_from_estimates.sm_90.cubin > $OUT/comb_sass_$v.txt 2>&1
  echo "$v SASS: $(grep -c 'STL' $OUT/comb_sass_$v.txt) STL, $(grep -c 'LDL' $OUT/comb_sass_$v.txt) LDL"
done
gzip $OUT/comb_sass_*.txt
( timeout 150 $A/new2/ptx_parity_test 2>&1 | tail -3 ) > $OUT/ptx_parity_test.txt
grep -E "PASSED|FAILED" $OUT/ptx_parity_test.txt
( timeout 240 $A/new2/ptx_backend_test 2>&1 | tail -8 ) > $OUT/ptx_backend_test.txt
grep -E "PASSED|FAILED|SKIPPED" $OUT/ptx_backend_test.txt | head -3
for round in 1 2; do for v in prev new2 new3; do
  echo "== $v round $round"
  timeout 100 $A/$v/bench_ptx --benchmark_filter='(ptx|cuda)/(systematic|stratified|multinomial_sorted)/' --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep -E 'median' | awk '{print $1, $2, $3}'
done; done > $OUT/ab_per_warp.txt 2>&1
grep -E "==|ptx/(systematic|stratified)/" $OUT/ab_per_warp.txt | paste - - - - - - - - - 
for f in 'ptx/systematic/16777216/'; do
  for v in prev new2 new3; do
  echo "== $v $f"
  timeout 60 ncu --clock-control none --cache-control none --print-units base --metrics gpu__time_duration.sum,smsp__inst_executed.sum \
      --launch-skip 10 --launch-count 5 --csv $A/$v/bench_ptx --benchmark_filter="$f" --benchmark_min_time=0.05 2>&1 |
      awk -F'","' '/gpu__time_duration|inst_executed/ { sub(/\(.*/, "", $5); gsub(/"/, "", $NF); gsub(/,/, "", $NF); printf "%-32s %-26s %10s\n", $5, $(NF-2), $NF }'
  done
done > $OUT/kernel_times_per_warp.txt 2>&1
grep comb $OUT/kernel_times_per_warp.txt
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 99 $A/new2/ptx_backend_test --gtest_filter='PtxAncestors.*:PtxForms.*:PtxConversions.*-*EqualCpuAndCudaBitForBit*:*LargeEqual*:*TwoSlices*:*Repeated*:*DeviceStepAndGate*' > $OUT/s1.txt 2>&1
  echo "$tool backend rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|tests? ran|PASSED|FAILED' $OUT/s1.txt | tr '\n' ' ')"
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 99 $A/new2/ptx_parity_test --gtest_filter='*DoubleInt32*' > $OUT/s1.txt 2>&1
  echo "$tool parity rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|tests? ran|PASSED|FAILED' $OUT/s1.txt | tr '\n' ' ')"
done > $OUT/sanitizers.txt 2>&1
rm -f $OUT/s1.txt
cat $OUT/sanitizers.txt
