"""The engine variants, chosen by name: naive, pooled, per_device."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from antcolony.devices.thread_pool import PriorityPool

from .engine import Engine
from .settings import EngineSettings, resolve_kind
from .var import Var, _Op

ENGINES: dict[str, type[Engine]] = {}


def register_engine(name: str) -> Callable[[type[Engine]], type[Engine]]:
    """Class decorator: make an Engine subclass selectable as ``create_engine(name)``."""

    def register(cls: type[Engine]) -> type[Engine]:
        cls.kind = name
        ENGINES[name] = cls
        return cls

    return register


def create_engine(kind: str | None = None, **settings: Any) -> Engine:
    """A new engine of variant ``kind`` (default: env ``ANTCOLONY_ENGINE_TYPE``, else per_device).

    ``kind`` also accepts MXNet's names (NaiveEngine, ThreadedEngine, ThreadedEnginePerDevice).
    ``settings`` are ``EngineSettings`` fields; those left out come from the environment.
    Raises ``ConfigError`` for an unknown kind or an invalid count.
    """
    name = resolve_kind(kind, list(ENGINES))
    return ENGINES[name](EngineSettings.resolve(**settings))


@register_engine("naive")
class NaiveEngine(Engine):
    """Runs ops one at a time in push order (for debugging): every op also writes one hidden var.

    Synchronous bodies run on a single worker thread, so the loop is never blocked; priorities
    and devices are recorded but do not reorder anything.
    """

    def __init__(self, settings: EngineSettings | None = None) -> None:
        super().__init__(settings)
        self._pool = PriorityPool("engine-naive", 1, self._run_in_thread)
        self._serial = (Var(self, "naive-serial"),)

    def _extra_writes(self) -> tuple[Var, ...]:
        return self._serial

    def _pool_for(self, op: _Op) -> PriorityPool:
        return self._pool

    def _pools(self) -> Iterable[PriorityPool]:
        return (self._pool,)


@register_engine("pooled")
class PooledEngine(Engine):
    """One thread pool of ``cpu_worker_nthreads`` shared by every device and prop."""

    def __init__(self, settings: EngineSettings | None = None) -> None:
        super().__init__(settings)
        self._pool = PriorityPool("engine-pooled", self.settings.cpu_worker_nthreads, self._run_in_thread)

    def _pool_for(self, op: _Op) -> PriorityPool:
        return self._pool

    def _pools(self) -> Iterable[PriorityPool]:
        return (self._pool,)


CPU_DEVICE = "/device:CPU:0"


@register_engine("per_device")
class PerDeviceEngine(Engine):
    """MXNet's ThreadedEnginePerDevice: pools per device key, created on first use.

    A device whose name contains "cpu" (and ``device=None``, meaning ``/device:CPU:0``) gets
    ``cpu_worker_nthreads`` compute workers; any other device key gets ``gpu_worker_nthreads``.
    ``prop="copy"`` ops use the device's own copy pool (``gpu_copy_nthreads``), so copies
    overlap compute; ``prop="cpu_prioritized"`` ops share one pool of ``cpu_priority_nthreads``.
    """

    def __init__(self, settings: EngineSettings | None = None) -> None:
        super().__init__(settings)
        self._by_key: dict[tuple[Any, str], PriorityPool] = {}

    def _pool_for(self, op: _Op) -> PriorityPool:
        device = CPU_DEVICE if op.device is None else op.device
        if op.prop == "cpu_prioritized":
            key: tuple[Any, str] = (None, "cpu_priority")
        elif op.prop == "copy":
            key = (device, "copy")
        else:
            key = (device, "compute")
        pool = self._by_key.get(key)
        if pool is None:
            pool = self._by_key[key] = PriorityPool(
                f"engine-{key[0] or 'shared'}-{key[1]}", self._nthreads(*key), self._run_in_thread
            )
        return pool

    def _nthreads(self, device: Any, role: str) -> int:
        s = self.settings
        if role == "cpu_priority":
            return s.cpu_priority_nthreads
        if role == "copy":
            return s.gpu_copy_nthreads
        return s.cpu_worker_nthreads if "cpu" in str(device).lower() else s.gpu_worker_nthreads

    def _pools(self) -> Iterable[PriorityPool]:
        return tuple(self._by_key.values())

    def pools(self) -> dict[tuple[Any, str], int]:
        """Thread counts of the pools created so far, keyed by (device, role)."""
        return {key: pool.nthreads for key, pool in self._by_key.items()}
