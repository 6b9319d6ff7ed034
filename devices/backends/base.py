"""The GPU backend interface: the base class validates, backends fill small hooks.

A backend owns the physical (or simulated) GPUs: how many, their PCI bus ids and memory, the
array module kernels use (``xp``), streams, and host<->device copies. Everything above it (device
workers, executor, allocators, services) is shared by every backend.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from antcolony.devices.handoff import post

#: One finished launch: ``(token, result, error, start, end)``; ``token`` is what ``launch`` was
#: given, ``start``/``end`` are ``time.perf_counter`` seconds of the work on the device.
Completion = tuple[Any, Any, "BaseException | None", float, float]
#: on_done(batch): called on the event loop with the completions (in stream order) that arrived
#: since the last call.
OnDone = Callable[[list[Completion]], None]


@dataclass(frozen=True)
class GpuInfo:
    """What a backend reports for one GPU."""

    index: int
    bus_id: str  # full PCI bus id, e.g. "0000:01:00.0"
    total_memory: int
    name: str


class Stream:
    """An in-order queue of work on one GPU (a CUDA stream, or a simulated one).

    ``launch(fn, args, token)`` enqueues ``fn(*args)`` and returns at once; the stream runs its
    queue back to back. Each launch completes as a ``Completion`` carrying ``token``, delivered
    to ``on_done`` on the event loop: completions that arrive while the loop is busy travel
    together, so a stream costs the loop one wake-up per batch, not one per kernel. Nothing
    blocks the loop.
    """

    def __init__(
        self, backend: GpuBackend, device: int, label: str, loop: asyncio.AbstractEventLoop, on_done: OnDone
    ) -> None:
        self.backend = backend
        self.device = device
        self.label = label
        self.loop = loop
        self._on_done = on_done
        self._done: list[Completion] = []
        self._done_lock = threading.Lock()
        self._posted = False  # a flush is scheduled on the loop (under _done_lock)
        self._what = f"work on stream {label}"

    def launch(self, fn: Callable[..., Any], args: list[Any], token: Any) -> None:
        raise NotImplementedError

    def record_event(self) -> Any:
        """An event that completes once everything enqueued on this stream so far has finished
        on the device (``cudaEventRecord``). Extension hook: returns at once, never blocks."""
        raise NotImplementedError

    def wait_event(self, event: Any) -> None:
        """Work enqueued on this stream from now on starts only once ``event`` (from any
        stream's ``record_event`` of this backend) has completed (``cudaStreamWaitEvent``): the
        ordering is kept on the device, not by a host round trip. Extension hook: returns at
        once, never blocks."""
        raise NotImplementedError

    def drop(self, match: Callable[[Any], bool]) -> asyncio.Future[None]:
        """From now on, launches whose token ``match`` selects are not run when the stream
        reaches them: each completes at once with a ``LaunchDropped`` error (its inputs let go).
        The future (on the stream's loop) is done once every launch enqueued before this call
        has finished on the device or been dropped."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the stream; work already enqueued may still complete."""

    def _complete(
        self, token: Any, cell: list[Any], error: BaseException | None, start: float, end: float
    ) -> None:
        """Report one finished launch; callable from any thread. Its result rides in ``cell`` (a
        one-item list, or empty), emptied here: the value then lives only in the batch the loop
        takes, so a stream thread descheduled after reporting keeps no device memory alive."""
        with self._done_lock:
            self._done.append((token, cell.pop() if cell else None, error, start, end))
            if self._posted:
                return
            self._posted = True
        if not post(self.loop, self._what, self._flush):
            with self._done_lock:
                self._done.clear()

    def _flush(self) -> None:
        with self._done_lock:
            batch, self._done = self._done, []
            self._posted = False
        self._on_done(batch)


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

    def create_stream(
        self, index: int, label: str, loop: asyncio.AbstractEventLoop, on_done: OnDone
    ) -> Stream:
        """A new stream on GPU ``index``; its completions go to ``on_done`` on ``loop``."""
        self.info(index)
        return self._create_stream(index, label, loop, on_done)

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

    def _create_stream(
        self, index: int, label: str, loop: asyncio.AbstractEventLoop, on_done: OnDone
    ) -> Stream:
        raise NotImplementedError("backend must create streams")

    def _to_device(self, index: int, value: Any) -> Any:
        raise NotImplementedError("backend must copy host to device")

    def _to_host(self, index: int, value: Any) -> Any:
        raise NotImplementedError("backend must copy device to host")
