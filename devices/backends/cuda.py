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
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from antcolony.errors import UnavailableError

from . import register_backend
from .base import Done, GpuBackend, GpuInfo, Stream
from .cuda_memory import CudaDeviceMemory, PinnedMappedMemory, make_cupy_allocator


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


class CudaStream(Stream):
    """A CUDA stream driven from its own thread; completions bridged by ``launch_host_func``."""

    def __init__(
        self, backend: CudaBackend, device: int, label: str, loop: asyncio.AbstractEventLoop
    ) -> None:
        super().__init__(backend, device, label, loop)
        self._cupy = backend.cupy
        self._thread = ThreadPoolExecutor(1, thread_name_prefix=f"cuda{device}-{label}")
        self._stream = self._thread.submit(self._make).result()

    def _make(self) -> Any:
        with self._cupy.cuda.Device(self.device):
            return self._cupy.cuda.Stream(non_blocking=True)

    def launch(self, fn: Callable[..., Any], args: list[Any], on_done: Done) -> None:
        self._thread.submit(self._enqueue, [fn, args], on_done)

    def _enqueue(self, box: list[Any], on_done: Done) -> None:
        fn, args = box
        box.clear()
        start = time.perf_counter()
        cell: list[Any] = []
        try:
            with self._cupy.cuda.Device(self.device), self._stream:
                cell.append(fn(*args))
        except Exception as exc:
            del fn, args
            self._post(on_done, cell, exc, start)
            return
        del fn, args
        # The driver thread only posts: no CUDA calls, and it holds no array reference (the result
        # rides in ``cell``, emptied on the loop), so no array is ever released there.
        self._stream.launch_host_func(self._host_done, (on_done, cell, start))

    def _host_done(self, box: tuple[Done, list[Any], float]) -> None:
        on_done, cell, start = box
        self._post(on_done, cell, None, start)

    def close(self) -> None:
        self._thread.shutdown(wait=False, cancel_futures=True)


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

    def _create_stream(self, index: int, label: str, loop: asyncio.AbstractEventLoop) -> Stream:
        return CudaStream(self, index, label, loop)

    def _to_device(self, index: int, value: Any) -> Any:
        with self.cupy.cuda.Device(index):
            return self.cupy.asarray(value)

    def _to_host(self, index: int, value: Any) -> Any:
        if isinstance(value, self.cupy.ndarray):
            return self.cupy.asnumpy(value)
        return value
