"""The CUDA pool through CUDA virtual memory management, on a real GPU (scripts/gpu_proof.sh).

1. Issue 27's case through the public API: two 80 MiB variables, each fed through an 80 MiB copy,
   under a 256 MiB GPU memory limit with vmem off, once with ``cuda_virtual_memory='on'`` (must
   fit: the pool grows in place as one range) and once with ``'off'`` (cudaMalloc regions of
   128 MiB: refused where TF's single region fits; printed, not a failure).
2. A grow/shrink cycle on the allocator stack: arrays written while the pool grows in place keep
   their values across later growths; freeing them and handing the pool back returns the memory
   to the device (``cudaMemGetInfo``'s free bytes come back).

Prints every figure; exit status 1 when a check fails. Needs CuPy, ``cuda.bindings`` and a GPU.
Run: ``python scripts/vmm_proof.py [--grow-mib 1024] [--step-mib 64]``.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import sys
import time
from typing import Any

import numpy as np

import antcolony as ac
from antcolony.devices.allocator import format_bytes

MiB = 1 << 20
FAILED: list[str] = []


def check(ok: bool, what: str) -> None:
    print(f"  {'ok' if ok else 'FAILED'}: {what}")
    if not ok:
        FAILED.append(what)


async def two_80_MiB_variables(mode: str) -> tuple[str, float | None]:
    n = 80 * MiB // 4
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [n])
        with ac.device("/gpu:0"):
            a = ac.Variable(ac.zeros([n]), name="a")
            b = ac.Variable(ac.zeros([n]), name="b")
            set_a = ac.assign(a, ac.identity(x))
            set_b = ac.assign(b, ac.identity(x))
        total = ac.reduce_sum(a) + ac.reduce_sum(b)
    config = ac.SessionConfig(
        gpu_backend="cuda", gpu_memory_limit=256 * MiB, vmem=False, cuda_virtual_memory=mode
    )
    try:
        async with ac.Session(g, config=config) as sess:
            t0 = time.perf_counter()
            await sess.run(set_a.op, {x: np.ones(n, np.float32)})
            await sess.run(set_b.op, {x: np.full(n, 2.0, np.float32)})
            got = float(await sess.run(total))
            took = time.perf_counter() - t0
            s = sess.memory_stats("/gpu:0")
    except ac.errors.ResourceExhaustedError as exc:
        return f"refused: {exc.message.splitlines()[0][:300]}", None
    text = (
        f"fits: sum {got:.0f} (want {3.0 * n:.0f}), in use {format_bytes(s.bytes_in_use)}, pool "
        f"{format_bytes(s.pool_bytes)} in one range, peak {format_bytes(s.peak_bytes_in_use)}, "
        f"{took * 1e3:.0f} ms"
    )
    return text, got - 3.0 * n


def grow_shrink(grow_mib: int, step_mib: int) -> None:
    import cupy

    from antcolony.devices.backends.cuda import CudaBackend
    from antcolony.devices.backends.cuda_memory import make_cupy_allocator
    from antcolony.devices.backends.cuda_vmm import CudaVirtualMemory
    from antcolony.devices.memory import DeviceMemory

    backend = CudaBackend("on")
    total = backend.info(0).total_memory
    mem = DeviceMemory(
        "/gpu:0",
        total,
        None,
        True,
        False,
        64 * MiB,
        backend.device_sub_allocator(0),
        backend.host_sub_allocator(0, 64 * MiB),
        charge_values=False,
    )
    sub = mem.device.sub_allocator
    assert isinstance(sub, CudaVirtualMemory)
    malloc = make_cupy_allocator(cupy, mem.vmem, 0)
    free0 = cupy.cuda.runtime.memGetInfo()[0]
    print(f"  granularity {format_bytes(sub.granularity)}, reserved {format_bytes(sub.capacity)}")
    arrays: list[Any] = []
    t0 = time.perf_counter()
    with cupy.cuda.Device(0), cupy.cuda.using_allocator(malloc):
        for i in range(grow_mib // step_mib):
            a = cupy.empty(step_mib * MiB // 4, dtype=cupy.float32)
            a.fill(float(i))
            arrays.append(a)
        cupy.cuda.Device(0).synchronize()
    grow_s = time.perf_counter() - t0
    stats = mem.device.stats()
    free1 = cupy.cuda.runtime.memGetInfo()[0]
    print(
        f"  grew to {format_bytes(stats.pool_bytes)} in {stats.num_regions} region(s), "
        f"{format_bytes(sub.mapped_bytes)} mapped, in {grow_s * 1e3:.0f} ms "
        f"({stats.pool_bytes / MiB / grow_s:,.0f} MiB/s incl. fills); device free fell by "
        f"{format_bytes(free0 - free1)}"
    )
    check(stats.num_regions == 1, "the pool grew in place as one region")
    ptrs = [a.data.ptr for a in arrays]
    gaps = sum(q != p + step_mib * MiB for p, q in itertools.pairwise(ptrs))
    print(f"  {len(ptrs)} arrays from {ptrs[0]:#x}, {gaps} not right after the one before")
    values = [float(a[0]) + float(a[-1]) for a in arrays]
    check(values == [2.0 * i for i in range(len(arrays))], "values written before later growths kept")
    del arrays, a
    gc.collect()
    t0 = time.perf_counter()
    pool = mem.device.release_free_regions(0)
    release_s = time.perf_counter() - t0
    free2 = cupy.cuda.runtime.memGetInfo()[0]
    print(
        f"  handed back in {release_s * 1e3:.0f} ms: pool {format_bytes(pool)}, mapped "
        f"{format_bytes(sub.mapped_bytes)}, device free rose by {format_bytes(free2 - free1)}"
    )
    check(pool == 0 and sub.mapped_bytes == 0, "every page unmapped")
    check(free2 - free1 >= (free0 - free1) * 0.9, "the device got the memory back")
    backend.close()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--grow-mib", type=int, default=1024)
    p.add_argument("--step-mib", type=int, default=64)
    args = p.parse_args()
    try:
        import cuda.bindings.driver  # noqa: F401
    except ImportError as exc:
        print(f"skipped: cuda.bindings not installed ({exc})")
        return 0
    from antcolony.devices.backends.cuda import import_cupy

    try:
        import_cupy()
    except ac.errors.UnavailableError as exc:
        print(f"skipped: {exc.message}")
        return 0
    print("1. two 80 MiB variables fed through 80 MiB copies, 256 MiB limit, vmem off:")
    text, error = ac.run(two_80_MiB_variables("on"))
    print(f"  cuda_virtual_memory='on':  {text}")
    check(error == 0.0, "both variables fit and hold what was fed")
    print(f"  cuda_virtual_memory='off': {ac.run(two_80_MiB_variables('off'))[0]}")
    print(f"2. grow to {args.grow_mib} MiB in {args.step_mib} MiB arrays, then hand back:")
    grow_shrink(args.grow_mib, args.step_mib)
    print("vmm_proof: " + ("FAILED: " + "; ".join(FAILED) if FAILED else "every check passed"))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
