"""The AntMan services of one process (Runtime), shared by all of its sessions.

An AntMan job is a process: its GPU memory limits, compute share and status file are the
process's, whatever number of sessions it runs. ``JobServices`` (a Runtime extension) keeps one
resource manager per config file and one statistics reporter per status file, counts the
sessions using each, closes each when its last session closes, and hands out graph ids unique
within the process (``graph_1``, ``graph_2``, ... across sessions).
"""

from __future__ import annotations

import itertools
from typing import Any

from antcolony.errors import ConfigError

from .resource_manager import ResourceManager
from .statistics_action import StatisticsReporter


class JobServices:
    """Per-Runtime registry of the job's shared services; see the module docstring."""

    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime
        self.managers: dict[str, ResourceManager] = {}
        self.reporters: dict[str, StatisticsReporter] = {}
        self._users: dict[int, int] = {}
        self._graph_ids = itertools.count(1)

    def next_graph_id(self) -> str:
        return f"graph_{next(self._graph_ids)}"

    def resource_manager(self, devices: Any, path: str, poll_interval: float) -> ResourceManager:
        manager = self.managers.get(path)
        if manager is None and self.managers:
            # Limits and the compute share are the process's: two files would fight over them.
            raise ConfigError(
                f"SessionConfig.resource_config_file={path!r}, but this process already follows "
                f"{next(iter(self.managers))!r}; a job (process) has one resource config, shared by all of "
                "its sessions: give every session the same file, or run the job in its own process"
            )
        if manager is None:
            manager = self.managers[path] = ResourceManager(devices, path, poll_interval)
        elif manager.poll_interval != poll_interval:
            raise ConfigError(
                f"SessionConfig.config_poll_interval={poll_interval} differs from the {manager.poll_interval} "
                f"of the session that opened {path} in this process; sessions sharing a config file share its "
                "listener: use the same interval"
            )
        return self._use(manager)

    def statistics(self, devices: Any, path: str, interval: float) -> StatisticsReporter:
        reporter = self.reporters.get(path)
        if reporter is None:
            reporter = self.reporters[path] = StatisticsReporter(
                self.runtime, devices, path, interval, self._limits
            )
        elif reporter.interval != interval:
            raise ConfigError(
                f"SessionConfig.statistics_interval={interval} differs from the {reporter.interval} of the "
                f"session that opened {path} in this process; sessions sharing a status file share its "
                "dumper: use the same interval"
            )
        return self._use(reporter)

    def _limits(self) -> dict[int, Any]:
        limits: dict[int, Any] = {}
        for manager in self.managers.values():
            limits.update(manager.limits)
        return limits

    def _use(self, service: Any) -> Any:
        self._users[id(service)] = self._users.get(id(service), 0) + 1
        return service

    async def release(self, service: Any) -> None:
        """A session stops using ``service``; the last one out closes it."""
        left = self._users.get(id(service), 0) - 1
        if left > 0:
            self._users[id(service)] = left
            return
        self._users.pop(id(service), None)
        for registry in (self.managers, self.reporters):
            for path, svc in list(registry.items()):
                if svc is service:
                    del registry[path]
        await service.aclose()

    async def aclose(self) -> None:
        services: list[ResourceManager | StatisticsReporter] = [
            *self.managers.values(),
            *self.reporters.values(),
        ]
        self.managers.clear()
        self.reporters.clear()
        self._users.clear()
        for service in services:
            await service.aclose()


def job_services(runtime: Any) -> JobServices:
    return runtime.extension("antcolony.job_services", JobServices)
