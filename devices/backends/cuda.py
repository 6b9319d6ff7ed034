"""The CUDA backend: CuPy arrays, one CUDA stream per worker, completion through CUDA events.

Kept thin: everything above the backend is shared with the simulated one. Facts that shape it
(notes/cuda-nvml-asyncio-apis.md): CuPy's current device/stream are thread-local, so each stream
has its own worker thread that enters ``with device, stream``. Completion is an event recorded
after each launch and waited for by a second thread of the stream (``Event.synchronize``
releases the GIL). Host functions (``launch_host_func``) are not used: a Python host function
takes the GIL on a driver thread while holding the driver's lock, and CuPy calls some cheap CUDA
functions without releasing the GIL, so a kernel launch on the worker deadlocked against the
host function of the launch before it (seen on an H200: the first training step of a small Adam
model never ended). A synchronize also raises a device error, where a host function never runs.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from functools import partial
from queue import SimpleQueue
from typing import Any

from antcolony.errors import UnavailableError

from . import register_backend
from .base import GpuBackend, GpuInfo, OnDone, Stream
from .cuda_memory import PinnedMappedMemory, device_memory, make_cupy_allocator
from .cuda_vmm import CudaVirtualMemory
from .threaded import ThreadedStream

logger = logging.getLogger(__name__)

_DONE = None  # ends a stream's waiter thread


def import_cupy() -> Any:
    """cupy, or UnavailableError saying why CUDA cannot be used (no cupy, no driver, no device)."""
    try:
        import cupy
    except ImportError as exc:
        raise UnavailableError(
            None,
            None,
            f"gpu_backend='cuda' needs CuPy, which is not importable ({exc}); install "
            "antcolony[cuda] (cupy-cuda12x) or use gpu_backend='sim'",
        ) from exc
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        status = getattr(exc, "status", None)
        why = (
            "no usable NVIDIA driver"
            if status == 35
            else ("no CUDA device visible" if status == 100 else str(exc))
        )
        raise UnavailableError(
            None,
            None,
            f"gpu_backend='cuda' cannot initialise CUDA: {why} (status {status}); "
            "check the driver and CUDA_VISIBLE_DEVICES, or use gpu_backend='sim'",
        ) from exc
    if count < 1:
        raise UnavailableError(
            None, None, "gpu_backend='cuda': CUDA reports no device; use gpu_backend='sim'"
        )
    return cupy


class CudaStream(ThreadedStream):
    """A CUDA stream driven from its own thread; completions found by a second thread that waits
    for an event recorded after each launch, in launch order."""

    thread_prefix = "cuda"

    def __init__(
        self,
        backend: CudaBackend,
        device: int,
        label: str,
        loop: asyncio.AbstractEventLoop,
        on_done: OnDone,
    ) -> None:
        self._cupy = cupy = backend.cupy
        # Device() restores the previous current device on exit, so any thread may create it.
        with cupy.cuda.Device(device):
            self._stream = cupy.cuda.Stream(non_blocking=True)
        # (event, token, cell, enqueued) for a launch, (event, fn) for _when_finished, or _DONE
        self._pending: SimpleQueue[tuple[Any, ...] | None] = SimpleQueue()
        self._spare_events: deque[Any] = deque()  # synchronized events, recorded again later
        super().__init__(backend, device, label, loop, on_done)
        self._last_end = 0.0  # when the previous launch was seen finished (waiter thread only)
        self._waiter = threading.Thread(
            target=self._wait_completions, name=f"{self._thread.name}-done", daemon=True
        )
        self._waiter.start()

    def _execute(self, box: list[Any]) -> None:
        fn, args, token = box
        box.clear()
        start = time.perf_counter()
        cell: list[Any] = []
        try:
            with self._cupy.cuda.Device(self.device), self._stream:
                cell.append(fn(*args))
                event = self._recorded_event()
        except Exception as exc:
            del fn, args
            self._complete(token, cell, exc, start, time.perf_counter())
            return
        del fn, args
        self._pending.put((event, token, cell, start))

    def _recorded_event(self) -> Any:
        """An event recorded on this stream after what is enqueued so far (the stream's thread,
        inside ``with device``)."""
        try:
            event = self._spare_events.pop()
        except IndexError:
            # block=True: the waiter sleeps in cudaEventSynchronize instead of spinning a core
            event = self._cupy.cuda.Event(block=True, disable_timing=True)
        event.record(self._stream)
        return event

    def _serve(self) -> None:
        try:
            super()._serve()
        finally:
            # after the stream's last launch: the waiter reports it, then ends
            self._pending.put(_DONE)

    def _wait_completions(self) -> None:
        get = self._pending.get
        while (item := get()) is not _DONE:
            event = item[0]
            error: BaseException | None = None
            try:
                event.synchronize()
            except Exception as exc:  # a device error: the launch (and the stream) failed
                error = exc
            else:
                self._spare_events.append(event)
            if len(item) == 2:
                item[1]()
            else:
                self._report(item[1], item[2], error, item[3])
            del item, event

    def _report(self, token: Any, cell: list[Any], error: BaseException | None, enqueued: float) -> None:
        # A kernel enqueued behind others started on the device when the one before it ended,
        # not when it was enqueued.
        start = max(enqueued, self._last_end)
        self._last_end = end = time.perf_counter()
        if error is not None:
            cell.clear()
        self._complete(token, cell, error, start, end)

    def record_event(self) -> CudaEvent:
        """A CUDA event recorded on this stream by its thread, after the launches enqueued before
        it (which that thread enqueues on the device in order)."""
        event = CudaEvent()
        self._on_thread(partial(self._record, event))
        return event

    def wait_event(self, event: Any) -> None:
        """Later launches of this stream wait on the device for ``event`` (``cudaStreamWaitEvent``);
        this thread first waits until the event is recorded: waiting on an unrecorded CUDA event
        would be a no-op."""
        self._on_thread(partial(self._wait_recorded, event))

    def _record(self, event: CudaEvent) -> None:
        with self._cupy.cuda.Device(self.device):
            event.event = self._cupy.cuda.Event(disable_timing=True)
            event.event.record(self._stream)
        event.recorded.set()

    def _wait_recorded(self, event: CudaEvent) -> None:
        self._wait(event.recorded)
        if event.event is not None:
            with self._cupy.cuda.Device(self.device):
                self._stream.wait_event(event.event)

    def _when_finished(self, fn: Callable[[], Any]) -> None:
        """On this stream's thread: ``fn()`` runs on the waiter thread once the device is past
        everything enqueued so far."""
        with self._cupy.cuda.Device(self.device):
            event = self._recorded_event()
        self._pending.put((event, fn))


class CudaEvent:
    """A CuPy event, and when its ``record`` has been enqueued (set by the recording stream's
    thread; a waiting stream's thread blocks on it before ``cudaStreamWaitEvent``)."""

    __slots__ = ("event", "recorded")

    def __init__(self) -> None:
        self.event: Any = None
        self.recorded = threading.Event()


@register_backend("cuda")
class CudaBackend(GpuBackend):
    """Real GPUs through CuPy. ``virtual_memory`` ("auto" | "on" | "off", SessionConfig's
    ``cuda_virtual_memory``) says whether pools grow through CUDA virtual memory management."""

    name = "cuda"

    def __init__(self, virtual_memory: str = "auto") -> None:
        super().__init__()
        self.cupy = import_cupy()
        self.virtual_memory = virtual_memory
        self._reserved: list[CudaVirtualMemory] = []  # closed with the backend

    def _device_count(self) -> int:
        return int(self.cupy.cuda.runtime.getDeviceCount())

    def _device_info(self, index: int) -> GpuInfo:
        dev = self.cupy.cuda.Device(index)
        props = self.cupy.cuda.runtime.getDeviceProperties(index)
        name = props.get("name", b"GPU")
        name = name.decode() if isinstance(name, bytes) else str(name)
        return GpuInfo(index, str(dev.pci_bus_id).lower(), int(props.get("totalGlobalMem", 0)), name)

    def _array_module(self) -> Any:
        return self.cupy

    charges_on_allocation = True

    def device_sub_allocator(self, index: int) -> Any:
        sub = device_memory(self.cupy, index, self.info(index).total_memory, self.virtual_memory)
        if isinstance(sub, CudaVirtualMemory):
            self._reserved.append(sub)
        return sub

    def close(self) -> None:
        reserved, self._reserved = self._reserved, []
        for sub in reserved:
            try:
                sub.close()
            except Exception:  # shutting down: say what leaked, close the rest
                logger.exception("%s: closing its device memory failed", sub.name)

    def host_sub_allocator(self, index: int, limit: int) -> Any:
        return PinnedMappedMemory(self.cupy, f"cuda{index}_pinned")

    def allocation_context(self, index: int) -> Any:
        cupy = self.cupy
        mallocs: dict[int, Any] = {}

        def context(vmem: Any) -> Any:
            # using_allocator is thread-local, so entering it around a kernel on a stream thread
            # affects only that kernel's allocations.
            malloc = mallocs.get(id(vmem))
            if malloc is None:
                malloc = mallocs[id(vmem)] = make_cupy_allocator(cupy, vmem, index)
            return cupy.cuda.using_allocator(malloc)

        return context

    def _create_stream(
        self, index: int, label: str, loop: asyncio.AbstractEventLoop, on_done: OnDone
    ) -> Stream:
        return CudaStream(self, index, label, loop, on_done)

    def _to_device(self, index: int, value: Any) -> Any:
        with self.cupy.cuda.Device(index):
            return self.cupy.asarray(value)

    def _to_host(self, index: int, value: Any) -> Any:
        if isinstance(value, self.cupy.ndarray):
            return self.cupy.asnumpy(value)
        return value
