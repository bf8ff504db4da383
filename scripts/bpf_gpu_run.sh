#!/usr/bin/env bash
# The particle filter's GPU run, in parts given as arguments (default: checks, sanitizers, bench),
# logs under OUT:
#   checks      build (Release, sm_90), the filter's GPU tests (the exact filter against the CPU,
#               bpf_cuda_test; the fast mode, bpf_cuda_fast_test and fast_moves_test), and
#               `resample bpf` on GBP/USD with both precisions (bpf_checks.txt, bpf_cli.txt)
#   sanitizers  compute-sanitizer memcheck / racecheck / synccheck on those tests (or on SANITIZED,
#               a list of them), filtered by sanitizer_filter (bpf_sanitizers.txt)
#   bench       bench_bpf rows matching BPF_BENCH (default: cuda and cuda-fast, N = 2^18 .. 2^24)
#               (bench_bpf.txt)
#   profile     Nsight Compute on one gather_propagate launch (after 8) of the gated row matching
#               BPF_PROFILE (default bpf/cuda-fast/gated/16777216; gated rows: N = 2^18, 2^24):
#               ncu_details.txt, and where its instructions go (bpf_sass_regions.txt,
#               scripts/sass_regions.py, from source_sass.csv.gz)
#   times       every kernel's duration (Nsight Compute, boost clocks, warm caches) over 48 launches
#               (after 200) of the gated row matching BPF_TIMES (default bpf/cuda-fast/gated/16777216), whose
#               ticks launch the resampler's kernels every tick: bpf_kernel_times.txt
#   sass        the SASS of the fast SV gather_propagate kernels, with and without the jitter's code
#               (cuobjdump): bpf_fast_sass.txt
#   usage: OUT=dir scripts/bpf_gpu_run.sh checks bench
source "$(dirname "$0")/gpu_common.sh"
tests="fast_moves_test bpf_cuda_fast_test bpf_cuda_test"
parts=${*:-checks sanitizers bench}
for part in $parts; do
  case "$part" in
    checks)
      {
        # shellcheck disable=SC2086
        gpu_configure_and_build resample bench_bpf $tests || exit 1
        for t in $tests; do
          echo "== $t"
          run_gtest "$t" 400
        done
      } >"$out/bpf_checks.txt" 2>&1
      for precision in exact fast; do
        echo "== --precision $precision"
        "$build/bin/resample" bpf --data data/gbp_usd_1997_1999_returns.txt --mu -1.02 --rho 0.9702 --sigma 0.178 \
          --n 1048576 --backend cuda --precision "$precision" --out "$out/bpf_$precision" 2>&1 | grep -v '^$'
        rm -rf "$out/bpf_$precision"
      done >"$out/bpf_cli.txt" 2>&1
      ;;
    sanitizers)
      {
        # shellcheck disable=SC2086
        gpu_configure_and_build ${SANITIZED:-$tests} || exit 1
        for tool in memcheck racecheck synccheck; do
          for t in ${SANITIZED:-$tests}; do
            # racecheck runs the filter's clusters of 8 blocks slowly: 24-47 s a configuration
            run_sanitizer "$tool" "$t" "$(sanitizer_filter "$tool" "$t")" 400
          done
        done
      } >"$out/bpf_sanitizers.txt" 2>&1
      ;;
    bench)
      gpu_configure_and_build bench_bpf >"$out/bench_bpf.txt" 2>&1 || exit 1
      "$build/bin/bench_bpf" --benchmark_filter="${BPF_BENCH:-bpf/cuda(-fast)?/(262144|1048576|4194304|16777216)}" \
        >>"$out/bench_bpf.txt" 2>&1
      ;;
    profile)
      gpu_configure_and_build bench_bpf >"$out/ncu_build.txt" 2>&1 || exit 1
      rm -f "$out/ncu_build.txt"
      ncu_instruction_counts regex:gather_propagate 1 "${BPF_PROFILE:-bpf/cuda-fast/gated/16777216}" bench_bpf 8
      python3 scripts/sass_regions.py "$out/source_sass.csv" gather_propagate 16777216 >"$out/bpf_sass_regions.txt" 2>&1
      gzip -f "$out/source_sass.csv"  # every instruction with its counts: bpf_sass_regions.txt's source
      rm -f "$out/ncu_run.txt"
      ;;
    times)
      gpu_configure_and_build bench_bpf >"$out/bpf_kernel_times.txt" 2>&1 || exit 1
      TIMES_BINARY=bench_bpf TIMES_SKIP=200 TIMES_COUNT=48 TIMES_FILE=bpf_kernel_times.txt \
        kernel_times_from "${BPF_TIMES:-bpf/cuda-fast/gated/16777216}"
      ;;
    sass)
      gpu_configure_and_build bench_bpf >"$out/bpf_fast_sass.txt" 2>&1 || exit 1
      cuobjdump -sass "$build/bin/bench_bpf" |
        awk -v k='gather_propagate.*4fast8sv_moves' '$0 ~ "Function : .*" k { on = 1 }
          on && /Function : / && $0 !~ k { on = 0 } on' \
        >"$out/bpf_fast_sass.txt"
      ;;
    *) echo "unknown part '$part' (checks, sanitizers, bench, profile, times, sass)" >&2; exit 2 ;;
  esac
done
