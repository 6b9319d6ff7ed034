"""Launches waiting for a device slot: highest priority first, FIFO within a priority."""

from __future__ import annotations

from bisect import insort
from collections import deque
from collections.abc import Callable

from .launch import Launch


class LaunchQueue:
    """A priority queue of ``Launch`` messages, one FIFO per priority in use.

    Launches carry a handful of distinct priorities (0 for kernels, 1 for copies), so push and
    pop are O(1) deque operations; only a priority's first arrival pays for a sorted insert.
    Half the cost of a heap of ``(-priority, seq, launch)`` tuples on the launch path.
    """

    __slots__ = ("_fifos", "_order", "_len")

    def __init__(self) -> None:
        self._fifos: dict[int, deque[Launch]] = {}
        self._order: list[int] = []  # negated priorities in use, ascending: highest first
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def push(self, launch: Launch) -> None:
        fifo = self._fifos.get(launch.priority)
        if fifo is None:
            fifo = self._fifos[launch.priority] = deque()
            insort(self._order, -launch.priority)
        fifo.append(launch)
        self._len += 1

    def pop(self) -> Launch:
        """The longest-waiting launch of the highest priority; IndexError when empty."""
        priority = -self._order[0]
        fifo = self._fifos[priority]
        launch = fifo.popleft()
        self._len -= 1
        if not fifo:
            del self._fifos[priority]
            del self._order[0]
        return launch

    def remove_if(self, match: Callable[[Launch], bool]) -> int:
        """Drop every waiting launch ``match`` selects (the others keep their order); how many."""
        removed = 0
        for priority in list(self._fifos):
            fifo = self._fifos[priority]
            kept = deque(launch for launch in fifo if not match(launch))
            removed += len(fifo) - len(kept)
            if kept:
                self._fifos[priority] = kept
            else:
                del self._fifos[priority]
                self._order.remove(-priority)
        self._len -= removed
        return removed
