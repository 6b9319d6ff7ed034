"""The compute share of one GPU for this process: AntMan's GPU op manager, as a duty cycle.

perfControl p means the process keeps the GPU busy at most p % of the wall time. Busy time is
what the device spent: the union of the compute kernels' intervals (as the streams report them),
so kernels running side by side on several streams count once. After each busy period (from the
first kernel starting on an idle device to the last one ending) the device owes
``busy * (100 - p) / p`` seconds of idle time; any idle time pays it (the job's own CPU work, a
post-step pause, or an idle slot: the next launch held on the loop's timer). Debt is never turned
into a budget: idle beyond what is owed earns at most ``CREDIT_S`` of credit, enough for the host
work a step starts with (feeds, copies) and a late timer, too little for a burst; a new share
starts with neither debt nor credit.

A step smoother (the resource manager, which knows step boundaries) may move debt in time with
``DeferIdle``: deferred debt is still owed but does not hold launches, and a negative deferral
grants credit for idle time it asked for beyond what was owed; an allowance lets a step's own
new debt up to that much go unheld (the smoother's pause pays it at the step end), so launches
are held only when a step runs far beyond its usual length. Nothing is forgiven: the smoother
pays it all back at later step ends.

One ``ComputeShare`` per GPU worker; read and written on the event loop only (the worker's turn
and messages), never blocking: a held launch is a ``call_later``.

How pacing fits AntMan's perfControl: docs/design.md section 6.
"""

from __future__ import annotations

import operator
import time
from dataclasses import dataclass

#: Debt below this is not worth a timer (the loop's timers are millisecond-grained: a shorter
#: hold would spin through zero-delay timers): it is carried until idle time pays it or it grows.
MIN_SLOT_S = 1e-3
#: Idle time beyond the debt counts at most this much towards later busy periods.
CREDIT_S = 0.01


@dataclass(frozen=True)
class SetComputeShare:
    """Tell a GPU worker: keep the device busy at most ``percent`` % of the time (1..100)."""

    percent: int


@dataclass(frozen=True)
class OwedIdle:
    """Ask a GPU worker: ``(owed, busy)``: seconds of idle time the device still owes now
    (negative: its credit), and its busy time so far (the union of its kernels, seconds)."""


@dataclass(frozen=True)
class DeferIdle:
    """Tell a GPU worker: ``seconds`` of what it owes stop holding launches (still owed); a negative
    value grants that much credit beyond ``CREDIT_S`` for idle time the sender is about to add.
    Until the next ``DeferIdle``, up to ``allowance`` seconds of new debt hold no launch either."""

    seconds: float
    allowance: float = 0.0


@dataclass(frozen=True)
class GetShareStats:
    """Ask a GPU worker: its ``ShareStats``."""


@dataclass(frozen=True)
class ShareStats:
    """Totals since the worker started (seconds): union busy time, time launches were held."""

    percent: int
    busy_s: float
    held_s: float
    busy_periods: int


class ComputeShare:
    """Duty-cycle bookkeeping of one GPU: when may the next kernel start?"""

    def __init__(self, clock: object = time.perf_counter) -> None:
        self._clock = clock
        self.percent = 100
        self.running = 0
        self.owed = 0.0
        self.deferred = 0.0  # part of ``owed`` that does not hold launches (>= 0)
        self.grant = 0.0  # credit beyond CREDIT_S the next idle may earn (>= 0)
        self.allowance = 0.0  # debt beyond ``deferred`` that holds no launch either (>= 0)
        self.idle_since = clock()  # type: ignore[operator]
        self._period: list[tuple[float, float]] = []
        self.busy_s = 0.0
        self.held_s = 0.0
        self.busy_periods = 0

    def set_percent(self, percent: int) -> None:
        if not 1 <= percent <= 100:
            raise ValueError(f"compute share must be 1..100 percent, got {percent}")
        self.percent = percent
        # a new share starts clean: neither the old share's debt nor idle time before it counts
        self.owed = self.deferred = self.grant = self.allowance = 0.0
        self.idle_since = self._clock()  # type: ignore[operator]

    def defer(self, seconds: float, allowance: float = 0.0) -> None:
        """See ``DeferIdle``: defer ``seconds`` of the debt, or grant ``-seconds`` of credit."""
        self.deferred, self.grant = max(seconds, 0.0), max(-seconds, 0.0)
        self.allowance = max(allowance, 0.0)

    def _paid(self, idle: float) -> float:
        """``owed`` after ``idle`` seconds: idle earns credit up to CREDIT_S (plus a grant) and
        never takes away credit already held."""
        return max(self.owed - idle, min(self.owed, -CREDIT_S - self.grant))

    def owed_now(self, now: float | None = None) -> float:
        """Idle seconds still owed (negative: credit), counting the idle time since the last kernel."""
        if self.running:
            return max(self.owed, 0.0)
        now = self._clock() if now is None else now  # type: ignore[operator]
        return self._paid(max(now - self.idle_since, 0.0))

    def hold_for(self, now: float) -> float:
        """How long a launch arriving ``now`` must wait; 0.0 means launch it now."""
        if self.running or self.percent >= 100:
            return 0.0
        owed = self.owed_now(now) - self.deferred - self.allowance  # idle pays the held part first
        return owed if owed >= MIN_SLOT_S else 0.0

    def held(self, seconds: float) -> None:
        self.held_s += seconds

    def started(self) -> None:
        """A kernel is handed to a stream."""
        self.running += 1

    def finished(self, start: float, end: float) -> None:
        """A kernel handed over by ``started`` ran on the device from ``start`` to ``end``."""
        self._period.append((start, end))
        self.running -= 1
        if self.running:
            return
        first = min(self._period)[0]  # (start, end) pairs: the least start comes first
        last = max(map(_end, self._period))
        busy = _union(self._period)
        self._period.clear()
        # Idle time pays the debt: before the period (up to its first kernel) and inside it (a
        # completion still on its way to the loop keeps the period open while the device idles).
        self.owed = self._paid(max(first - self.idle_since, 0.0))
        self.deferred = min(self.deferred, max(self.owed, 0.0))
        self.grant = 0.0
        self.idle_since = last
        self.busy_s += busy
        self.busy_periods += 1
        p = self.percent
        if p < 100:
            self.owed = self.owed + busy * (100 - p) / p
            self.owed = self._paid(last - first - busy)

    def stats(self) -> ShareStats:
        return ShareStats(self.percent, self.busy_s, self.held_s, self.busy_periods)


_end = operator.itemgetter(1)


def _union(intervals: list[tuple[float, float]]) -> float:
    """Total length covered by ``intervals`` (overlaps counted once)."""
    total = 0.0
    cur_start = cur_end = None
    for start, end in sorted(intervals):
        if cur_end is None or start > cur_end:
            if cur_end is not None:
                total += cur_end - cur_start  # type: ignore[operator]
            cur_start, cur_end = start, end
        elif end > cur_end:
            cur_end = end
    if cur_end is not None:
        total += cur_end - cur_start  # type: ignore[operator]
    return total
