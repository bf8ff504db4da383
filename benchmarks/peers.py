#!/usr/bin/env python3
"""Time peer libraries' GPU resamplers (PyTorch, JAX, CuPy) next to our own CUDA benchmark.

Each peer turns N log-weights in device memory into N ancestor indices in device memory.
usage: benchmarks/peers.py [--sizes 10,12,...] [--reps 50] [--out peers.json]
Results go to --out as JSON (see benchmarks/gpu_results.py); a table goes to stdout and
progress to stderr. Libraries that are missing or fail are skipped with the reason.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # before jax is imported

Step = Callable[[], Any]
BUDGET_S = 3.0  # rough wall-clock budget per (impl, N), warm-ups included
WARMUPS = 5


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def short(e: BaseException) -> str:
    """One-line reason for a failure, flagging out-of-memory."""
    text = (str(e).strip().splitlines() or [""])[0][:200]
    oom = any(s in str(e).lower() for s in ("out of memory", "resource_exhausted", "outofmemory"))
    return ("out of memory: " if oom else "") + f"{type(e).__name__}: {text}"


@dataclass
class Lib:
    """One library: its implementations (name -> make(n) -> step) and how to time them."""
    timer: str                                         # "cuda-events" or "host"
    impls: dict[str, Callable[[int], Step]]
    wait: Callable[[Any], None]                        # block until a step's output is ready
    measure: Callable[[Step, int], list[float]]        # step, reps -> per-call microseconds
    free: Callable[[], None]
    max_n: dict[str, tuple[int, str]] = field(default_factory=dict)


def torch_lib() -> Lib:
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("torch.cuda.is_available() is False (no CUDA device or CPU-only build)")
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev)
    gen.manual_seed(0)

    def lw(n: int, dt: Any) -> Any:
        return torch.randn(n, device=dev, dtype=dt, generator=gen) * 2

    def searchsorted(dt: Any) -> Callable[[int], Step]:
        def make(n: int) -> Step:
            x = lw(n, dt)

            def step() -> Any:
                c = torch.cumsum(torch.exp(x - x.max()), 0)
                u = (torch.arange(n, device=dev, dtype=dt) + torch.rand(1, device=dev, dtype=dt)) / n * c[-1]
                return torch.searchsorted(c, u, right=True).clamp_(max=n - 1)
            return step
        return make

    def multinomial(n: int) -> Step:
        x = lw(n, torch.float32)
        return lambda: torch.multinomial(torch.exp(x - x.max()), n, replacement=True)

    def measure(step: Step, reps: int) -> list[float]:
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
        for s, e in ev:
            s.record()
            step()
            e.record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) * 1e3 for s, e in ev]

    return Lib("cuda-events",
               {"torch-f32-searchsorted": searchsorted(torch.float32),
                "torch-f64-searchsorted": searchsorted(torch.float64),
                "torch-multinomial": multinomial},
               lambda out: torch.cuda.synchronize(), measure, torch.cuda.empty_cache,
               {"torch-multinomial": (1 << 24, "torch.multinomial supports at most 2^24 categories")})


def cupy_lib() -> Lib:
    import cupy as cp
    if cp.cuda.runtime.getDeviceCount() < 1:  # raises when there is no usable driver
        raise RuntimeError("CuPy sees no CUDA device")

    def make(n: int) -> Step:
        x = cp.random.standard_normal(n, dtype=cp.float32) * 2

        def step() -> Any:
            c = cp.cumsum(cp.exp(x - x.max()))
            u = (cp.arange(n, dtype=cp.float32) + cp.random.rand(1, dtype=cp.float32)) / n * c[-1]
            return cp.minimum(cp.searchsorted(c, u, side="right"), n - 1)
        return step

    def measure(step: Step, reps: int) -> list[float]:
        ev = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(reps)]
        for s, e in ev:
            s.record()
            step()
            e.record()
        cp.cuda.runtime.deviceSynchronize()
        return [cp.cuda.get_elapsed_time(s, e) * 1e3 for s, e in ev]

    def free() -> None:
        cp.get_default_memory_pool().free_all_blocks()
        cp.get_default_pinned_memory_pool().free_all_blocks()

    return Lib("cuda-events", {"cupy-searchsorted": make},
               lambda out: cp.cuda.runtime.deviceSynchronize(), measure, free)


def jax_lib() -> Lib:
    import jax
    import jax.numpy as jnp
    dev = jax.devices("gpu")[0]  # raises RuntimeError when JAX has no GPU backend

    @jax.jit
    def searchsorted(lw: Any, key: Any) -> Any:
        n = lw.shape[0]
        c = jnp.cumsum(jnp.exp(lw - lw.max()))
        u = (jnp.arange(n, dtype=jnp.float32) + jax.random.uniform(key, (), jnp.float32)) / n * c[-1]
        # "scan_unrolled": JAX's advice for GPUs; the default "scan" is 1.5-4.5x slower on an H100
        return jnp.minimum(jnp.searchsorted(c, u, side="right", method="scan_unrolled"), n - 1)

    @jax.jit
    def choice(lw: Any, key: Any) -> Any:
        n = lw.shape[0]
        w = jnp.exp(lw - lw.max())
        return jax.random.choice(key, n, shape=(n,), replace=True, p=w / w.sum())

    def maker(fn: Callable[[Any, Any], Any]) -> Callable[[int], Step]:
        def make(n: int) -> Step:
            x = jax.device_put(jax.random.normal(jax.random.PRNGKey(0), (n,), jnp.float32) * 2, dev)
            key = jax.device_put(jax.random.PRNGKey(1), dev)  # same key every call: timing only
            return lambda: fn(x, key)
        return make

    def measure(step: Step, reps: int) -> list[float]:
        out = []
        for _ in range(reps):
            t0 = time.perf_counter()
            step().block_until_ready()
            out.append((time.perf_counter() - t0) * 1e6)
        return out

    return Lib("host", {"jax-searchsorted": maker(searchsorted), "jax-choice": maker(choice)},
               lambda out: out.block_until_ready(), measure, lambda: None)


def time_one(lib: Lib, make: Callable[[int], Step], n: int, reps: int) -> tuple[float, float, int]:
    """Warm up (compilation included), pick a rep count within BUDGET_S, time; -> (median, min, reps)."""
    step = make(n)
    t_start = time.perf_counter()
    per_call = 0.0
    for i in range(WARMUPS):  # the first call may compile (JAX): never the only one
        t0 = time.perf_counter()
        lib.wait(step())
        per_call = time.perf_counter() - t0
        if i >= 1 and time.perf_counter() - t_start > BUDGET_S / 3:
            break
    reps = max(3, min(reps, int((BUDGET_S - (time.perf_counter() - t_start)) / max(per_call, 1e-6))))
    us = lib.measure(step, reps)
    return statistics.median(us), min(us), reps


def copy_bandwidth() -> tuple[str | None, float | None]:
    """(device name, D2D copy bandwidth in GB/s of a 1 GiB buffer, read + write counted); torch, else CuPy."""
    size = 1 << 30
    for lib_name in ("torch", "cupy"):
        try:
            if lib_name == "torch":
                import torch
                lib = torch_lib()
                src = torch.empty(size, dtype=torch.uint8, device="cuda")
                dst, copy = torch.empty_like(src), lambda: dst.copy_(src)
                name = torch.cuda.get_device_name()
            else:
                import cupy as cp
                lib = cupy_lib()
                src = cp.empty(size, dtype=cp.uint8)
                dst, copy = cp.empty_like(src), lambda: cp.copyto(dst, src)
                name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
            med = time_one(lib, lambda n: copy, size, 20)[0]
            del src, dst, copy
            lib.free()
            return name, 2 * size / (med * 1e-6) / 1e9
        except Exception as e:  # noqa: BLE001 - try the next library
            log(f"copy bandwidth with {lib_name} failed: {short(e)}")
    return None, None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10,12,14,16,18,20,22,24,26", help="comma-separated exponents k, N = 2^k")
    ap.add_argument("--reps", type=int, default=50, help="timed reps after %d warm-ups (fewer for large N)" % WARMUPS)
    ap.add_argument("--out", default="peers.json", help="output JSON file")
    args = ap.parse_args()
    sizes = [1 << int(k) for k in args.sizes.split(",") if k.strip()]

    device, bw = copy_bandwidth()
    if bw is not None:
        print(f"device: {device}; copy bandwidth (1 GiB D2D, read + write): {bw:.0f} GB/s")
    results: list[dict[str, Any]] = []
    unavailable: dict[str, str] = {}
    for lib_name, factory in (("torch", torch_lib), ("cupy", cupy_lib), ("jax", jax_lib)):  # jax last: its pool keeps memory
        try:
            lib = factory()
        except Exception as e:  # noqa: BLE001 - a missing or broken library is skipped, never fatal
            unavailable[lib_name] = short(e)
            log(f"skipping {lib_name}: {unavailable[lib_name]}")
            continue
        if device is None and lib_name == "jax":
            import jax
            device = jax.devices("gpu")[0].device_kind
        for impl, make in lib.impls.items():
            for n in sizes:
                row: dict[str, Any] = {"impl": impl, "n": n, "median_us": None, "min_us": None,
                                       "timer": lib.timer, "skipped": None}
                limit = lib.max_n.get(impl)
                if limit and n > limit[0]:
                    row["skipped"] = limit[1]
                else:
                    try:
                        row["median_us"], row["min_us"], row["reps"] = time_one(lib, make, n, args.reps)
                    except Exception as e:  # noqa: BLE001 - OOM and friends: record and go on
                        row["skipped"] = short(e)
                lib.free()
                results.append(row)
                log(f"{impl:24s} N=2^{n.bit_length() - 1:<2d} " + (
                    f"median {row['median_us']:10.1f} us  min {row['min_us']:10.1f} us  ({row['reps']} reps)"
                    if row["skipped"] is None else f"skipped: {row['skipped']}"))
        del lib

    if not results:
        print("no peer could run on a CUDA device: " + "; ".join(f"{k}: {v}" for k, v in unavailable.items()))
    with open(args.out, "w") as f:
        json.dump({"device": device, "copy_bandwidth_GBps": bw, "unavailable": unavailable,
                   "results": results}, f, indent=1)
    if results:
        print(f"{'impl':24s} {'N':>6s} {'median us':>11s} {'min us':>11s}  timer")
        for r in results:
            nk = f"2^{r['n'].bit_length() - 1}"
            if r["skipped"]:
                print(f"{r['impl']:24s} {nk:>6s} {'skipped: ' + r['skipped']}")
            else:
                print(f"{r['impl']:24s} {nk:>6s} {r['median_us']:11.1f} {r['min_us']:11.1f}  {r['timer']}")
        print("JAX rows use a host timer around block_until_ready; the others CUDA events.")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
