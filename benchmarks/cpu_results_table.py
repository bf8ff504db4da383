#!/usr/bin/env python3
"""Markdown tables for docs/results/cpu.md from benchmarks/run_cpu_benchmarks.sh's output.

usage: benchmarks/cpu_results_table.py DIR   (DIR holds bench_cpu.json and threads.txt)
"""
import json
import re
import sys
from collections import defaultdict

out_dir = sys.argv[1]
runs = json.load(open(f"{out_dir}/bench_cpu.json"))["benchmarks"]
times = defaultdict(dict)  # (scheme, variant) -> {(backend, n): us}
for b in runs:
    m = re.match(r"(cpu|cpu-parallel)/([a-z-]+)(/float32_cdf)?/(\d+)", b["name"])
    backend, scheme, variant, n = m.group(1), m.group(2), "float32 CDF" if m.group(3) else "exact", int(m.group(4))
    assert b["time_unit"] == "us"
    times[(scheme, variant)][(backend, n)] = b["real_time"]

sizes = sorted({n for t in times.values() for (_, n) in t})
print("| scheme | CDF | N | cpu (µs) | cpu-parallel, 16 threads (µs) | speed-up | cpu-parallel particles/s |")
print("|---|---|---:|---:|---:|---:|---:|")
for (scheme, variant), t in times.items():
    for n in sizes:
        serial, par = t.get(("cpu", n)), t.get(("cpu-parallel", n))
        if par is None:
            continue
        speed = f"{serial / par:.1f}x" if serial else "–"
        print(f"| {scheme} | {variant} | 2^{n.bit_length() - 1} | {serial:,.0f} | {par:,.0f} | {speed} | {n / par * 1e6:.3g} |"
              if serial else f"| {scheme} | {variant} | 2^{n.bit_length() - 1} | – | {par:,.0f} | – | {n / par * 1e6:.3g} |")

print()
print("| scheme (N = 2^24) | 1 | 2 | 4 | 8 | 16 threads | speed-up at 16 | per thread |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
sweep = defaultdict(dict)
for line in open(f"{out_dir}/threads.txt"):
    m = re.match(r"threads=(\d+) cpu-parallel/([a-z-]+)/\d+/real_time\s+([\d.]+) us", line)
    if m:
        sweep[m.group(2)][int(m.group(1))] = float(m.group(3)) / 1000
for scheme, t in sweep.items():
    cells = " | ".join(f"{t[k]:,.0f} ms" for k in (1, 2, 4, 8, 16))
    print(f"| {scheme} | {cells} | {t[1] / t[16]:.1f}x | {t[1] / t[16] / 16:.2f} |")
