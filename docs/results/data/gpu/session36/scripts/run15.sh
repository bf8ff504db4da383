#!/bin/bash
# session 36, run 1: prev = 3f0d086 (main); new = the comb's warps on a chain (named barriers), the
# multinomial's look-back flags only where a scan looks back
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
A=$PWD/.ab
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $OUT/device.txt
for v in prev new; do
  nvdisasm -c $A/$v/comb_from_estimates.sm_90.cubin > $OUT/comb_sass_$v.txt 2>&1
  echo "$v SASS: $(grep -c 'STL' $OUT/comb_sass_$v.txt) STL, $(grep -c 'LDL' $OUT/comb_sass_$v.txt) LDL, $(grep -c 'BAR' $OUT/comb_sass_$v.txt) BAR"
done
gzip $OUT/comb_sass_*.txt
( timeout 150 $A/new/ptx_parity_test 2>&1 | tail -3 ) > $OUT/ptx_parity_test.txt
grep -E "PASSED|FAILED" $OUT/ptx_parity_test.txt
( timeout 240 $A/new/ptx_backend_test 2>&1 | tail -8 ) > $OUT/ptx_backend_test.txt
grep -E "PASSED|FAILED|SKIPPED" $OUT/ptx_backend_test.txt | head -3
for round in 1 2; do for v in prev new; do
  echo "== $v round $round"
  timeout 100 $A/$v/bench_ptx --benchmark_filter='(ptx|cuda)/(systematic|stratified|multinomial|multinomial_sorted)/' --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep -E 'median' | awk '{print $1, $2, $3}'
done; done > $OUT/ab_chain.txt 2>&1
grep -E "==|ptx/(systematic|stratified|multinomial)/" $OUT/ab_chain.txt
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 99 $A/new/ptx_backend_test --gtest_filter='PtxAncestors.*:PtxForms.*:PtxConversions.*-*EqualCpuAndCudaBitForBit*:*LargeEqual*:*TwoSlices*:*Repeated*:*DeviceStepAndGate*' > $OUT/s1.txt 2>&1
  echo "$tool backend rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|tests? ran|PASSED|FAILED' $OUT/s1.txt | tr '\n' ' ')"
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 99 $A/new/ptx_parity_test --gtest_filter='*DoubleInt32*' > $OUT/s1.txt 2>&1
  echo "$tool parity rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|tests? ran|PASSED|FAILED' $OUT/s1.txt | tr '\n' ' ')"
done > $OUT/sanitizers.txt 2>&1
rm -f $OUT/s1.txt
cat $OUT/sanitizers.txt
