"""``StatisticsDumper``: AntMan's GPU status file (``GPU_STATUS_FILE``) kept by an actor.

The session tells a ``StepReport`` after every step (POST phase 1); the dumper decides, by
AntMan's rules, when to check and when to write, and writes in its own runtime task so neither
the step nor the dumper's mailbox waits for the disk. See ``StatisticsDumper`` for the rules and
docs/design.md section 6 for what is fixed relative to AntMan's published code.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import math
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from antcolony.actors.actor import Actor
from antcolony.config.resource_config import normalize_bus_id
from antcolony.config.status_file import build_status, write_status_atomic
from antcolony.devices.allocator.stats import MemoryStats

from .nvml import NvmlReader

__all__ = [
    "DumperStats",
    "Flush",
    "GetStats",
    "GetStatus",
    "GpuUsage",
    "Settle",
    "StatisticsDumper",
    "StepReport",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class GpuUsage:
    """One GPU's allocator figures right after a step (bytes; ``bus_id`` in "0000:01:00.0" form).

    ``window_peak_bytes_in_use`` should be the step's peak: the reporter resets the allocator's
    peak window (``session.reset_memory_peak``) after reading it; the dumper keeps the maximum
    over the steps since its last write itself.
    """

    bus_id: str
    device_index: int
    bytes_in_use: int
    window_peak_bytes_in_use: int
    peak_bytes_in_use: int
    pool_bytes: int
    stable_bytes: int
    host_bytes_in_use: int
    host_window_peak_bytes_in_use: int
    host_bytes_limit: int
    num_host_fallbacks: int
    swap_reason: str = ""
    # the resource manager's view, when the job has one: limit in force, asked, why not reached
    bytes_limit: int | None = None
    limit_asked: int | None = None
    limit_reason: str = ""

    @classmethod
    def from_memory_stats(cls, bus_id: str, index: int, stats: MemoryStats, limit: Any = None) -> GpuUsage:
        """``limit``: the resource manager's ``LimitState`` for this GPU, if it set one."""
        managed = limit is not None
        return cls(
            bus_id,
            index,
            stats.bytes_in_use,
            stats.window_peak_bytes_in_use,
            stats.peak_bytes_in_use,
            stats.pool_bytes,
            stats.stable_bytes,
            stats.host_bytes_in_use,
            stats.host_window_peak_bytes_in_use,
            stats.host_bytes_limit,
            stats.num_host_fallbacks,
            stats.swap_reason,
            stats.bytes_limit if managed else None,
            limit.asked if managed else None,
            limit.reason if managed else "",
        )


@dataclass(frozen=True, slots=True)
class StepReport:
    """Tell: one finished step of ``graph_id`` (``duration_us``) and its GPUs' figures."""

    graph_id: str
    duration_us: float
    gpus: Mapping[str, GpuUsage] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Flush:
    """Ask: check now and write the current status whatever changed; replies True once written,
    False when there is nothing to report yet or the write failed (it is retried later)."""


@dataclass(frozen=True, slots=True)
class GetStatus:
    """Ask: the last written status (a copy) or None. ``extra=True`` adds an ``"extra"`` key
    (lifetime device peaks per GPU, write counters) that the file itself never contains."""

    extra: bool = False


@dataclass(frozen=True, slots=True)
class GetStats:
    """Ask: a ``DumperStats``."""


@dataclass(frozen=True, slots=True)
class Settle:
    """Ask: reply a ``DumperStats`` once no write is in flight or requested."""


@dataclass(frozen=True, slots=True)
class DumperStats:
    """The dumper's counters: reports handled, checks made, writes done and failed, last error."""

    reports: int
    checks: int
    writes: int
    write_failures: int
    last_error: str | None


class _Graph:
    __slots__ = ("last_seen", "mean", "samples", "written_mean")

    def __init__(self, window: int) -> None:
        self.samples: deque[float] = deque(maxlen=window)
        self.last_seen = 0.0
        self.mean: float | None = None
        self.written_mean: float | None = None


class _Window:
    """One GPU's figures over the steps since the last write."""

    __slots__ = ("dev_max", "dev_min", "fallbacks_before", "host_max", "host_min", "last")

    def __init__(self, u: GpuUsage, fallbacks_before: int) -> None:
        self.dev_max, self.dev_min, self.host_max, self.host_min = 0, u.bytes_in_use, 0, u.host_bytes_in_use
        self.fallbacks_before = fallbacks_before
        self.add(u)

    def add(self, u: GpuUsage) -> None:
        self.dev_max = max(self.dev_max, u.window_peak_bytes_in_use, u.bytes_in_use)
        self.dev_min = min(self.dev_min, u.bytes_in_use)
        self.host_max = max(self.host_max, u.host_window_peak_bytes_in_use, u.host_bytes_in_use)
        self.host_min = min(self.host_min, u.host_bytes_in_use)
        self.last = u

    def merge(self, newer: _Window) -> _Window:
        self.dev_max, self.dev_min = max(self.dev_max, newer.dev_max), min(self.dev_min, newer.dev_min)
        self.host_max, self.host_min = max(self.host_max, newer.host_max), min(self.host_min, newer.host_min)
        self.last = newer.last
        return self

    def fields(self) -> dict[str, Any]:
        u = self.last
        swapped = u.num_host_fallbacks > self.fallbacks_before and u.swap_reason in ("OOM", "FRAGMENT")
        return {
            "deviceMemUsedMax": self.dev_max,
            "deviceMemUsedMin": self.dev_min,
            "deviceMemPoolSize": u.pool_bytes,
            "deviceMemStable": u.stable_bytes,
            "hostMemUsedMax": self.host_max,
            "hostMemUsedMin": self.host_min,
            "hostMemPoolSize": u.host_bytes_limit,
            "swapReason": u.swap_reason if swapped else "",
            **self.limit_fields(),
        }

    def limit_fields(self) -> dict[str, Any]:
        """antcolony's fields after AntMan's (config/status_file.py OPTIONAL_GPU_FIELDS), once the
        job's resource manager has set a limit on this GPU."""
        u = self.last
        if u.bytes_limit is None:
            return {}
        return {
            "deviceMemLimit": u.bytes_limit,
            "deviceMemLimitAsked": u.limit_asked or 0,
            "deviceMemLimitReason": u.limit_reason,
            "hostFallbacks": u.num_host_fallbacks,
        }


def _huge(old: float, new: float, factor: float) -> bool:
    low, high = sorted((old, new))
    return high > 0 and high >= factor * low


def _resolve(waiters: list[asyncio.Future[bool]], ok: bool) -> None:
    for waiter in waiters:
        if not waiter.done():
            waiter.set_result(ok)


def _unset_clock() -> float:
    raise RuntimeError("the statistics dumper reads the loop's clock only once started")


class StatisticsDumper(Actor):
    """Keeps the status file at ``path`` (one dumper per job/session); runs in its own actor.

    Rules (AntMan's GPUStatistics, defects fixed): each graph keeps its last ``window`` step
    durations. A step ``huge_change`` times slower or faster than the oldest one in its window
    triggers a check at once; otherwise a report triggers a check when ``interval`` seconds have
    passed since the last one (and at the first report). A check recomputes the mean of every
    graph that reported within ``idle_after`` seconds, and requests a write when a mean moved by
    >= ``mean_threshold`` relative to the mean last written, a graph appeared, the set of idle
    graphs changed, or a memory figure changed (NVML's figure is not compared: it includes other
    processes). Memory maxima and minima are per window: over the steps since the last write.

    Writes run one at a time in a runtime task (requests made meanwhile coalesce into one later
    write) through ``write_status_atomic``, so a reader never sees a torn file. NVML is queried in
    a worker thread at write time. A failed write is logged (path, reason) and retried at the next
    check, with the failed window's figures kept; nothing is raised to the reporter. Stopping
    lets a write in flight finish but starts no new one (ask ``Flush`` first for a final write).
    """

    def __init__(
        self,
        path: str,
        interval: float = 10.0,
        idle_after: float = 100.0,
        window: int = 10,
        huge_change: float = 10.0,
        mean_threshold: float = 0.01,
        clock: Callable[[], float] | None = None,
        nvml: NvmlReader | None = None,
    ) -> None:
        if window < 1 or huge_change <= 1 or interval < 0 or idle_after <= 0 or mean_threshold < 0:
            raise ValueError(
                "StatisticsDumper needs window >= 1, huge_change > 1, interval >= 0, "
                "idle_after > 0 and mean_threshold >= 0"
            )
        self.path, self.interval, self.idle_after, self.window = str(path), interval, idle_after, window
        self.huge_change, self.mean_threshold = huge_change, mean_threshold
        self._clock: Callable[[], float] = clock or _unset_clock  # the loop's clock once started
        self._owns_nvml = nvml is None
        self._nvml = nvml if nvml is not None else NvmlReader()
        self._graphs: dict[str, _Graph] = {}
        self._windows: dict[str, _Window] = {}  # normalised bus id -> figures since last write
        self._fallback_base: dict[str, int] = {}  # num_host_fallbacks when the window began
        self._bus_ids: dict[str, str] = {}  # normalised -> as reported (for NVML)
        self._lifetime_peak: dict[str, int] = {}
        self._written_fields: dict[str, dict[str, Any]] = {}
        self._written_active: frozenset[str] = frozenset()
        self._last_check: float | None = None
        self._last_status: dict[str, Any] | None = None
        self._dirty = False
        self._write_requested = False
        self._writer: asyncio.Task[None] | None = None
        self._waiters: list[asyncio.Future[bool]] = []
        self._stopped = False
        self._reports = self._checks = self._writes = self._failures = 0
        self._last_error: str | None = None

    def on_start(self) -> None:
        if self._clock is _unset_clock:
            self._clock = self.runtime.loop.time

    def on_stop(self) -> None:
        self._stopped = True
        if self._owns_nvml and self._nvml.available:
            self.runtime.loop.run_in_executor(None, self._nvml.close)

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, StepReport):
            self._record(message)
            return None
        if isinstance(message, Flush):
            return self._flush()
        if isinstance(message, GetStatus):
            return self._status(message.extra)
        if isinstance(message, GetStats):
            return self._stats()
        if isinstance(message, Settle):
            return self._settle()
        return super().on_receive(message)

    # -- recording and checking ------------------------------------------------------------------

    def _record(self, report: StepReport) -> None:
        now = self._clock()
        self._reports += 1
        duration = float(report.duration_us)
        if not math.isfinite(duration) or duration < 0:
            # A tell that raised would get the dumper stopped by its supervisor: drop bad input.
            logger.warning("statistics: ignoring step of %s with duration %r us", report.graph_id, duration)
            return
        graph = self._graphs.get(report.graph_id)
        if graph is None:
            graph = self._graphs[report.graph_id] = _Graph(self.window)
        huge = bool(graph.samples) and _huge(graph.samples[0], duration, self.huge_change)
        graph.samples.append(duration)
        graph.last_seen = now
        for usage in report.gpus.values():
            try:
                key = normalize_bus_id(usage.bus_id)
            except ValueError as exc:
                logger.warning("statistics: ignoring figures of a GPU: %s", exc)
                continue
            self._bus_ids[key] = usage.bus_id
            self._lifetime_peak[key] = max(self._lifetime_peak.get(key, 0), usage.peak_bytes_in_use)
            window = self._windows.get(key)
            if window is None:
                self._windows[key] = _Window(usage, self._fallback_base.get(key, 0))
            else:
                window.add(usage)
        if huge or self._last_check is None or now - self._last_check >= self.interval:
            self._check(now)

    def _active(self, now: float) -> frozenset[str]:
        return frozenset(g for g, s in self._graphs.items() if now - s.last_seen < self.idle_after)

    def _gpu_fields(self) -> dict[str, dict[str, Any]]:
        fields = dict(self._written_fields)  # a GPU with no step since the last write keeps its figures
        fields.update((key, window.fields()) for key, window in self._windows.items())
        return fields

    def _check(self, now: float, force: bool = False) -> None:
        self._checks += 1
        self._last_check = now
        changed = force or self._dirty
        active = self._active(now)
        for graph_id, graph in self._graphs.items():
            if graph_id in active or graph.mean is None:
                graph.mean = fmean(graph.samples)
            written = graph.written_mean
            if written is None or (
                graph.mean != written and abs(graph.mean - written) >= self.mean_threshold * abs(written)
            ):
                changed = True
        if changed or active != self._written_active or self._gpu_fields() != self._written_fields:
            self._request_write()

    # -- writing -------------------------------------------------------------------------------

    def _request_write(self) -> None:
        self._write_requested = True
        if self._stopped or (self._writer is not None and not self._writer.done()):
            return
        try:
            self._writer = self.runtime.create_task(self._write_loop(), name=f"{self.ref.name}.write")
        except Exception as exc:
            logger.debug("statistics: no write of %s: %r", self.path, exc)
            waiters, self._waiters = self._waiters, []
            _resolve(waiters, False)

    async def _write_loop(self) -> None:
        waiters: list[asyncio.Future[bool]] = []
        try:
            while self._write_requested and not self._stopped:
                self._write_requested = False
                waiters, self._waiters = self._waiters, []
                _resolve(waiters, await self._write_once())
                waiters = []
        finally:  # cancelled (runtime shutdown) or stopped: nobody waits forever
            _resolve(waiters + (self._waiters if self._stopped else []), False)

    def _snapshot(self) -> tuple[dict[str, dict[str, Any]], float, dict[str, float], dict[str, _Window]]:
        """Take the figures to write and start new windows (the baselines of later checks)."""
        fields = self._gpu_fields()
        active = self._active(self._clock())
        means = {g: s.mean for g, s in self._graphs.items() if s.mean is not None}
        for graph in self._graphs.values():
            graph.written_mean = graph.mean
        windows, self._windows = self._windows, {}
        for key, window in windows.items():
            self._fallback_base[key] = window.last.num_host_fallbacks
        self._written_fields, self._written_active = fields, active
        mini_batch = max((means[g] for g in active if g in means), default=0.0)
        return fields, mini_batch, means, windows

    async def _write_once(self) -> bool:
        fields, mini_batch, means, windows = self._snapshot()
        try:
            nvidia = await self._nvml.read_used(self._bus_ids.get(key, key) for key in fields)
            usage = {
                key: {**f, "deviceMemUsedNvidia": nvidia.get(self._bus_ids.get(key, key), -1)}
                for key, f in fields.items()
            }
            status = build_status(usage, mini_batch, means)
            await write_status_atomic(self.path, status)
        except Exception as exc:
            self._write_failed(exc, windows)
            return False
        if self._last_error is not None:
            logger.info("statistics: wrote %s again after %d failed writes", self.path, self._failures)
        self._last_status, self._last_error, self._dirty = status, None, False
        self._writes += 1
        return True

    def _write_failed(self, exc: Exception, windows: dict[str, _Window]) -> None:
        self._failures += 1
        self._dirty = True
        # Put the unwritten window back in front of the steps recorded since, so no peak is lost.
        for key, old in windows.items():
            newer = self._windows.get(key)
            self._windows[key] = old if newer is None else old.merge(newer)
            self._fallback_base[key] = old.fallbacks_before
        reason = f"{type(exc).__name__}: {exc}"
        log = logger.debug if reason == self._last_error else logger.warning
        log("statistics: cannot write status file %s (%s); retrying at the next check", self.path, reason)
        self._last_error = reason

    # -- asks ----------------------------------------------------------------------------------

    async def _flush(self) -> bool:
        if not self._graphs and not self._windows:
            return False
        waiter: asyncio.Future[bool] = self.runtime.loop.create_future()
        self._waiters.append(waiter)
        self._check(self._clock(), force=True)
        return await waiter

    async def _settle(self) -> DumperStats:
        while self._writer is not None and not self._writer.done():
            await asyncio.wait({self._writer})
        return self._stats()

    def _status(self, extra: bool) -> dict[str, Any] | None:
        if self._last_status is None:
            return None
        status = copy.deepcopy(self._last_status)
        if extra:
            status["extra"] = {
                "gpus": {
                    key: {"deviceMemUsedMaxLifetime": peak} for key, peak in self._lifetime_peak.items()
                },
                "writes": self._writes,
                "writeFailures": self._failures,
                "lastError": self._last_error,
            }
        return status

    def _stats(self) -> DumperStats:
        return DumperStats(self._reports, self._checks, self._writes, self._failures, self._last_error)
