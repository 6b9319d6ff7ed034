"""The resource manager of one job (process): AntMan's GPUResourceManagement, defects fixed.

One manager per config file per process (Runtime), shared by every session that names the file,
as AntMan's is per TF process. A FileListener actor publishes each valid new version of the
config; the manager applies it at the next step boundary of any of its sessions (a POST run
action, phase 2, in the task that called ``session.run``):

- ``maxDeviceMem`` per GPU: the process's allocator stack on that GPU (shared by all its
  sessions) is adjusted, clamped to the initial limit; a shrink that live data blocked is
  logged at WARNING with what blocks it and retried at every later boundary until reached or
  superseded by a newer config.
- ``perfControl`` p in 1..99: every GPU worker keeps its device busy at most p % of the time
  (``devices/gpu_share.py``: launches wait while the device owes idle time), and each step ends
  with a pause for the idle time its GPUs still owe, spread over steps by a ``StepSmoother`` so
  a step plus its pause lasts the running mean of ``gpu_busy_time * 100 / p``. p = 0 suspends each caller at its step boundary (memory kept)
  until a config with p > 0 arrives or its session closes.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from dataclasses import dataclass
from typing import Any

from antcolony.actors.run_actions import RunAction, RunContext, RunGroup, SessionView
from antcolony.config.file_listener import ConfigSnapshot, Poll, spawn_file_listener
from antcolony.config.resource_config import ResourceConfig
from antcolony.devices.allocator import format_bytes
from antcolony.devices.device_set import HOST
from antcolony.devices.gpu_share import DeferIdle, GetShareStats, OwedIdle, SetComputeShare
from antcolony.errors import CancelledError

from .step_smoother import StepSmoother

logger = logging.getLogger(__name__)

PHASE = 2


@dataclass(frozen=True)
class ResourceManagerStats:
    """Step accounting of a job under management (seconds): steps seen, post-step pauses,
    suspension, the perfControl in force, configs applied and the last one's latency; and the
    ``run`` calls suspended at their step boundary right now (perfControl 0)."""

    steps: int
    paused_s: float
    suspended_s: float
    perf_control: int
    configs_applied: int
    last_apply_latency_s: float | None
    suspended_callers: int = 0


@dataclass(frozen=True)
class LimitState:
    """One GPU's memory limit as asked by the config and as reached (bytes), and why not reached."""

    asked: int
    reached: int
    reason: str = ""


class ResourceManager:
    """Per-process service for one config file; see the module docstring.

    ``devices`` is the runtime's DeviceSet: ``memory(index)`` (the process's allocator stack on a
    GPU), ``gpu_workers`` and ``backend.infos()`` are all the manager uses of it.
    """

    def __init__(self, devices: Any, path: str, poll_interval: float) -> None:
        self.devices = devices
        self.path = path
        self.poll_interval = poll_interval
        self.perf_control = 100
        self.limits: dict[int, LimitState] = {}
        self._pending: ConfigSnapshot | None = None
        self._targets: dict[int, int] = {}  # GPU index -> limit not reached yet
        self._resume = asyncio.Event()
        self._closed = False
        self._steps = 0
        self._paused = self._suspended = 0.0
        self._suspended_callers = 0
        self._applied = 0
        self._latency: float | None = None
        # session -> (its smoother, when its last pause ended, its GPUs' busy totals then); a new
        # perfControl starts afresh
        self._smoothers: weakref.WeakKeyDictionary[
            Any, tuple[StepSmoother, float | None, dict[Any, float]]
        ] = weakref.WeakKeyDictionary()
        self.listener = spawn_file_listener(
            path, poll_interval, subscribers=(self._on_snapshot,), name=f"config:{path}"
        )
        self.action = RunAction(
            f"resource_manager:{path}", RunGroup.POST, PHASE, self.after_step, (CancelledError,)
        )

    # -- listener side ---------------------------------------------------------------------------
    def _on_snapshot(self, snapshot: ConfigSnapshot) -> None:
        """A new valid config (loop callback): applied at the next boundary; p > 0 resumes now."""
        self._pending = snapshot
        perf = snapshot.config.perf_control
        if perf is not None and perf > 0:
            self._resume.set()

    # -- step boundary ---------------------------------------------------------------------------
    async def after_step(self, ctx: RunContext) -> None:
        self._steps += 1
        snapshot, self._pending = self._pending, None
        if snapshot is not None:
            self._apply(snapshot)
        elif self._targets:
            self._retry_shrinks()
        if self.perf_control == 0:
            await self._suspend(ctx.session)
        elif self.perf_control < 100:
            await self._pause(ctx)

    def _apply(self, snapshot: ConfigSnapshot) -> None:
        config: ResourceConfig = snapshot.config
        self._targets.clear()
        for info in self.devices.backend.infos():
            limit = config.limit_for(info.bus_id, info.index)
            if limit is not None:
                self._set_limit(info.index, info.bus_id, limit)
        perf = config.perf_control
        if perf is not None and perf != self.perf_control:
            logger.info("%s: perfControl %d -> %d", self.path, self.perf_control, perf)
            self.perf_control = perf
            self._smoothers.clear()
            for worker in self.devices.gpu_workers:
                worker.tell(SetComputeShare(perf if perf > 0 else 100))
        self._applied += 1
        self._latency = asyncio.get_running_loop().time() - snapshot.loop_time

    def _set_limit(self, index: int, bus_id: str, limit: int) -> None:
        memory = self.devices.memory(index)
        reached = memory.adjust_limit(limit)
        wanted = min(limit, memory.adjustable.max_limit)
        reason = memory.limit_shortfall() if reached > wanted else ""
        self.limits[index] = LimitState(limit, reached, reason)
        if reached > wanted:
            self._targets[index] = wanted
            logger.warning(
                "%s: GPU %d (%s) memory limit asked %s, reached %s: %s; retrying at each step boundary",
                self.path,
                index,
                bus_id,
                format_bytes(limit),
                format_bytes(reached),
                reason,
            )
        else:
            logger.info(
                "%s: GPU %d (%s) memory limit -> %s (asked %s)",
                self.path,
                index,
                bus_id,
                format_bytes(reached),
                format_bytes(limit),
            )

    def _retry_shrinks(self) -> None:
        for index, target in list(self._targets.items()):
            memory = self.devices.memory(index)
            reached = memory.retry_limit()
            state = self.limits[index]
            if reached <= target:
                logger.info(
                    "%s: GPU %d memory limit reached %s after a retry",
                    self.path,
                    index,
                    format_bytes(reached),
                )
                del self._targets[index]
                self.limits[index] = LimitState(state.asked, reached)
            else:
                self.limits[index] = LimitState(state.asked, reached, memory.limit_shortfall())

    async def _pause(self, ctx: RunContext) -> None:
        """Pause for the idle time the step's GPUs owe (the step's share of the duty cycle), as
        the session's smoother spreads it; what it leaves owed is deferred, not forgiven."""
        workers = [self.devices.worker_for(d) for d in ctx.devices if d != HOST]
        if not workers:
            return
        replies = await asyncio.gather(*(w.ask(OwedIdle()) for w in workers))
        now = time.perf_counter()
        smoother, last_end, seen = self._smoothers.get(ctx.session, (StepSmoother(), None, {}))
        step_s = ctx.duration_us / 1e6 if last_end is None else now - last_end
        # the step's GPU busy time: on its busiest GPU, since this session's last step ended
        busy_s = (
            None
            if last_end is None
            else max(busy - seen.get(w, busy) for w, (_, busy) in zip(workers, replies))
        )
        owed = [o for o, _ in replies]
        pause = smoother.pause(step_s, max(owed), busy_s, self.perf_control)
        allowance = smoother.allowance(self.perf_control)
        for worker, its_owed in zip(workers, owed):
            worker.tell(DeferIdle(its_owed - pause, allowance))
        if pause > 0:
            self._paused += pause
            await asyncio.sleep(pause)
        seen.update((w, busy) for w, (_, busy) in zip(workers, replies))
        self._smoothers[ctx.session] = (smoother, time.perf_counter(), seen)

    async def _suspend(self, session: SessionView) -> None:
        logger.info("%s: perfControl 0: job suspended at a step boundary (memory kept)", self.path)
        started = time.perf_counter()
        self._suspended_callers += 1
        try:
            while self.perf_control == 0:
                self._resume.clear()
                if self._pending is not None and (self._pending.config.perf_control or 0) > 0:
                    self._apply_pending_now()
                    break
                await self._resume.wait()
                if self._closed or session.closed:
                    raise CancelledError(None, None, f"the session was closed while suspended by {self.path}")
        finally:
            self._suspended_callers -= 1
            self._suspended += time.perf_counter() - started
        logger.info("%s: job resumed (perfControl %d)", self.path, self.perf_control)

    def _apply_pending_now(self) -> None:
        snapshot, self._pending = self._pending, None
        if snapshot is not None:
            self._apply(snapshot)

    def wake(self) -> None:
        """Let suspended callers re-check (a session closing: its callers get CancelledError)."""
        self._resume.set()

    async def refresh(self) -> ConfigSnapshot | None:
        """Poll the config file now; returns the newest valid snapshot (applied at the next boundary)."""
        snapshot = await self.listener.ask(Poll())
        await asyncio.sleep(0)  # deliveries to subscribers are loop callbacks
        return snapshot

    # -- lifecycle and figures ---------------------------------------------------------------------
    def stats(self) -> ResourceManagerStats:
        return ResourceManagerStats(
            self._steps,
            self._paused,
            self._suspended,
            self.perf_control,
            self._applied,
            self._latency,
            self._suspended_callers,
        )

    async def share_stats(self) -> dict[int, Any]:
        """GPU index -> the worker's ``ShareStats`` (busy time, time launches were held)."""
        workers = self.devices.gpu_workers
        stats = await asyncio.gather(*(w.ask(GetShareStats()) for w in workers))
        return dict(enumerate(stats))

    async def aclose(self) -> None:
        """Wake suspended callers (they get CancelledError), stop the listener, unpace the GPUs and
        give them back their initial memory limits: no session follows the config any more."""
        self._closed = True
        self._resume.set()
        if self.perf_control != 100:
            for worker in self.devices.gpu_workers:
                if worker.is_alive:
                    worker.tell(SetComputeShare(100))
        for index in self.limits:
            memory = self.devices.memory(index)
            memory.adjust_limit(memory.adjustable.max_limit)
        self.limits.clear()
        self._targets.clear()
        if self.listener.is_alive:
            await self.listener.stop()
