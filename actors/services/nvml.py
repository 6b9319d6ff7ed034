"""``NvmlReader``: the used device memory NVML reports for a GPU (``deviceMemUsedNvidia``)."""

from __future__ import annotations

import asyncio
import importlib
import logging
import threading
import warnings
from collections.abc import Iterable
from typing import Any

__all__ = ["NvmlReader"]

logger = logging.getLogger(__name__)


def _import_pynvml() -> Any:
    # The deprecated ``pynvml`` distribution installs an import hook that warns (FutureWarning) on
    # ``import pynvml`` even when the module comes from nvidia-ml-py; that must not break -W error.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return importlib.import_module("pynvml")


class NvmlReader:
    """Reads NVML's used memory per PCI bus id; -1 whenever NVML cannot tell.

    ``module`` is the NVML binding (default: ``pynvml`` from nvidia-ml-py, imported on first use);
    tests pass a fake with ``nvmlInit``, ``nvmlDeviceGetHandleByPciBusId``,
    ``nvmlDeviceGetMemoryInfo`` and optionally ``nvmlShutdown``.

    ``used_bytes`` blocks (NVML calls can take milliseconds) and is thread-safe: call it from a
    worker thread. ``read_used`` is the event-loop entry point: it runs the calls in a thread,
    and once NVML is known to be unusable answers -1 without leaving the loop. NVML is
    initialised once, lazily; if the module is missing or ``nvmlInit`` fails (no driver, no
    library, no permission) that is logged once at INFO and every answer is -1 until ``close``.
    A failing per-device lookup or query also gives -1 (logged once per bus id). Nothing raises.
    """

    def __init__(self, module: Any | None = None) -> None:
        self._module = module
        self._nvml: Any | None = None
        self._state: bool | None = None  # None: not tried yet; True: initialised; False: unusable
        self._handles: dict[str, Any] = {}
        self._reported: set[str] = set()
        self._lock = threading.Lock()

    @property
    def available(self) -> bool | None:
        """True once NVML initialised, False if it cannot be used, None before the first query."""
        return self._state

    def _ensure(self) -> Any | None:
        with self._lock:
            if self._state is None:
                try:
                    nvml = self._module if self._module is not None else _import_pynvml()
                    nvml.nvmlInit()
                except Exception as exc:
                    self._state = False
                    logger.info(
                        "NVML is not usable (%s: %s); deviceMemUsedNvidia will be -1", type(exc).__name__, exc
                    )
                else:
                    self._nvml, self._state = nvml, True
            return self._nvml if self._state else None

    def used_bytes(self, bus_id: str) -> int:
        """NVML's used memory (bytes) of the GPU at ``bus_id`` ("0000:01:00.0" or "01:00.0"),
        or -1. Blocking; call from a worker thread."""
        nvml = self._ensure()
        if nvml is None:
            return -1
        key = bus_id.strip()
        try:
            handle = self._handles.get(key)
            if handle is None:
                # NVML parses domain:bus:device.function with %x fields, so our form passes as is.
                handle = self._handles[key] = nvml.nvmlDeviceGetHandleByPciBusId(key)
            return int(nvml.nvmlDeviceGetMemoryInfo(handle).used)
        except Exception as exc:
            self._handles.pop(key, None)
            if key not in self._reported:
                self._reported.add(key)
                logger.info(
                    "NVML cannot report memory of GPU %s (%s: %s); using -1", key, type(exc).__name__, exc
                )
            return -1

    async def read_used(self, bus_ids: Iterable[str]) -> dict[str, int]:
        """``used_bytes`` for each bus id, queried in a worker thread (never on the loop)."""
        ids = list(dict.fromkeys(bus_ids))
        if not ids or self._state is False:
            return {bus_id: -1 for bus_id in ids}
        return await asyncio.to_thread(lambda: {bus_id: self.used_bytes(bus_id) for bus_id in ids})

    def close(self) -> None:
        """Shut NVML down if this reader initialised it (blocking); a later query re-initialises."""
        with self._lock:
            nvml, initialised = self._nvml, self._state is True
            self._nvml, self._state = None, None
            self._handles.clear()
        if initialised and callable(shutdown := getattr(nvml, "nvmlShutdown", None)):
            try:
                shutdown()
            except Exception as exc:
                logger.debug("nvmlShutdown failed: %r", exc)
