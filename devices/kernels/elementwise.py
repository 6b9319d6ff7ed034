"""Chunked elementwise work over large flat arrays, optionally on several threads.

A fused update such as Adam's written as whole-array numpy operations makes a temporary of the
variable's size per step of its formula and reads it back from memory; run over chunks of
``CHUNK`` elements, the temporaries are reused and stay in cache, so memory sees the formula's
own reads and writes only. Work of at least ``PARALLEL_MIN`` elements is split into contiguous
parts run on ``threads()`` threads (numpy releases the GIL inside its loops), as TF shards an
Eigen expression over its intra-op pool. Non-numpy arrays (cupy) run in one piece: a GPU kernel
is already parallel and launches cost more than the temporaries.

``run_parts`` is the same pool for kernels whose work splits into independent tasks (the
convolution and pooling kernels' batch slices): the caller and up to ``threads() - 1`` helpers
each take the next task nobody has started, so a pool busy with another kernel's tasks never
delays the caller, which then runs them all itself.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

# elements: 256 KiB of float32 per temporary; Adam's 5 arrays and 2 temporaries then take 1.8 MB
# of cache. Against 1 << 15, the 3136x1024 Adam update (MNIST CNN's fc layer) on two threads
# took 7.2 against 8.5 ms wall and 13.6 against 15.0 ms CPU (half the GIL hand-offs), on one
# thread 12.3 against 12.5 ms (a loaded machine; best of 32).
CHUNK = 1 << 16
PARALLEL_MIN = 1 << 20  # elements below which one thread does the work

ChunkFn = Callable[..., None]


def _cores() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


_pool: ThreadPoolExecutor | None = None
_pool_workers = 0
_pool_users = 0  # DeviceSets open (acquire_pool / release_pool): the last one's close ends the pool
_pool_lock = threading.Lock()
_threads = _cores()


def set_threads(n: int | None) -> None:
    """The threads one large elementwise update may use (DeviceSet: the cores); None:
    the cores this process may run on."""
    global _threads
    _threads = max(1, n) if n else _cores()


def threads() -> int:
    return _threads


def acquire_pool() -> None:
    """A DeviceSet (a Runtime's devices) starts using the intra-op pool."""
    global _pool_users
    with _pool_lock:
        _pool_users += 1


def release_pool() -> ThreadPoolExecutor | None:
    """A DeviceSet closed, its kernels done. When it was the last, the pool is detached and
    returned for the caller to shut down off the event loop, so no intra-op thread outlives the
    runtimes that used it (a later kernel makes a new pool)."""
    global _pool, _pool_users, _pool_workers
    with _pool_lock:
        _pool_users = max(0, _pool_users - 1)
        if _pool_users or _pool is None:
            return None
        pool, _pool, _pool_workers = _pool, None, 0
    return pool


def _executor(workers: int) -> ThreadPoolExecutor:
    # While runtimes are open the pool is not shut down (a kernel may be submitting to it): a
    # larger one replaces it. The last runtime's close ends it (release_pool).
    global _pool, _pool_workers
    with _pool_lock:
        if _pool is None or _pool_workers < workers:
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="antcolony-intra-op")
            _pool_workers = workers
        return _pool


class Scratch:
    """One kernel's temporaries for variables of up to ``CHUNK`` elements, kept between calls. A
    kernel updating a variable never runs twice at once (the dependency engine orders writes),
    so they are never shared by two calls."""

    __slots__ = ("_dtype", "_shape", "_temps", "ntemps")

    def __init__(self, ntemps: int) -> None:
        self.ntemps = ntemps
        self._shape: Any = None
        self._dtype: Any = None
        self._temps: tuple[Any, ...] = ()

    def like(self, a: Any) -> tuple[Any, ...]:
        if a.shape != self._shape or a.dtype is not self._dtype:
            self._temps = tuple(np.empty_like(a) for _ in range(self.ntemps))
            self._shape, self._dtype = a.shape, a.dtype
        return self._temps


def run_chunked(xp: Any, arrays: Sequence[Any], scratch: Scratch, fn: ChunkFn, *extra: Any) -> None:
    """``fn(*parts, *temps, *extra)`` over corresponding parts of ``arrays`` (all of one size; the first
    sets the temporaries' dtype) that together cover them, in place where the arrays are
    contiguous; ``temps`` are ``scratch.ntemps`` scratch arrays shaped like the parts. A small
    array is one part: the arrays themselves, with ``scratch``'s temporaries."""
    first = arrays[0]
    n = first.size
    if n <= CHUNK and xp is np:
        fn(*arrays, *scratch.like(first), *extra)
        return
    ntemps = scratch.ntemps
    if xp is not np:
        fn(*arrays, *[xp.empty_like(first) for _ in range(ntemps)], *extra)
        return
    flats = [a.reshape(-1) for a in arrays]
    parts = min(_threads, n // (PARALLEL_MIN // 2)) if n >= PARALLEL_MIN else 1
    if parts <= 1:
        _run_range(flats, 0, n, ntemps, fn, extra)
        return
    # Contiguous parts on chunk boundaries, taken as in ``run_parts``: a part no helper has started
    # is run by the caller, so a pool busy with another kernel's GEMM block does not hold this
    # update until that block ends (measured in lstm_static: a 2M-element ApplyGradientDescent
    # waited 8.4 ms on average for 2.0 ms of CPU).
    step = -(-n // parts // CHUNK) * CHUNK
    run_parts(
        [
            functools.partial(_run_range, flats, lo, min(n, lo + step), ntemps, fn, extra)
            for lo in range(0, n, step)
        ]
    )


def run_parts(tasks: Sequence[Callable[[], None]]) -> None:
    """Run every task once, on the calling thread and up to ``threads() - 1`` pool helpers; the
    first exception a task raised is re-raised once all started tasks have finished."""
    helpers = min(_threads, len(tasks)) - 1
    if helpers <= 0:
        for task in tasks:
            task()
        return
    pending = iter(tasks)
    lock = threading.Lock()
    left = [len(tasks)]
    errors: list[BaseException] = []
    finished = threading.Event()

    def take() -> None:
        while True:
            with lock:
                task = next(pending, None)
            if task is None:
                return
            try:
                task()
            except BaseException as exc:  # handed to the caller, CancelledError included
                errors.append(exc)
            with lock:
                left[0] -= 1
                if left[0] == 0:
                    finished.set()

    pool = _executor(helpers)
    for _ in range(helpers):
        pool.submit(take)
    take()
    # what is left is running on a helper: the tasks are taken, so this wait is one task's length
    finished.wait()
    if errors:
        raise errors[0]


def _run_range(flats: list[Any], lo: int, hi: int, ntemps: int, fn: ChunkFn, extra: tuple[Any, ...]) -> None:
    temps = [np.empty(CHUNK, dtype=flats[0].dtype) for _ in range(ntemps)]
    for start in range(lo, hi, CHUNK):
        stop = min(hi, start + CHUNK)
        k = stop - start
        fn(*[f[start:stop] for f in flats], *(temps if k == CHUNK else [t[:k] for t in temps]), *extra)
