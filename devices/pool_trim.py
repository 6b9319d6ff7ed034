"""Handing a GPU pool's free memory back to the device when the job does not need it.

A BFC pool only grows: memory a job freed stays in its pool, and another process on the same
GPU is refused memory that nobody uses (a job that closed every session kept its whole pool).
Once a second (``TRIM_INTERVAL_S``), off the event loop, each GPU allocator stack of the process
is checked, and its free memory goes back to the device (free regions, free tails, and holes cut
out of regions where the sub-allocator can split them):

- down to the bytes in use, when another process sharing the device was refused memory since
  the last check (the simulated GPU's ledger records refusals);
- down to the job's recent peak plus a slack (an eighth of it, at least ``MIN_SLACK``), when the
  pool has stayed above that for a whole window (``TRIM_WINDOW_S``): a job whose peak fell, or
  that closed its sessions (its peak falls to what is still live), gives the rest back, while a
  job that reaches its peak every step keeps the pool it needs.

The limit is not changed (AntMan's limit stays the scheduler's): a later growth may take the
memory again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from typing import Any

from .allocator import format_bytes

logger = logging.getLogger(__name__)

__all__ = ["MIN_SLACK", "TRIM_INTERVAL_S", "TRIM_WINDOW_S", "PoolTrimmer", "trim_pools_forever"]

TRIM_INTERVAL_S = 1.0
TRIM_WINDOW_S = 5.0
MIN_SLACK = 4 << 20


class PoolTrimmer:
    """The trimming decision for one GPU's allocator stack (``DeviceMemory``)."""

    def __init__(self, window_s: float = TRIM_WINDOW_S) -> None:
        self.window_s = window_s
        self._peaks: deque[tuple[float, int]] = deque()
        self._since = time.time()  # refusals before this process looked do not count

    def check(self, memory: Any, now: float | None = None) -> int | None:
        """Trim ``memory``'s device pool if due; returns the pool size after a trim, else None."""
        now = time.monotonic() if now is None else now
        bfc = memory.device
        self._peaks.append((now, bfc.take_recent_peak()))
        while now - self._peaks[0][0] > self.window_s:
            self._peaks.popleft()
        refused = bfc.sub_allocator.refused_others_since(self._since)
        pool, in_use = bfc.pool_bytes, bfc.bytes_in_use
        if refused is not None:
            self._since = refused
            target, why = in_use, "another process sharing the GPU was refused memory"
        else:
            peak = max(p for _, p in self._peaks)
            target = peak + max(peak // 8, MIN_SLACK)
            covered = now - self._peaks[0][0] >= self.window_s * 0.8
            if not covered or pool <= target:
                return None
            why = f"the pool stayed above the recent peak ({format_bytes(peak)}) for {self.window_s:g} s"
        if pool <= target:
            return None
        after = bfc.release_free_regions(target)
        if after < pool:
            logger.info(
                "%s: handed %s of free pool back to the device (%s): pool %s, in use %s",
                bfc.name,
                format_bytes(pool - after),
                why,
                format_bytes(after),
                format_bytes(in_use),
            )
            self._peaks.clear()
            self._peaks.append((now, bfc.bytes_in_use))
        return after


def _check_all(memories: list[tuple[int, Any]], trimmers: dict[int, PoolTrimmer]) -> None:
    for index, memory in memories:
        trimmer = trimmers.get(index)
        if trimmer is None:
            trimmer = trimmers[index] = PoolTrimmer()
        try:
            trimmer.check(memory)
        except Exception:  # trimming is an optimisation: a failure must never reach a job
            logger.exception("%s: trimming the GPU pool failed", memory.name)


async def trim_pools_forever(memories: Any, interval: float = TRIM_INTERVAL_S) -> None:
    """Check ``memories()`` (a DeviceSet's) every ``interval`` seconds until cancelled."""
    trimmers: dict[int, PoolTrimmer] = {}
    while True:
        await asyncio.sleep(interval)
        current = memories()
        if current:
            await asyncio.to_thread(_check_all, current, trimmers)
