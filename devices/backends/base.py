"""The GPU backend interface: the base class validates, backends fill small hooks.

A backend owns the physical (or simulated) GPUs: how many, their PCI bus ids and memory, the
array module kernels use (``xp``), streams, and host<->device copies. Everything above it (device
workers, executor, allocators, services) is shared by every backend.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from antcolony.devices.handoff import post

# on_done(result, error, start, end): called on the event loop when a launched function finished.
Done = Callable[[Any, "BaseException | None", float, float], None]


@dataclass(frozen=True)
class GpuInfo:
    """What a backend reports for one GPU."""

    index: int
    bus_id: str  # full PCI bus id, e.g. "0000:01:00.0"
    total_memory: int
    name: str


class Stream:
    """An in-order queue of work on one GPU (a CUDA stream, or a simulated one).

    ``launch(fn, args, on_done)`` enqueues ``fn(*args)``; ``on_done`` is called on the event loop
    once the work has completed on the device (through an event/host callback bridged with
    ``devices.handoff.post``), never by blocking the loop.
    """

    def __init__(self, backend: GpuBackend, device: int, label: str, loop: asyncio.AbstractEventLoop) -> None:
        self.backend = backend
        self.device = device
        self.label = label
        self.loop = loop

    def launch(self, fn: Callable[..., Any], args: list[Any], on_done: Done) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Release the stream; work already enqueued may still complete."""

    def _post(self, on_done: Done, cell: list[Any], error: BaseException | None, start: float) -> None:
        """Deliver a completion to the loop from any thread.

        The result travels in a one-item list the loop empties: a worker thread descheduled
        right after posting must not keep the value (and its device memory) alive.
        """
        if not post(
            self.loop,
            f"work on stream {self.label}",
            _deliver,
            on_done,
            cell,
            error,
            start,
            time.perf_counter(),
        ):
            cell.clear()


def _deliver(on_done: Done, cell: list[Any], error: BaseException | None, start: float, end: float) -> None:
    on_done(cell.pop() if cell else None, error, start, end)


class GpuBackend:
    """Base class of GPU backends. Subclasses implement the ``_hooks``; public methods validate."""

    name = "base"

    def __init__(self) -> None:
        self._infos: list[GpuInfo] | None = None

    # -- public, validated -------------------------------------------------------------
    def device_count(self) -> int:
        return len(self.infos())

    def infos(self) -> list[GpuInfo]:
        if self._infos is None:
            self._infos = [self._device_info(i) for i in range(self._device_count())]
        return self._infos

    def info(self, index: int) -> GpuInfo:
        infos = self.infos()
        if not 0 <= index < len(infos):
            raise IndexError(f"GPU {index} does not exist: the {self.name} backend has {len(infos)} GPU(s)")
        return infos[index]

    @property
    def xp(self) -> Any:
        """The array module kernels run with on this backend (numpy or cupy)."""
        return self._array_module()

    def create_stream(self, index: int, label: str, loop: asyncio.AbstractEventLoop) -> Stream:
        self.info(index)
        return self._create_stream(index, label, loop)

    def to_device(self, index: int, value: Any) -> Any:
        """Copy a host value to GPU ``index`` (runs on a copy stream's thread)."""
        return self._to_device(index, value)

    def to_host(self, index: int, value: Any) -> Any:
        """Copy a GPU value to host memory as numpy (runs on a copy stream's thread)."""
        return self._to_host(index, value)

    def close(self) -> None:
        """Release backend resources."""

    # -- memory hooks (the allocator stack above is shared by every backend) ------------------
    charges_on_allocation = False
    """True when the backend's array allocations go through the allocator stack themselves; else
    the values a GPU produces are charged to it after the fact (simulated memory)."""

    def device_sub_allocator(self, index: int) -> Any:
        """Where GPU ``index``'s BFC allocator gets its regions."""
        from ..allocator import VirtualAddressSpace

        return VirtualAddressSpace(self.info(index).total_memory, name=f"gpu{index}")

    def host_sub_allocator(self, index: int, limit: int) -> Any:
        """Where GPU ``index``'s host fallback gets its regions."""
        from ..allocator import VirtualAddressSpace

        return VirtualAddressSpace(limit, name=f"gpu{index}_host")

    def memory_reader(self) -> Any:
        """What reports a GPU's memory in use by every process (``deviceMemUsedNvidia``): None
        means NVML (a real GPU); a simulated backend returns its own reader."""
        return None

    def allocation_context(self, index: int) -> Any:
        """``vmem -> context manager`` routing the array module's allocations on GPU ``index``
        through ``vmem`` (entered on a stream thread around each kernel); None when values are
        charged after the fact instead."""
        return None

    # -- hooks implemented by backends -------------------------------------------------
    def _device_count(self) -> int:
        raise NotImplementedError("backend must report its device count")

    def _device_info(self, index: int) -> GpuInfo:
        raise NotImplementedError("backend must describe its devices")

    def _array_module(self) -> Any:
        raise NotImplementedError("backend must name its array module")

    def _create_stream(self, index: int, label: str, loop: asyncio.AbstractEventLoop) -> Stream:
        raise NotImplementedError("backend must create streams")

    def _to_device(self, index: int, value: Any) -> Any:
        raise NotImplementedError("backend must copy host to device")

    def _to_host(self, index: int, value: Any) -> Any:
        raise NotImplementedError("backend must copy device to host")
