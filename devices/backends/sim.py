"""The simulated GPU backend: numpy arrays, in-order streams of one thread each.

It is honest about what it simulates: kernels really run (on the stream's own thread, so work
on different streams overlaps), PCI bus ids are synthetic (``0000:0N:00.0``), and memory is
accounted by the same allocators a CUDA GPU uses. Nothing above the backend knows it is simulated.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from functools import partial
from time import perf_counter
from typing import Any

import numpy as np

from ..sim_ledger import SharedAddressSpace, SimGpuLedger
from . import register_backend
from .base import GpuBackend, GpuInfo, OnDone, Stream
from .threaded import ThreadedStream

logger = logging.getLogger(__name__)


class SimStream(ThreadedStream):
    """A simulated CUDA stream: its own thread runs its queue back to back, in launch order."""

    thread_prefix = "sim-gpu"

    def record_event(self) -> Any:
        """A ``threading.Event`` this stream's thread sets when it reaches it in its queue: after
        every launch enqueued before it has finished."""
        event = threading.Event()
        self._on_thread(event.set)
        return event

    def wait_event(self, event: Any) -> None:
        """This stream's thread blocks on ``event`` (a ``record_event`` of any simulated stream)
        when it reaches this point of its queue, so later launches run after the recorded ones."""
        self._on_thread(partial(self._wait, event))

    def _execute(self, box: list[Any]) -> None:
        fn, args, token = box
        box.clear()
        start = perf_counter()
        cell: list[Any] = []
        error = None
        try:
            cell.append(fn(*args))
        except Exception as exc:
            error = exc
        end = perf_counter()
        # The inputs are dropped before completion is reported: a freed tensor's memory is back
        # in the allocator by the time the step can see the kernel as done.
        del fn, args
        self._complete(token, cell, error, start, end)
        # The error's traceback holds this frame: without this its locals would hold the error,
        # a cycle keeping the failed kernel's inputs (device memory, in the deeper frames) until
        # the garbage collector runs, when nobody takes the error (its node already stopped).
        del error


@register_backend("sim")
class SimBackend(GpuBackend):
    """``count`` simulated GPUs of ``memory`` bytes each."""

    name = "sim"

    def __init__(self, count: int = 1, memory: int = 16 << 30) -> None:
        super().__init__()
        if count < 0:
            raise ValueError(f"sim_gpu_count must be >= 0, got {count}")
        if memory <= 0:
            raise ValueError(f"sim_gpu_memory must be > 0 bytes, got {memory}")
        self.count = count
        self.memory = memory
        self._ledgers: dict[int, SimGpuLedger] = {}
        self._spaces: list[SharedAddressSpace] = []

    def ledger(self, index: int) -> SimGpuLedger:
        """The machine-wide record of GPU ``index``'s memory (shared with other processes)."""
        ledger = self._ledgers.get(index)
        if ledger is None:
            ledger = self._ledgers[index] = SimGpuLedger(self.info(index).bus_id, self.memory)
        return ledger

    def device_sub_allocator(self, index: int) -> Any:
        try:
            ledger = self.ledger(index)
            ledger.probe()  # the runtime directory is usable
        except OSError as exc:
            logger.warning(
                "simulated GPU %d: cannot use the machine-wide memory ledger (%s); its memory is this "
                "process's alone. Set ANTCOLONY_RUNTIME_DIR to a writable directory to share it.",
                index,
                exc,
            )
            return super().device_sub_allocator(index)
        space = SharedAddressSpace(ledger, name=f"gpu{index}")
        self._spaces.append(space)
        return space

    def memory_reader(self) -> Any:
        return SimMemoryReader(self)

    def close(self) -> None:
        for space in self._spaces:
            space.close()
        self._spaces.clear()

    def _device_count(self) -> int:
        return self.count

    def _device_info(self, index: int) -> GpuInfo:
        return GpuInfo(index, f"0000:{index + 1:02x}:00.0", self.memory, "Simulated GPU")

    def _array_module(self) -> Any:
        return np

    def _create_stream(
        self, index: int, label: str, loop: asyncio.AbstractEventLoop, on_done: OnDone
    ) -> Stream:
        return SimStream(self, index, label, loop, on_done)

    def _to_device(self, index: int, value: Any) -> Any:
        # A real copy, so device and host values never alias (as with a PCIe transfer).
        return np.array(value, copy=True)

    def _to_host(self, index: int, value: Any) -> Any:
        return np.array(value, copy=True)


class SimMemoryReader:
    """``deviceMemUsedNvidia`` of simulated GPUs: the device total across processes, from the
    ledger (what NVML reports on a real GPU). Same interface as ``NvmlReader``."""

    available = True

    def __init__(self, backend: SimBackend) -> None:
        self._by_bus = {info.bus_id: info.index for info in backend.infos()}
        self._backend = backend

    async def read_used(self, bus_ids: Any) -> dict[str, int]:
        ids = list(bus_ids)
        return await asyncio.to_thread(self._read, ids)

    def _read(self, bus_ids: list[str]) -> dict[str, int]:
        out = {}
        for bus_id in bus_ids:
            index = self._by_bus.get(bus_id)
            if index is None:
                index = next((i for full, i in self._by_bus.items() if full.endswith(bus_id)), None)
            out[bus_id] = -1 if index is None else self._backend.ledger(index).used_bytes()
        return out

    def close(self) -> None:
        """Nothing to release."""
