#!/usr/bin/env python3
"""Combine our CUDA Google Benchmark JSON with benchmarks/peers.py's JSON: tables and a plot.

usage: benchmarks/gpu_results.py --ours bench_cuda.json --peers peers.json --out-dir DIR
writes DIR/gpu_table.md and DIR/gpu_time_vs_n.png (or .svg, drawn by hand, without matplotlib).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
from collections import defaultdict
from typing import Any

REF = "torch-f32-searchsorted"
SCHEMES = ["systematic", "stratified", "multinomial-sorted", "multinomial"]
PEERS = [REF, "torch-f64-searchsorted", "torch-multinomial", "jax-searchsorted", "jax-choice", "cupy-searchsorted"]
TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
ROOF_BYTES = 12  # bytes per particle: 8 read (log-weight) + 4 written (ancestor)

Row = dict[str, Any]  # label, n, us, items (1/s), bytes (per particle), pct (of copy bw), ours, scheme, timer, skipped


def nfmt(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else f"{n:,}"


def parse_name(name: str) -> tuple[str, int | None, str | None, tuple[str, str]]:
    """-> (label, N, scheme, (type, cdf)) from cuda/<scheme>/<type>/<cdf>/<N>/manual_time, tolerantly."""
    f = name.split("/")
    if len(f) >= 5 and f[0] == "cuda" and f[4].isdigit():
        return f"ours {f[1]} ({f[2]}, {f[3]})", int(f[4]), f[1], (f[2], f[3])
    nums = [int(x) for x in f if x.isdigit()]
    return name, (nums[-1] if nums else None), None, ("", "")


def load_ours(path: str, copy_bw: float | None) -> list[Row]:
    entries = json.load(open(path)).get("benchmarks", [])
    runs: dict[str, list[dict]] = defaultdict(list)
    medians: dict[str, dict] = {}
    for b in entries:
        key = b.get("run_name", b["name"])
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[key] = b
        elif not b.get("error_occurred"):
            runs[key].append(b)
    rows = []
    for key in list(dict.fromkeys(list(runs) + list(medians))):
        if key in medians:
            b = medians[key]
        else:  # repetitions without aggregates: the entry with the median time
            b = sorted(runs[key], key=lambda e: e["real_time"])[(len(runs[key]) - 1) // 2]
        label, n, scheme, variant = parse_name(key)
        us = b["real_time"] * TO_US.get(b.get("time_unit", "ns"), 1e-3)
        items = b.get("items_per_second") or (n / (us * 1e-6) if n else None)
        per_call = b.get("bytes_moved") or (b["bytes_per_second"] * us * 1e-6 if b.get("bytes_per_second") else None)
        per_part = per_call / n if per_call and n else None
        bw = b.get("copy_GBps") or copy_bw
        # Always from the median time: bytes moved per call / time / copy bandwidth.
        pct = 100 * per_call / (us * 1e-6) / (bw * 1e9) if per_call and bw else None
        rows.append({"label": label, "n": n, "us": us, "items": items, "bytes": per_part, "pct": pct,
                     "ours": True, "scheme": scheme, "variant": variant, "timer": "cuda-events", "skipped": None})
    return rows


def load_peers(path: str) -> tuple[dict, list[Row]]:
    doc = json.load(open(path))
    rows = [{"label": r["impl"], "n": r["n"], "us": r.get("median_us"), "ours": False, "scheme": None,
             "items": r["n"] / (r["median_us"] * 1e-6) if r.get("median_us") else None, "bytes": None, "pct": None,
             "timer": r.get("timer", ""), "skipped": r.get("skipped")} for r in doc.get("results", [])]
    return doc, rows


def headline(ours: list[Row]) -> list[str]:
    """One label per scheme, preferring the float / exact-CDF variant, then the most sizes covered."""
    labels = []
    count: dict[str, int] = defaultdict(int)
    for r in ours:
        count[r["label"]] += 1
    for s in SCHEMES:
        cands = {r["label"]: r["variant"] for r in ours if r["scheme"] == s}
        if cands:
            labels.append(max(cands, key=lambda l: (cands[l][0] == "float", cands[l][1] == "exact", count[l], l)))
    return labels


def order(r: Row) -> tuple:
    """Ours first, by scheme (SCHEMES order), then peers (PEERS order)."""
    idx = SCHEMES.index(r["scheme"]) if r["scheme"] in SCHEMES else len(SCHEMES)
    return (not r["ours"], idx, PEERS.index(r["label"]) if r["label"] in PEERS else len(PEERS), r["label"])


def cell(x: float | None, fmt: str) -> str:
    return "–" if x is None else format(x, fmt)


def table(rows: list[Row], device: str, bw: float | None) -> str:
    by_n: dict[int, dict[str, Row]] = defaultdict(dict)
    for r in rows:
        if r["n"] is not None:
            by_n[r["n"]][r["label"]] = r
    ours = [r for r in rows if r["ours"]]
    cols = headline(ours) + [p for p in PEERS if any(r["label"] == p for r in rows)]
    out = [f"# GPU resampling on {device}", "",
           f"Device-to-device copy bandwidth (1 GiB, read + write): {cell(bw, ',.0f')} GB/s. "
           "Ours and torch/CuPy peers: CUDA events; JAX: host timer around `block_until_ready`. "
           "Times are medians per call, log-weights in device memory to ancestors in device memory.", "",
           "## Time per call (µs)", "", "| N | " + " | ".join(cols) + " |", "|---:|" + "---:|" * len(cols)]
    for n in sorted(by_n):
        cells = [cell(by_n[n][c]["us"], ",.1f") if c in by_n[n] and not by_n[n][c]["skipped"] else "–" for c in cols]
        if set(cells) == {"–"}:
            continue
        out.append(f"| {nfmt(n)} | " + " | ".join(cells) + " |")
    for n in sorted(by_n):
        ref = by_n[n].get(REF, {}).get("us")
        out += ["", f"## N = {nfmt(n)}", "", "| implementation | time (µs) | items/s (G/s) | bytes/particle | "
                f"% of copy BW | speed-up over {REF} |", "|---|---:|---:|---:|---:|---:|"]
        for r in sorted(by_n[n].values(), key=order):
            name = r["label"] + (" (host timer)" if r["timer"] == "host" else "")
            if r["skipped"]:
                out.append(f"| {name} | skipped: {r['skipped'].replace('|', '/')} | | | | |")
                continue
            speed = f"{ref / r['us']:.1f}x" if r["ours"] and ref and r["us"] else "–"
            out.append(f"| {name} | {cell(r['us'], ',.1f')} | {cell(r['items'] and r['items'] / 1e9, '.3g')} | "
                       f"{cell(r['bytes'], '.3g')} | {cell(r['pct'], '.3g')} | {speed} |")
    other = [r for r in rows if r["n"] is None]
    if other:
        out += ["", "## Other entries", "", "| name | time (µs) |", "|---|---:|"]
        out += [f"| {r['label']} | {cell(r['us'], ',.1f')} |" for r in other]
    return "\n".join(out) + "\n"


def series(rows: list[Row]) -> list[tuple[str, bool, list[tuple[int, float]]]]:
    lines: dict[str, list] = defaultdict(list)
    ours = {}
    for r in rows:
        if r["n"] and r["us"] and not r["skipped"] and (r["scheme"] or not r["ours"]):  # odd-shaped names: table only
            lines[r["label"]].append((r["n"], r["us"]))
            ours[r["label"]] = r["ours"]
    # Our single-call schemes only (four sizes or more): one-size sweeps (Metropolis vs B or y), the
    # batched call and graph replays stay in the tables.
    keep = {k: v for k, v in lines.items() if not ours[k] or len(v) >= 4}
    return [(k, ours[k], sorted(v)) for k, v in sorted(keep.items(), key=lambda kv: (not ours[kv[0]], kv[0]))]


def plot(rows: list[Row], device: str, bw: float | None, stem: str) -> str:
    lines = series(rows)
    ns = sorted({n for _, _, pts in lines for n, _ in pts})
    if bw and ns:
        lines.append((f"roofline: {ROOF_BYTES} B/particle at {bw:,.0f} GB/s", None,
                      [(n, ROOF_BYTES * n / (bw * 1e9) * 1e6) for n in ns]))
    title = f"Resampling time vs N on {device}"
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return svg(lines, title, stem + ".svg")
    fig, ax = plt.subplots(figsize=(11, 6.5))
    n_ours = sum(1 for _, o, _ in lines if o)
    for i, (label, ours, pts) in enumerate(lines):
        style = "-" if ours else (":" if ours is None else "--")
        color = "black" if ours is None else matplotlib.colormaps["tab10"]((i if ours else i - n_ours) % 10)
        ax.plot(*zip(*pts), style, marker="o" if ours else "s", ms=3, label=label, color=color,
                lw=1.8 if ours else 1.2)
    ax.set(xscale="log", yscale="log", xlabel="N (particles)", ylabel="time per call (µs)", title=title)
    measured = [t for _, o, pts in lines if o is not None for _, t in pts]
    if measured:
        ax.set_ylim(bottom=min(measured) / 3)
    ax.set_xscale("log", base=2)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    fig.savefig(stem + ".png", dpi=130)
    return stem + ".png"


def svg(lines: list, title: str, path: str) -> str:
    """Minimal log-log line chart as hand-written SVG."""
    W, H, L, R, T, B = 1000, 600, 70, 330, 40, 50
    pts = [p for _, _, ps in lines for p in ps]
    if not pts:
        pts = [(1, 1), (10, 10)]
    x0, x1 = math.floor(math.log10(min(p[0] for p in pts))), math.ceil(math.log10(max(p[0] for p in pts)))
    y0, y1 = math.floor(math.log10(min(p[1] for p in pts))), math.ceil(math.log10(max(p[1] for p in pts)))
    x1, y1 = max(x1, x0 + 1), max(y1, y0 + 1)
    px = lambda x: L + (math.log10(x) - x0) / (x1 - x0) * (W - L - R)  # noqa: E731
    py = lambda y: H - B - (math.log10(y) - y0) / (y1 - y0) * (H - T - B)  # noqa: E731
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{(W - R + L) / 2}" y="22" text-anchor="middle" font-size="14">{esc(title)}</text>',
         f'<text x="{(W - R + L) / 2}" y="{H - 10}" text-anchor="middle">N (particles)</text>',
         f'<text x="16" y="{(H - B + T) / 2}" transform="rotate(-90 16 {(H - B + T) / 2})" text-anchor="middle">time per call (µs)</text>']
    for e in range(x0, x1 + 1):
        s.append(f'<line x1="{px(10 ** e):.1f}" y1="{T}" x2="{px(10 ** e):.1f}" y2="{H - B}" stroke="#ddd"/>'
                 f'<text x="{px(10 ** e):.1f}" y="{H - B + 15}" text-anchor="middle">1e{e}</text>')
    for e in range(y0, y1 + 1):
        s.append(f'<line x1="{L}" y1="{py(10 ** e):.1f}" x2="{W - R}" y2="{py(10 ** e):.1f}" stroke="#ddd"/>'
                 f'<text x="{L - 5}" y="{py(10 ** e) + 4:.1f}" text-anchor="end">1e{e}</text>')
    s.append(f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" fill="none" stroke="black"/>')
    for i, (label, ours, ps) in enumerate(lines):
        color = "black" if ours is None else colors[i % len(colors)]
        dash = "" if ours else ' stroke-dasharray="2,3"' if ours is None else ' stroke-dasharray="7,4"'
        path_pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in ps)
        ly = T + 10 + 16 * i
        s.append(f'<polyline points="{path_pts}" fill="none" stroke="{color}" stroke-width="1.8"{dash}/>'
                 f'<line x1="{W - R + 12}" y1="{ly}" x2="{W - R + 40}" y2="{ly}" stroke="{color}" stroke-width="1.8"{dash}/>'
                 f'<text x="{W - R + 46}" y="{ly + 4}">{esc(label)}</text>')
    s.append("</svg>")
    open(path, "w").write("\n".join(s) + "\n")
    return path


def esc(t: str) -> str:
    return t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ours", required=True, help="Google Benchmark JSON (--benchmark_out_format=json)")
    ap.add_argument("--peers", required=True, help="JSON written by benchmarks/peers.py")
    ap.add_argument("--out-dir", required=True)
    args = ap.parse_args()
    doc, peer_rows = load_peers(args.peers)
    ours_doc = json.load(open(args.ours))
    bw = doc.get("copy_bandwidth_GBps")
    if bw is None:  # fall back on our own benchmark's copy-bandwidth counter
        ours_bw = [b["copy_GBps"] for b in ours_doc.get("benchmarks", []) if b.get("copy_GBps")]
        bw = statistics.median(ours_bw) if ours_bw else None
    rows = load_ours(args.ours, bw) + peer_rows
    device = doc.get("device") or ours_doc.get("context", {}).get("host_name", "unknown device")
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "gpu_table.md"), "w") as f:
        f.write(table(rows, device, bw))
    figure = plot(rows, device, bw, os.path.join(args.out_dir, "gpu_time_vs_n"))
    print(f"wrote {os.path.join(args.out_dir, 'gpu_table.md')} and {figure}")


if __name__ == "__main__":
    main()
