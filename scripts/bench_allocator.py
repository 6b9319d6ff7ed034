"""Benchmark of the allocator stack: throughput and fragmentation under a training-like size mix.

Sizes: mostly small tensors (256 B - 64 KiB, log-uniform) and a fraction of large ones
(1 - 64 MiB, log-uniform). A live set hovers around ``--live`` tensors: each step allocates or
frees with a probability that pulls the live count back to the target; frees are LIFO or random
(half each). The whole operation sequence is generated before timing. Reports allocs+frees per
second for the BFC allocator (with and without allow_growth) and for the VMem wrapper, then the
fragmentation left after the sequence (largest free block / free bytes; pool bytes vs peak).
With CuPy and a CUDA GPU, two more rows replay the same sequence with the BFC pool on the real
device: cudaMalloc growth regions, and one range grown through CUDA virtual memory management
(needs ``cuda.bindings``); each is skipped, saying why, where it cannot run.
Run: ``python scripts/bench_allocator.py [--ops 200000] [--live 1000] [--large 0.1] [--limit-gib 4]``.
"""

from __future__ import annotations

import argparse
import math
import random
import shlex
import sys
import time
from typing import Any

from antcolony.devices.allocator import (
    BFCAllocator,
    VirtualAddressSpace,
    VMemAllocator,
    format_bytes,
    make_host_allocator,
)

GiB = 1 << 30


def make_ops(n: int, live: int, large: float, seed: int) -> list[tuple[int, float, float]]:
    """(size, decision, pick) per step: size for an allocation; decision/pick drive frees."""
    rng = random.Random(seed)
    ops = []
    for _ in range(n):
        lo, hi = (20, 26) if rng.random() < large else (8, 16)  # log2 bounds: 1-64 MiB or 256 B-64 KiB
        ops.append((int(2 ** rng.uniform(lo, hi)), rng.random() * 2 * live, rng.random()))
    return ops


def run(alloc: Any, ops: list[tuple[int, float, float]]) -> tuple[float, int, int]:
    """Replays ``ops``; returns (seconds, allocator calls, failed allocations). Frees what is left."""
    live: list[Any] = []
    try_allocate, free = alloc.try_allocate, alloc.free
    calls = failures = 0
    start = time.perf_counter()
    for size, decision, pick in ops:
        if decision < len(live):  # P(free) = live / (2 * target): the live set settles at the target
            free(live.pop() if pick < 0.5 else live.pop(int(pick * 2 * len(live)) - len(live)))
        else:
            a = try_allocate(size)
            if a is None:
                failures += 1
            else:
                live.append(a)
        calls += 1
    elapsed = time.perf_counter() - start
    run.leftover = live  # type: ignore[attr-defined]
    return elapsed, calls, failures


def cuda_rows(limit: int) -> tuple[list[tuple[str, Any]], list[str]]:
    """(label, make) rows whose BFC pool lives on GPU 0, and why any are missing."""
    from antcolony.devices.backends.cuda import CudaBackend
    from antcolony.errors import UnavailableError

    try:
        CudaBackend()
    except UnavailableError as exc:
        return [], [f"CUDA rows skipped: {exc.message}"]

    def on_gpu(mode: str) -> BFCAllocator:
        sub = CudaBackend(mode).device_sub_allocator(0)
        return BFCAllocator(sub, limit, allow_growth=True, name="bench")

    rows: list[tuple[str, Any]] = [("BFC allow_growth, cudaMalloc", lambda: on_gpu("off"))]
    try:
        on_gpu("on").sub_allocator.close()  # setting up the range once says whether it can
    except UnavailableError as exc:
        return rows, [f"CUDA VMM row skipped: {exc.message}"]
    rows.append(("BFC allow_growth, CUDA VMM", lambda: on_gpu("on")))
    return rows, []


class _Floor:
    """No allocator at all: what the replay loop itself costs."""

    def try_allocate(self, n: int) -> int:
        return n

    def free(self, a: int) -> None:
        pass


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ops", type=int, default=200_000, help="allocator calls per run")
    p.add_argument("--live", type=int, default=1000, help="target live tensor count")
    p.add_argument("--large", type=float, default=0.1, help="fraction of 1-64 MiB tensors")
    p.add_argument("--limit-gib", type=float, default=4.0, help="device memory limit")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    limit = int(args.limit_gib * GiB)
    print("command:", shlex.join([sys.executable, *sys.argv]))
    print(
        f"workload: {args.ops} calls, live target {args.live}, {args.large:.0%} large (1-64 MiB), "
        f"rest 256 B-64 KiB, frees half LIFO half random; device limit {format_bytes(limit)}"
    )
    ops = make_ops(args.ops, args.live, args.large, args.seed)

    def bfc(growth: bool) -> BFCAllocator:
        return BFCAllocator(VirtualAddressSpace(limit), limit, allow_growth=growth, name="bench")

    floor_s, calls, _ = run(_Floor(), ops)
    print(f"\n{'allocator':<34}{'calls/s':>12}{'ns/call':>10}{'minus loop':>12}{'failed':>8}")
    print(f"{'(replay loop only)':<34}{calls / floor_s:>12,.0f}{floor_s / calls * 1e9:>10.0f}{'':>12}{'':>8}")
    results = {}
    rates: dict[str, float] = {}
    gpu_rows, skipped = cuda_rows(limit)
    for label, make in [
        ("BFC, one region (no growth)", lambda: bfc(False)),
        ("BFC, allow_growth", lambda: bfc(True)),
        (
            "VMem(BFC allow_growth + host)",
            lambda: VMemAllocator(
                bfc(True),
                make_host_allocator("bench_host", 64 * GiB, VirtualAddressSpace(64 * GiB)),
                enabled=True,
            ),
        ),
        *gpu_rows,
    ]:
        alloc = make()
        secs, calls, failed = run(alloc, ops)
        results[label] = (alloc, run.leftover)  # type: ignore[attr-defined]
        rates[label] = calls / secs
        ns = secs / calls * 1e9
        print(f"{label:<34}{calls / secs:>12,.0f}{ns:>10.0f}{ns - floor_s / calls * 1e9:>12.0f}{failed:>8}")
    for line in skipped:
        print(line)
    if "BFC allow_growth, CUDA VMM" in rates:
        vmm = rates["BFC allow_growth, CUDA VMM"]
        print(
            f"CUDA VMM calls/s: {vmm / rates['BFC allow_growth, cudaMalloc']:.2f}x cudaMalloc regions', "
            f"{vmm / rates['BFC, allow_growth']:.2f}x the simulated address space's"
        )

    print("\nfragmentation after the sequence (live set still allocated):")
    for label, (alloc, live) in results.items():
        device = alloc.device if isinstance(alloc, VMemAllocator) else alloc
        alloc.check_invariants() if hasattr(alloc, "check_invariants") else device.check_invariants()
        s = device.stats()
        ratio = s.largest_free_block / s.free_bytes if s.free_bytes else math.nan
        print(
            f"  {label}: {len(live)} live, in use {format_bytes(s.bytes_in_use)}; free {format_bytes(s.free_bytes)} "
            f"in pool, largest free block {format_bytes(s.largest_free_block)} -> largest/free = {ratio:.3f} "
            f"(fragmentation {s.fragmentation:.3f}); pool {format_bytes(s.pool_bytes)} in {s.num_regions} regions "
            f"vs peak in use {format_bytes(s.peak_bytes_in_use)} (pool/peak = {s.pool_bytes / s.peak_bytes_in_use:.3f})"
        )
        if isinstance(alloc, VMemAllocator):
            m = alloc.memory_stats()
            print(
                f"    host fallbacks {m.num_host_fallbacks} (OOM {m.num_oom_fallbacks}, FRAGMENT "
                f"{m.num_fragment_fallbacks}), host peak {format_bytes(m.host_peak_bytes_in_use)}"
            )
        for a in live:
            alloc.free(a)
        device.check_invariants()
        assert device.stats().bytes_in_use == 0
        device.release_free_regions(0)  # the GPU rows give their memory back before the next
        close = getattr(device.sub_allocator, "close", None)
        if close is not None:
            close()


if __name__ == "__main__":
    main()
