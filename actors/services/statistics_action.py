"""The statistics POST run action (phase 1): report each step to the process's StatisticsDumper."""

from __future__ import annotations

from typing import Any

from antcolony.actors.run_actions import RunAction, RunContext, RunGroup

from .statistics import Flush, GpuUsage, StatisticsDumper, StepReport

PHASE = 1


class StatisticsReporter:
    """One per status file per process (Runtime), shared by every session naming the file.

    Spawns the dumper actor and tells it, after every step of any session, the step time (under
    the session's process-unique graph id) and the allocator figures of each GPU the process
    uses; then opens a new peak window on each, so the dumper sees per-step peaks
    (deviceMemUsedMax is per window, not AntMan's lifetime peak)."""

    def __init__(self, runtime: Any, devices: Any, path: str, interval: float, limits: Any = None) -> None:
        self.devices = devices
        self.path = path
        self.interval = interval
        # () -> {GPU index: LimitState}: the resource manager's asked/reached limits, when it has one
        self.limits = limits
        # deviceMemUsedNvidia: NVML on a real GPU, the machine-wide ledger on a simulated one
        self.dumper = runtime.spawn(
            StatisticsDumper, path, interval, nvml=devices.backend.memory_reader(), name=f"statistics:{path}"
        )
        self.action = RunAction(f"statistics:{path}", RunGroup.POST, PHASE, self.after_step)

    def after_step(self, ctx: RunContext) -> None:
        infos = self.devices.backend.infos()
        limits = self.limits() if self.limits is not None else {}
        gpus = {}
        for index, memory in self.devices.memories():
            bus_id = infos[index].bus_id
            gpus[bus_id] = GpuUsage.from_memory_stats(bus_id, index, memory.memory_stats(), limits.get(index))
            memory.reset_peak()
        self.dumper.tell(StepReport(ctx.graph_id, ctx.duration_us, gpus))

    async def flush(self) -> bool:
        """Write the status file now with the figures so far; False if nothing was written."""
        if not self.dumper.is_alive:
            return False
        return bool(await self.dumper.ask(Flush(), timeout=5.0))

    async def aclose(self) -> None:
        if self.dumper.is_alive:
            try:
                await self.dumper.ask(Flush(), timeout=5.0)
            finally:
                await self.dumper.stop()
