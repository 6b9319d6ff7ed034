"""Chunked elementwise work over large flat arrays, optionally on several threads.

A fused update such as Adam's written as whole-array numpy operations makes a temporary of the
variable's size per step of its formula and reads it back from memory; run over chunks of
``CHUNK`` elements, the temporaries are reused and stay in cache, so memory sees the formula's
own reads and writes only. Work of at least ``PARALLEL_MIN`` elements is split into contiguous
parts run on ``threads()`` threads (numpy releases the GIL inside its loops), as TF shards an
Eigen expression over its intra-op pool. Non-numpy arrays (cupy) run in one piece: a GPU kernel
is already parallel and launches cost more than the temporaries.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

CHUNK = 1 << 15  # elements: 128 KiB of float32 per temporary
PARALLEL_MIN = 1 << 20  # elements below which one thread does the work

ChunkFn = Callable[[slice, list[Any]], None]

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_threads = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def set_threads(n: int | None) -> None:
    """The threads one large elementwise update may use (the session's intra-op setting); None:
    the cores this process may run on."""
    global _threads, _pool
    want = max(1, n) if n else max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
    with _pool_lock:
        if want != _threads and _pool is not None:
            _pool.shutdown(wait=False)
            _pool = None
        _threads = want


def threads() -> int:
    return _threads


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=_threads, thread_name_prefix="antcolony-intra-op")
        return _pool


def run_chunked(xp: Any, n: int, dtype: Any, ntemps: int, fn: ChunkFn) -> None:
    """Call ``fn(slice, temps)`` over consecutive slices covering ``range(n)``; ``temps`` are
    ``ntemps`` scratch arrays of the slice's length and ``dtype``."""
    if xp is not np or n <= CHUNK:
        fn(slice(0, n), [xp.empty(n, dtype=dtype) for _ in range(ntemps)])
        return
    parts = min(_threads, n // (PARALLEL_MIN // 2)) if n >= PARALLEL_MIN else 1
    if parts <= 1:
        _run_range(0, n, dtype, ntemps, fn)
        return
    # contiguous parts on chunk boundaries, the caller's thread taking the first
    step = -(-n // parts // CHUNK) * CHUNK
    bounds = [(lo, min(n, lo + step)) for lo in range(0, n, step)]
    futures = [_executor().submit(_run_range, lo, hi, dtype, ntemps, fn) for lo, hi in bounds[1:]]
    try:
        _run_range(*bounds[0], dtype, ntemps, fn)
    finally:
        for f in futures:
            f.result()


def _run_range(lo: int, hi: int, dtype: Any, ntemps: int, fn: ChunkFn) -> None:
    temps = [np.empty(CHUNK, dtype=dtype) for _ in range(ntemps)]
    for start in range(lo, hi, CHUNK):
        stop = min(hi, start + CHUNK)
        k = stop - start
        fn(slice(start, stop), temps if k == CHUNK else [t[:k] for t in temps])
