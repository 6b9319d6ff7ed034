"""GPU backends, one module per backend, registered by name: ``sim`` and ``cuda`` (CuPy)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from antcolony.errors import ConfigError, UnavailableError

logger = logging.getLogger(__name__)

BACKENDS: dict[str, type[Any]] = {}


def register_backend(name: str) -> Callable[[type[Any]], type[Any]]:
    def deco(cls: type[Any]) -> type[Any]:
        BACKENDS[name] = cls
        return cls

    return deco


def select_backend(kind: str, sim_count: int, sim_memory: int, cuda_virtual_memory: str = "auto") -> Any:
    """The backend for ``gpu_backend`` = auto | cuda | sim; ``auto`` logs which it picked and why.
    ``cuda_virtual_memory`` goes to the CUDA backend (whether its pools grow in place)."""
    from . import cuda, sim  # noqa: F401  (register both)

    if kind == "sim":
        return BACKENDS["sim"](sim_count, sim_memory)
    if kind == "cuda":
        return BACKENDS["cuda"](cuda_virtual_memory)
    if kind != "auto":
        raise ConfigError(f"gpu_backend must be 'auto', 'cuda' or 'sim', got {kind!r}")
    try:
        backend = BACKENDS["cuda"](cuda_virtual_memory)
    except UnavailableError as exc:
        logger.info(
            "gpu_backend=auto: using simulated GPUs (%d) because CUDA is unavailable: %s",
            sim_count,
            exc.message,
        )
        return BACKENDS["sim"](sim_count, sim_memory)
    logger.info("gpu_backend=auto: using CUDA (%d device(s))", backend.device_count())
    return backend
