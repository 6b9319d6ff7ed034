"""Engine settings: variant name and worker counts, from arguments or the environment.

A session's engine gets its counts from the ``SessionConfig`` (``DeviceSet`` passes them); the
environment is read here only for an engine built on its own, with the same variables and
meanings as ``SessionConfig`` (``config/env.py`` parses both).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

from antcolony.config.env import env_int, env_str
from antcolony.config.session_config import ENGINE_ALIASES
from antcolony.errors import ConfigError

ENGINE_TYPE_ENV = "ANTCOLONY_ENGINE_TYPE"

# setting name -> (environment variable, default or None for "number of cores")
_COUNTS: dict[str, tuple[str, int | None]] = {
    "gpu_worker_nthreads": ("ANTCOLONY_GPU_WORKER_NTHREADS", 2),
    "gpu_copy_nthreads": ("ANTCOLONY_GPU_COPY_NTHREADS", 1),
    "cpu_worker_nthreads": ("ANTCOLONY_CPU_WORKER_NTHREADS", None),
    "cpu_priority_nthreads": ("ANTCOLONY_CPU_PRIORITY_NTHREADS", 4),
}

# MXNet's MXNET_ENGINE_TYPE names are accepted as aliases of ours.
KIND_ALIASES: dict[str, str] = ENGINE_ALIASES
DEFAULT_KIND = "per_device"


@dataclass(frozen=True)
class EngineSettings:
    """Worker counts of an engine.

    gpu_worker_nthreads: compute workers per non-CPU device (env ``ANTCOLONY_GPU_WORKER_NTHREADS``,
        default 2).
    gpu_copy_nthreads: copy workers per device, for ``prop="copy"`` ops (env
        ``ANTCOLONY_GPU_COPY_NTHREADS``, default 1).
    cpu_worker_nthreads: workers of a CPU device, and of the ``pooled`` engine's one pool (env
        ``ANTCOLONY_CPU_WORKER_NTHREADS``, default: number of cores).
    cpu_priority_nthreads: the pool shared by all devices for ``prop="cpu_prioritized"`` ops (env
        ``ANTCOLONY_CPU_PRIORITY_NTHREADS``, default 4).
    """

    gpu_worker_nthreads: int = 2
    gpu_copy_nthreads: int = 1
    cpu_worker_nthreads: int = dataclasses.field(default_factory=lambda: max(1, os.cpu_count() or 1))
    cpu_priority_nthreads: int = 4

    @classmethod
    def resolve(cls, **overrides: Any) -> EngineSettings:
        """Settings from ``overrides``, then the environment, then the defaults."""
        unknown = sorted(set(overrides) - set(_COUNTS))
        if unknown:
            raise ConfigError(f"unknown engine setting(s) {unknown}; known: {sorted(_COUNTS)}")
        values: dict[str, int] = {}
        for name, (env, _default) in _COUNTS.items():
            value = overrides.get(name)
            if value is not None:
                values[name] = _positive(value, f"engine setting {name}")
            elif (from_env := env_int(env, minimum=1)) is not None:
                values[name] = from_env
        return cls(**values)


def _positive(raw: Any, what: str) -> int:
    try:
        value = int(raw)
        if isinstance(raw, (bool, float)) or value < 1:
            raise ValueError
    except (TypeError, ValueError):
        raise ConfigError(f"{what}={raw!r} must be an integer >= 1") from None
    return value


def resolve_kind(kind: str | None, known: list[str]) -> str:
    """The canonical variant name for ``kind`` (default: env ``ANTCOLONY_ENGINE_TYPE``)."""
    if kind is None:
        raw = env_str(ENGINE_TYPE_ENV) or ""
        what = f"environment variable {ENGINE_TYPE_ENV}={raw!r}"
        if not raw:
            return DEFAULT_KIND
    else:
        raw, what = kind, f"engine kind {kind!r}"
    name = KIND_ALIASES.get(raw, raw)
    if name not in known:
        choices = ", ".join(sorted(known) + sorted(KIND_ALIASES))
        raise ConfigError(f"{what} names no engine; choose one of {choices}")
    return name
