"""The CUDA backend: CuPy arrays, one CUDA stream per worker, completion via host callbacks.

Kept thin: everything above the backend is shared with the simulated one. Facts that shape it
(notes/cuda-nvml-asyncio-apis.md): CuPy's current device/stream are thread-local, so each stream
has its own worker thread that enters ``with device, stream``; ``launch_host_func`` callbacks
run on a driver thread and must not call CUDA, so they only post to the loop; after a device
error a host function may never run, so the worker also checks the stream with
``runtime.streamQuery`` when it is idle.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from antcolony.errors import UnavailableError

from . import register_backend
from .base import GpuBackend, GpuInfo, OnDone, Stream
from .cuda_memory import CudaDeviceMemory, PinnedMappedMemory, make_cupy_allocator
from .threaded import ThreadedStream


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
    """A CUDA stream driven from its own thread; completions bridged by ``launch_host_func``."""

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
        super().__init__(backend, device, label, loop, on_done)
        self._last_end = 0.0  # when the previous host function ran (driver thread only)

    def _execute(self, box: list[Any]) -> None:
        fn, args, token = box
        box.clear()
        start = time.perf_counter()
        cell: list[Any] = []
        try:
            with self._cupy.cuda.Device(self.device), self._stream:
                cell.append(fn(*args))
        except Exception as exc:
            del fn, args
            self._complete(token, cell, exc, start, time.perf_counter())
            return
        del fn, args
        # The driver thread only reports: no CUDA calls, and it holds no array reference (the
        # result rides in ``cell``, emptied by ``_complete``), so no array is released there.
        self._stream.launch_host_func(self._host_done, (token, cell, start))

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
        """A host function after everything enqueued so far: it runs once the device is past it
        (``fn`` only posts to the loop: no CUDA call on the driver thread)."""
        self._stream.launch_host_func(lambda _: fn(), None)

    def _host_done(self, box: tuple[Any, list[Any], float]) -> None:
        token, cell, enqueued = box
        # Host functions of one stream run in its order: a kernel enqueued behind others started
        # on the device when the one before it ended, not when it was enqueued.
        start = max(enqueued, self._last_end)
        self._last_end = end = time.perf_counter()
        self._complete(token, cell, None, start, end)


class CudaEvent:
    """A CuPy event, and when its ``record`` has been enqueued (set by the recording stream's
    thread; a waiting stream's thread blocks on it before ``cudaStreamWaitEvent``)."""

    __slots__ = ("event", "recorded")

    def __init__(self) -> None:
        self.event: Any = None
        self.recorded = threading.Event()


@register_backend("cuda")
class CudaBackend(GpuBackend):
    """Real GPUs through CuPy."""

    name = "cuda"

    def __init__(self) -> None:
        super().__init__()
        self.cupy = import_cupy()

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
        return CudaDeviceMemory(self.cupy, index, f"cuda{index}")

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
