#!/usr/bin/env python3
"""bench_bpf's JSON to the table and plot of docs/results/bpf.md.

usage: benchmarks/bpf_results.py --bench bench_bpf.json --out-dir DIR
writes DIR/bpf_table.md and, where matplotlib is installed, DIR/bpf_time_vs_n.png.
"""
from __future__ import annotations

import argparse
import json
import os

def nfmt(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else f"{n:,}"


def rows(path: str) -> dict[str, dict[int, dict]]:
    with open(path) as f:
        data = json.load(f)
    out: dict[str, dict[int, dict]] = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue
        parts = b["name"].split("/")  # bpf/<backend>/<N>/manual_time (bpf/<backend>/gated/<N>: for Nsight)
        if not parts[2].isdigit():
            continue
        backend, n = parts[1], int(parts[2])
        out.setdefault(backend, {})[n] = {
            "us_per_tick": b["us_per_tick"],
            "pticks": b["items_per_second"],
            "pct24": b.get("pct_copy_bw_24B"),
            "copy": b.get("copy_GBps"),
        }
    return out


BACKENDS = (("cuda", "o-"), ("cuda-fast", "^-"), ("ptx", "d-."), ("cpu-parallel", "s--"))


def table(r: dict[str, dict[int, dict]]) -> str:
    """Microseconds per tick for each backend run, then the GPU rows' particle-ticks/s and % of the
    copy bandwidth at the issue's 24 bytes per particle-tick."""
    ns = sorted({n for v in r.values() for n in v})
    present = [b for b, _ in BACKENDS if b in r]
    gpu = [b for b in present if b != "cpu-parallel"]
    cell = lambda d, k, f: f(d[k]) if d and d.get(k) is not None else "–"
    lines = ["| N | " + " | ".join(f"{b} us/tick" for b in present) + " |",
             "|---|" + "---:|" * len(present)]
    for n in ns:
        lines.append(f"| {nfmt(n)} | " + " | ".join(
            cell(r[b].get(n), "us_per_tick", lambda x: f"{x:,.1f}") for b in present) + " |")
    lines += ["", "| N | " + " | ".join(f"{b} particle-ticks/s | {b} % of copy BW at 24 B" for b in gpu) + " |",
              "|---|" + "---:|---:|" * len(gpu)]
    for n in ns:
        lines.append(f"| {nfmt(n)} | " + " | ".join(
            cell(r[b].get(n), "pticks", lambda x: f"{x / 1e9:.2f} G") + " | " +
            cell(r[b].get(n), "pct24", lambda x: f"{x:.1f}%") for b in gpu) + " |")
    return "\n".join(lines) + "\n"


def plot(r: dict[str, dict[int, dict]], out_dir: str) -> str:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for backend, style in BACKENDS:
        pts = sorted(r.get(backend, {}).items())
        if pts:
            ax.plot([n for n, _ in pts], [d["us_per_tick"] for _, d in pts], style, label=backend)
    copy = next((d["copy"] for b in ("cuda", "cuda-fast") for d in r.get(b, {}).values() if d.get("copy")), None)
    if copy:
        ns = sorted({n for b in ("cuda", "cuda-fast", "ptx") for n in r.get(b, {})})
        ax.plot(ns, [24 * n / (copy * 1e3) for n in ns], ":", color="grey",
                label="24 B per particle at the copy bandwidth")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("particles N")
    ax.set_ylabel("us per tick")
    ax.set_title("SV filter (Student-t noise), one tick")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    path = os.path.join(out_dir, "bpf_time_vs_n.png")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--out-dir", required=True)
    a = ap.parse_args()
    r = rows(a.bench)
    os.makedirs(a.out_dir, exist_ok=True)
    with open(os.path.join(a.out_dir, "bpf_table.md"), "w") as f:
        f.write(table(r))
    print(table(r), end="")
    p = plot(r, a.out_dir)
    if p:
        print("plot:", p)


if __name__ == "__main__":
    main()
