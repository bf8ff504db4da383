#!/bin/bash
# session 36, run 7: prev = e1959f3 (main, the final code); new = the comb's per-warp Code 8 writer
# written out in place (// inline) instead of called
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
A=$PWD/.ab
for round in 1 2; do for v in prev new; do
  echo "== $v round $round"
  timeout 50 $A/$v/bench_ptx --benchmark_filter='ptx/(systematic|stratified)/(65536|16777216)/' --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep -E 'median' | awk '{print $1, $2, $3}'
done; done > $OUT/ab_writer_inline.txt 2>&1
cat $OUT/ab_writer_inline.txt | paste - - - - -
for v in prev new; do
  echo "== $v"
  timeout 50 ncu --clock-control none --cache-control none --print-units base --kernel-name regex:comb --launch-skip 4 --launch-count 2 \
      --metrics gpu__time_duration.sum,smsp__inst_executed.sum --csv $A/$v/bench_ptx --benchmark_filter='ptx/systematic/16777216/' --benchmark_min_time=0.05 2>&1 |
      awk -F'","' '/comb/ { gsub(/"/, "", $NF); gsub(/,/, "", $NF); printf "%-40s %12s\n", $(NF-2), $NF }'
done > $OUT/comb_times_writer_inline.txt 2>&1
cat $OUT/comb_times_writer_inline.txt
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 99 $A/new/ptx_backend_test --gtest_filter='PtxAncestors.CombMarginCovers*:PtxAncestors.BadInput*' > $OUT/s1.txt 2>&1
echo "new racecheck rc=$? $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' $OUT/s1.txt | tr '\n' ' ')"
