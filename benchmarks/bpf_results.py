#!/usr/bin/env python3
"""bench_bpf's JSON to the table and plot of docs/results/bpf.md.

usage: benchmarks/bpf_results.py --bench bench_bpf.json --out-dir DIR
writes DIR/bpf_table.md and the plot: DIR/bpf_time_vs_n.png where matplotlib is installed, else
DIR/bpf_time_vs_n.svg (written here, without dependencies).
"""
from __future__ import annotations

import argparse
import json
import math
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


def roofline(r: dict[str, dict[int, dict]]) -> list[tuple[int, float]]:
    """24 bytes per particle at the copy bandwidth measured in the run, over the GPU rows' N."""
    copy = next((d["copy"] for b in ("cuda", "cuda-fast") for d in r.get(b, {}).values() if d.get("copy")), None)
    if not copy:
        return []
    ns = sorted({n for b in ("cuda", "cuda-fast", "ptx") for n in r.get(b, {})})
    return [(n, 24 * n / (copy * 1e3)) for n in ns]


SVG_COLOURS = {"cuda": "#1f77b4", "cuda-fast": "#ff7f0e", "ptx": "#2ca02c", "cpu-parallel": "#d62728"}


def svg_plot(r: dict[str, dict[int, dict]], out_dir: str) -> str:
    """The same plot as an SVG, log-log, for machines without matplotlib."""
    series = [(b, sorted((n, d["us_per_tick"]) for n, d in r.get(b, {}).items())) for b, _ in BACKENDS]
    series = [(b, pts) for b, pts in series if pts]
    pts_all = [p for _, pts in series for p in pts]
    if not pts_all:
        return ""
    x0, x1 = min(math.log2(n) for n, _ in pts_all), max(math.log2(n) for n, _ in pts_all)
    y0 = math.floor(math.log10(min(v for _, v in pts_all)))
    y1 = math.ceil(math.log10(max(v for _, v in pts_all)))
    roof = [(n, t) for n, t in roofline(r) if t >= 10 ** y0]  # the measured rows' range only
    w, h, left, right, top, bottom = 720, 460, 70, 180, 40, 50
    px = lambda n: left + (math.log2(n) - x0) / max(x1 - x0, 1) * (w - left - right)
    py = lambda v: top + (y1 - math.log10(v)) / max(y1 - y0, 1) * (h - top - bottom)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
           'font-size="12">', f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{(w - right + left) / 2}" y="22" text-anchor="middle" font-size="14">'
           'SV filter (Student-t noise), one tick</text>']
    for e in range(y0, y1 + 1):
        y = py(10 ** e)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{w - right}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{10 ** e:g}</text>')
    for k in range(math.ceil(x0), math.floor(x1) + 1, 2):
        x = px(2 ** k)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{h - bottom}" stroke="#ddd"/>')
        out.append(f'<text x="{x:.1f}" y="{h - bottom + 16}" text-anchor="middle">2^{k}</text>')
    out.append(f'<text x="{(w - right + left) / 2}" y="{h - 10}" text-anchor="middle">particles N</text>')
    out.append(f'<text x="16" y="{(h - bottom + top) / 2}" text-anchor="middle" '
               f'transform="rotate(-90 16 {(h - bottom + top) / 2})">us per tick</text>')
    lines = [(b, pts, SVG_COLOURS[b], "") for b, pts in series]
    if roof:
        lines.append(("24 B per particle at copy BW", roof, "grey", ' stroke-dasharray="3,3"'))
    for i, (name, pts, colour, dash) in enumerate(lines):
        path = " ".join(f"{px(n):.1f},{py(v):.1f}" for n, v in pts)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        if not dash:
            out += [f'<circle cx="{px(n):.1f}" cy="{py(v):.1f}" r="3" fill="{colour}"/>' for n, v in pts]
        ly = top + 10 + 18 * i
        out.append(f'<line x1="{w - right + 12}" y1="{ly}" x2="{w - right + 36}" y2="{ly}" stroke="{colour}" '
                   f'stroke-width="2"{dash}/>')
        out.append(f'<text x="{w - right + 42}" y="{ly + 4}" font-size="11">{name}</text>')
    out.append("</svg>")
    path = os.path.join(out_dir, "bpf_time_vs_n.svg")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return path


def plot(r: dict[str, dict[int, dict]], out_dir: str) -> str:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return svg_plot(r, out_dir)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for backend, style in BACKENDS:
        pts = sorted(r.get(backend, {}).items())
        if pts:
            ax.plot([n for n, _ in pts], [d["us_per_tick"] for _, d in pts], style, label=backend)
    roof = roofline(r)
    if roof:
        ax.plot([n for n, _ in roof], [t for _, t in roof], ":", color="grey",
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
