#!/bin/bash
# session 36, run 8: the final code (e1959f3 + the comb's warp writer inlined): the tests and sanitizers
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
A=$PWD/.ab
( timeout 100 $A/new/ptx_parity_test 2>&1 | tail -3 ) > $OUT/ptx_parity_test_writer_inline.txt
grep -E "PASSED|FAILED" $OUT/ptx_parity_test_writer_inline.txt
( timeout 120 $A/new/ptx_backend_test 2>&1 | tail -8 ) > $OUT/ptx_backend_test_writer_inline.txt
grep -E "PASSED|FAILED|SKIPPED" $OUT/ptx_backend_test_writer_inline.txt | head -3
for tool in memcheck racecheck synccheck; do
  timeout 80 compute-sanitizer --tool $tool --error-exitcode 99 $A/new/ptx_backend_test --gtest_filter='PtxAncestors.*:PtxForms.*:PtxConversions.*-*EqualCpuAndCudaBitForBit*:*LargeEqual*:*TwoSlices*:*Repeated*:*DeviceStepAndGate*' > $OUT/s1.txt 2>&1
  echo "$tool backend rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $OUT/s1.txt | tr '\n' ' ')"
  timeout 80 compute-sanitizer --tool $tool --error-exitcode 99 $A/new/ptx_parity_test --gtest_filter='*DoubleInt32*' > $OUT/s1.txt 2>&1
  echo "$tool parity rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $OUT/s1.txt | tr '\n' ' ')"
done > $OUT/sanitizers_writer_inline.txt 2>&1
rm -f $OUT/s1.txt
cat $OUT/sanitizers_writer_inline.txt
