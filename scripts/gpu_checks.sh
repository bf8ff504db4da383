#!/usr/bin/env bash
# The GPU machine's correctness run, in one call: build the CUDA targets (Release, sm_90 unless
# CUDA_ARCH says otherwise), the GPU tests (ctest -L gpu; the CPU tests are CI's), compute-sanitizer
# memcheck, racecheck and synccheck on the GPU tests, and the command line's output digests on
# cuda against cpu. Logs under OUT.
#   usage: OUT=dir scripts/gpu_checks.sh
source "$(dirname "$0")/gpu_common.sh"
log="$out/checks.txt"
{
  gpu_configure_and_build resample core_device_test cuda_backend_test cuda_parity_test cuda_backend_api_test \
    bpf_cuda_test bpf_cuda_fast_test fast_moves_test ptx_backend_test ptx_parity_test litmus bench_cuda bench_bpf \
    bench_ptx cli_test
  echo "== ctest -L gpu"
  (cd "$build" && timeout 240 ctest -L gpu -j 4 --output-on-failure >"$out/ctest_gpu.txt" 2>&1)
  grep -E 'tests passed|\*\*\*|Total Test' "$out/ctest_gpu.txt" | head -40
  grep -E -A4 'Failure' "$out/ctest_gpu.txt" | head -60
} >"$log" 2>&1

# Sanitizers on the GPU tests (the cases: sanitizer_filter in gpu_common.sh).
san="$out/sanitizers.txt"
: >"$san"
tools="memcheck racecheck synccheck"
[ -n "${QUICK_SANITIZERS:-}" ] && tools="memcheck"  # when device time is short: memcheck of the backend test
for tool in $tools; do
  tests="cuda_backend_test cuda_parity_test bpf_cuda_test bpf_cuda_fast_test fast_moves_test ptx_backend_test"
  tests="$tests ptx_parity_test"
  [ "$tool" = memcheck ] && tests="$tests cuda_backend_api_test"
  [ -n "${QUICK_SANITIZERS:-}" ] && tests="cuda_backend_test"
  for t in $tests; do
    limit=70
    [ "$t" = bpf_cuda_test ] && limit=400  # racecheck: the filter's clusters take 24-47 s a configuration
    run_sanitizer "$tool" "$t" "$(sanitizer_filter "$tool" "$t")" "$limit" >>"$san"
  done
done

# The memory-model litmus tests (also in ctest -L gpu, with fewer iterations): the full table.
"$build/bin/litmus" --iterations 8000000 --csv "$out/litmus.csv" >"$out/litmus.txt" 2>&1

# The same bits from the command line: digests of 5 draws of every scheme on cuda and cpu (and ptx
# for the schemes it has; the others are refused, with the reason).
print_digests "multinomial multinomial-sorted stratified systematic residual ssp metropolis megopolis rejection" \
  "cpu cuda ptx" >"$out/digests.txt" 2>&1
echo "default backend: $(echo '1 2 3' | "$build/bin/resample" compare --reps 2 2>/dev/null | grep -i backend | head -1)" >>"$out/digests.txt"

# The particle filter from the command line: the GBP/USD data on cuda and cpu (the same
# log-likelihood bits), and the cuda run's plot.
for b in cuda cpu-parallel; do
  echo "== resample bpf --backend $b"
  "$build/bin/resample" bpf --data data/gbp_usd_1997_1999_returns.txt --n 65536 --backend "$b" --out "$out/bpf_$b" 2>&1
done >"$out/bpf_cli.txt"
cp "$out/bpf_cuda/bpf.svg" "$out/bpf_gbp_usd.svg" 2>/dev/null
