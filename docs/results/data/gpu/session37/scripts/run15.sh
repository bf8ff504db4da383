#!/usr/bin/env bash
# Session 37's reread, run 15: the PTX backend after 94c7c05 (SSP's offspring form carves no
# look-back flags). ptx_parity_test's SSP and residual cases and ptx_backend_test's split tests,
# then memcheck on them (an access beyond the carved storage would show there).
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
out=${OUT:-out}
b=.ab/ptx/bin
{
  $b/ptx_parity_test --gtest_filter='*ssp*:*residual*' 2>&1 | grep -E '^\[  PASSED|^\[  FAILED|tests ran'
  $b/ptx_backend_test --gtest_filter='PtxSplit.*:PtxForms.*' 2>&1 | grep -E '^\[  PASSED|^\[  FAILED|tests ran'
  for t in "ptx_parity_test *DoubleInt32/ssp:*DoubleInt32/residual:*WithZeroWeights/ssp" "ptx_backend_test PtxSplit.*"; do
    set -- $t
    timeout 240 compute-sanitizer --tool memcheck --error-exitcode 99 $b/$1 --gtest_filter="$2" 2>&1 |
      grep -E 'ERROR SUMMARY|^\[  PASSED|^\[  FAILED' | tr '\n' ' ' | sed "s|^|memcheck $1 $2: |"
    echo
  done
} 2>&1 | tee "$out/ptx_ssp_flags.txt"
