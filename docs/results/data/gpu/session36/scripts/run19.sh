#!/bin/bash
# session 36, run 5: prev = febb7c9 (main); new = the comb's C before the warp loaded after its exps
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
A=$PWD/.ab
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvdisasm -c $A/new/comb_from_estimates.sm_90.cubin > $OUT/comb_sass_new.txt 2>&1
grep -n -B3 -A3 'STL' $OUT/comb_sass_new.txt | head -60
gzip $OUT/comb_sass_new.txt
( timeout 150 $A/new/ptx_parity_test 2>&1 | tail -3 ) > $OUT/ptx_parity_test.txt
grep -E "PASSED|FAILED" $OUT/ptx_parity_test.txt
( timeout 240 $A/new/ptx_backend_test 2>&1 | tail -8 ) > $OUT/ptx_backend_test.txt
grep -E "PASSED|FAILED|SKIPPED" $OUT/ptx_backend_test.txt | head -3
for round in 1 2; do for v in prev new; do
  echo "== $v round $round"
  timeout 100 $A/$v/bench_ptx --benchmark_filter='(ptx|cuda)/(systematic|stratified|multinomial_sorted)/' --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep -E 'median' | awk '{print $1, $2, $3}'
done; done > $OUT/ab_late_offsets.txt 2>&1
grep -E "==|ptx/(systematic|stratified|multinomial_sorted)/" $OUT/ab_late_offsets.txt | paste - - - - - - - - - - - - -
for f in 'ptx/systematic/16777216/' 'cuda/systematic/16777216/'; do
  for v in prev new; do
  [ "$f" = 'cuda/systematic/16777216/' ] && [ $v = new ] && continue
  echo "== $v $f"
  timeout 60 ncu --clock-control none --cache-control none --print-units base --kernel-name regex:comb --launch-skip 4 --launch-count 2 \
      --metrics gpu__time_duration.sum,smsp__inst_executed.sum,launch__shared_mem_config_size,l1tex__t_sector_hit_rate.pct,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active \
      --csv $A/$v/bench_ptx --benchmark_filter="$f" --benchmark_min_time=0.05 2>&1 |
      awk -F'","' '/comb/ { sub(/\(.*/, "", $5); gsub(/"/, "", $NF); gsub(/,/, "", $NF); printf "%-28s %-75s %12s\n", $5, $(NF-2), $NF }'
  done
done > $OUT/comb_metrics_late_offsets.txt 2>&1
cat $OUT/comb_metrics_late_offsets.txt
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 99 $A/new/ptx_backend_test --gtest_filter='PtxAncestors.*:PtxForms.*:PtxConversions.*-*EqualCpuAndCudaBitForBit*:*LargeEqual*:*TwoSlices*:*Repeated*:*DeviceStepAndGate*' > $OUT/s1.txt 2>&1
  echo "$tool backend rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|tests? ran|PASSED|FAILED' $OUT/s1.txt | tr '\n' ' ')"
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 99 $A/new/ptx_parity_test --gtest_filter='*DoubleInt32*' > $OUT/s1.txt 2>&1
  echo "$tool parity rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|tests? ran|PASSED|FAILED' $OUT/s1.txt | tr '\n' ' ')"
done > $OUT/sanitizers.txt 2>&1
rm -f $OUT/s1.txt
cat $OUT/sanitizers.txt
