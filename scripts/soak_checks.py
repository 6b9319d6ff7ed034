"""What the soak checks after each fault: the figures that must come back to their baseline.

Figures (taken through the public API, as a user would see them):

- ``bytes_in_use`` and ``host_bytes_in_use`` of ``sess.memory_stats("/gpu:0")``: the device
  and host-fallback bytes the process's allocator stack hands out. Frees happen as the last
  reference to a tensor dies (a kernel still on the stream, a message still in a mailbox), so
  each is polled until it equals the baseline or a deadline passes.
- ``threads``: the names of the live threads, less the long-lived pools the runtime (or the
  loop) owns, which start threads lazily up to their size and keep them until shutdown:

  * ``sim-gpu<N>-<stream>``: one thread per stream of each simulated GPU (compute and copy);
  * ``antcolony-cpu`` / ``antcolony-cpu-prio``: the CPU device's kernel pools;
  * ``antcolony-engine-<pool>``: the dependency engine's worker pools;
  * ``soak-loop-executor``: the loop's default executor (``asyncio.to_thread``: the config
    listener's reads, status-file writes), which the soak names so it can be told apart.

  Any other thread that was not there at the baseline is left behind; so is a pool's thread
  beyond the pool's size (a pool started again, say per session, would show that way: its
  threads take the same names). That the pools themselves end with the runtime is checked
  once, after it shut down (``threads_after_exit``).
- ``actors`` and ``runtime tasks``: the runtime's live actors and tracked tasks
  (``RuntimeStats``), which come back to the baseline once a fault's step, or closed session,
  is gone.
- ``held after close``: when a close leaves the process without a session, its device plus
  host bytes in use must drop to 0 before the next session opens.

The baseline is taken once, after the first session initialised its variables and ran every
fetch key once (its executors then hold their constants on the device, as every later session's
do after its warm-up).
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from soak_job import CPU_PRIORITY_THREADS, INTER_OP_THREADS

import antcolony as ac
from antcolony.actors.runtime import get_runtime

#: Thread-name prefixes of the pools described above.
OWNED_POOLS = re.compile(r"^(sim-gpu\d+-|antcolony-cpu|antcolony-engine-|soak-loop-executor)")
LOOP_EXECUTOR_PREFIX = "soak-loop-executor"
LOOP_EXECUTOR_THREADS = 4


def pool_size(pool: str) -> int:
    """How many threads ``pool`` may have (the sizes the soak's SessionConfig sets)."""
    if pool.startswith("sim-gpu"):
        return 1  # a stream is one thread
    sizes = {
        LOOP_EXECUTOR_PREFIX: LOOP_EXECUTOR_THREADS,
        "antcolony-cpu": INTER_OP_THREADS,
        "antcolony-cpu-prio": CPU_PRIORITY_THREADS,
    }
    # the engine's pools: at most a thread per core (its CPU worker pool), fewer on the GPU
    return sizes.get(pool, max(4, os.cpu_count() or 1))


def stray_threads() -> frozenset[str]:
    """Live threads other than the runtime's pools (by name, with the ident for duplicates)."""
    return frozenset(f"{t.name}#{t.ident}" for t in threading.enumerate() if not OWNED_POOLS.match(t.name))


def pool_threads() -> dict[str, int]:
    """Live threads of the runtime's pools, counted by pool (the name less its thread number)."""
    counts: dict[str, int] = {}
    for t in threading.enumerate():
        if OWNED_POOLS.match(t.name):
            pool = t.name.rsplit("_", 1)[0]
            counts[pool] = counts.get(pool, 0) + 1
    return dict(sorted(counts.items()))


@dataclass
class Baseline:
    bytes_in_use: int
    host_bytes_in_use: int
    threads: frozenset[str]
    actors: int
    tasks: int

    @staticmethod
    def take(sess: ac.Session) -> Baseline:
        stats = sess.memory_stats("/gpu:0")
        rt = get_runtime().stats()
        return Baseline(
            stats.bytes_in_use, stats.host_bytes_in_use, stray_threads(), rt.actors_alive, rt.tasks_pending
        )


@dataclass
class Leak:
    fault: str
    number: int
    figure: str
    detail: str

    def __str__(self) -> str:
        return f"LEAK after fault #{self.number} ({self.fault}): {self.figure} {self.detail}"


@dataclass
class Tally:
    """Per figure: how many checks it passed, and the leaks it showed."""

    checked: dict[str, int] = field(default_factory=dict)
    leaks: list[Leak] = field(default_factory=list)
    settle_s: dict[str, float] = field(default_factory=dict)

    def missed(self, figure: str) -> int:
        return sum(1 for leak in self.leaks if leak.figure == figure)


FIGURES = ("bytes_in_use", "host_bytes_in_use", "threads", "actors", "runtime tasks", "held after close")


async def _settle(read: Callable[[], int], target: int, deadline: float) -> tuple[int, float]:
    """Poll ``read()`` until it equals ``target`` or ``deadline`` (monotonic) passes."""
    started = time.monotonic()
    while True:
        value = read()
        if value == target or time.monotonic() >= deadline:
            return value, time.monotonic() - started
        await asyncio.sleep(0.005)


async def check_baseline(
    sess: ac.Session, base: Baseline, fault: str, number: int, within: float, tally: Tally
) -> list[Leak]:
    """Compare every figure with ``base``, each polled for up to ``within`` seconds."""
    deadline = time.monotonic() + within
    leaks: list[Leak] = []

    def memory(name: str) -> Callable[[], int]:
        return lambda: int(getattr(sess.memory_stats("/gpu:0"), name))

    rt = get_runtime()
    numeric: list[tuple[str, Callable[[], int], int, str]] = [
        ("bytes_in_use", memory("bytes_in_use"), base.bytes_in_use, "bytes"),
        ("host_bytes_in_use", memory("host_bytes_in_use"), base.host_bytes_in_use, "bytes"),
        ("actors", lambda: rt.stats().actors_alive, base.actors, "actors"),
        ("runtime tasks", lambda: rt.stats().tasks_pending, base.tasks, "tasks"),
    ]
    for figure, read, target, unit in numeric:
        value, took = await _settle(read, target, deadline)
        tally.settle_s[figure] = max(tally.settle_s.get(figure, 0.0), took)
        tally.checked[figure] = tally.checked.get(figure, 0) + 1
        if value != target:
            leaks.append(
                Leak(
                    fault,
                    number,
                    figure,
                    f"{value} vs baseline {target} ({value - target:+d} {unit}) {within:.1f} s after the fault",
                )
            )
    stray = await _settle_threads(base.threads, deadline)
    tally.checked["threads"] = tally.checked.get("threads", 0) + 1
    if stray:
        leaks.append(Leak(fault, number, "threads", f"{len(stray)} left behind: {', '.join(sorted(stray))}"))
    for pool, count in pool_threads().items():
        if count > pool_size(pool):
            leaks.append(
                Leak(
                    fault,
                    number,
                    "threads",
                    f"pool {pool} has {count} threads, "
                    f"{count - pool_size(pool):+d} over its size {pool_size(pool)}",
                )
            )
    tally.leaks.extend(leaks)
    return leaks


async def _settle_threads(base: frozenset[str], deadline: float) -> frozenset[str]:
    while True:
        extra = stray_threads() - base
        if not extra or time.monotonic() >= deadline:
            return extra
        await asyncio.sleep(0.005)


async def check_closed(sess: ac.Session, fault: str, number: int, within: float, tally: Tally) -> list[Leak]:
    """The only session of the process is closed: device and host bytes in use must drop to 0."""

    def held() -> int:
        stats = sess.memory_stats("/gpu:0")
        return int(stats.bytes_in_use + stats.host_bytes_in_use)

    value, took = await _settle(held, 0, time.monotonic() + within)
    figure = "held after close"
    tally.settle_s[figure] = max(tally.settle_s.get(figure, 0.0), took)
    tally.checked[figure] = tally.checked.get(figure, 0) + 1
    if value == 0:
        return []
    stats = sess.memory_stats("/gpu:0")
    leak = Leak(
        fault,
        number,
        figure,
        f"{stats.bytes_in_use} device + {stats.host_bytes_in_use} host bytes "
        f"still in use {within:.1f} s after the only session closed (expected 0)",
    )
    tally.leaks.append(leak)
    return [leak]


def threads_after_exit(within: float) -> list[str]:
    """Threads other than the caller's still alive ``within`` seconds after the runtime shut
    down (blocking: the loop is gone by then)."""
    deadline = time.monotonic() + within
    me = threading.current_thread()
    while True:
        alive = [t.name for t in threading.enumerate() if t is not me]
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.01)
