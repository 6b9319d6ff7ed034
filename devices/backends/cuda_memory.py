"""CUDA memory for the allocator stack: device regions from cudaMalloc, host fallback regions
from mapped pinned memory, and the CuPy allocator function that carves arrays from them.

Facts used (notes/cuda-nvml-asyncio-apis.md section 2): ``cupy.cuda.Memory(size)`` owns a
cudaMalloc block; ``UnownedMemory(ptr, size, owner, device_id)`` + ``MemoryPointer`` wrap a pointer
for an ndarray; pinned memory from ``cudaHostAlloc`` is addressable by kernels under UVA, so
host-fallback allocations can back device arrays; ``using_allocator`` is thread-local, so each
stream thread installs it.

cudaMalloc regions can neither grow in place nor be split (``can_extend`` / ``can_split`` stay
False), so with them the BFC pool is made of separate growth regions, freed whole. Where NVIDIA's
``cuda.bindings`` (the ``cuda`` extra) imports and the device supports virtual memory management,
:func:`device_memory` picks :class:`~.cuda_vmm.CudaVirtualMemory` instead: one reserved range
that grows in place, as the simulated GPU's address space (CuPy binds no ``cuMem*`` call:
``cupy.cuda.driver``, read at tags v13.0.0, v13.6.0 and v14.2.0, has none).
"""

from __future__ import annotations

import importlib
import logging
import weakref
from typing import Any

import numpy as np

from antcolony.errors import ConfigError, UnavailableError

from ..allocator import HostMemory, Region, SubAllocator, format_bytes
from .cuda_vmm import CudaVirtualMemory

logger = logging.getLogger(__name__)

#: Values of ``cuda_virtual_memory``: auto (virtual memory where available), on (required), off.
VIRTUAL_MEMORY_MODES = ("auto", "on", "off")


def device_memory(cupy: Any, index: int, capacity: int, mode: str = "auto") -> SubAllocator:
    """Where GPU ``index``'s pool gets its memory, logged once with the reason: CUDA virtual memory
    management when ``mode`` allows it and it is available, else cudaMalloc regions. ``mode`` "on"
    makes an unavailable one an ``UnavailableError``."""
    name = f"cuda{index}"
    if mode not in VIRTUAL_MEMORY_MODES:
        raise ConfigError(f"cuda_virtual_memory must be one of {VIRTUAL_MEMORY_MODES}, got {mode!r}")
    if mode == "off":
        logger.info("%s: device memory from cudaMalloc regions (cuda_virtual_memory='off')", name)
        return CudaDeviceMemory(cupy, index, name)
    try:
        driver = importlib.import_module("cuda.bindings.driver")
        vmm = CudaVirtualMemory(driver, index, capacity, name)
    except (ImportError, OSError, UnavailableError) as exc:
        why = exc.message if isinstance(exc, UnavailableError) else f"cuda.bindings is not importable ({exc})"
        if mode == "on":
            raise UnavailableError(
                None,
                None,
                f"cuda_virtual_memory='on' but {why}; install antcolony[cuda] (cuda-bindings) on a "
                "device that supports it, or use cuda_virtual_memory='auto'",
            ) from exc
        logger.info(
            "%s: device memory from cudaMalloc regions (the pool grows in separate regions) because %s",
            name,
            why,
        )
        return CudaDeviceMemory(cupy, index, name)
    logger.info(
        "%s: device memory through CUDA virtual memory management: one %s address range (for %s), mapped in %s chunks",
        name,
        format_bytes(vmm.capacity),
        format_bytes(capacity),
        format_bytes(vmm.granularity),
    )
    return vmm


class CudaDeviceMemory(SubAllocator):
    """Regions of GPU ``index`` obtained with cudaMalloc (``cupy.cuda.Memory``)."""

    def __init__(self, cupy: Any, index: int, name: str = "") -> None:
        super().__init__(name or f"cuda{index}")
        self.cupy = cupy
        self.index = index

    def _alloc(self, nbytes: int) -> Region:
        try:
            with self.cupy.cuda.Device(self.index):
                mem = self.cupy.cuda.Memory(nbytes)
        except Exception as exc:
            raise MemoryError(f"{self.name}: cudaMalloc of {nbytes} bytes failed: {exc}") from exc
        return Region(int(mem.ptr), nbytes, mem)

    def _free(self, region: Region) -> None:
        region.buffer = None  # cupy.cuda.Memory frees the block with its last reference


class PinnedMappedMemory(HostMemory):
    """Host regions of page-locked memory mapped into the device address space (zero-copy)."""

    def __init__(self, cupy: Any, name: str = "") -> None:
        super().__init__(name or "pinned")
        self.cupy = cupy

    def _new_buffer(self, nbytes: int) -> np.ndarray:
        runtime = self.cupy.cuda.runtime
        try:
            pinned = self.cupy.cuda.PinnedMemory(
                nbytes + 255, runtime.hostAllocMapped | runtime.hostAllocPortable
            )
        except Exception as exc:
            raise MemoryError(f"{self.name}: cudaHostAlloc of {nbytes} bytes failed: {exc}") from exc
        ptr = self.cupy.cuda.PinnedMemoryPointer(pinned, 0)
        return np.frombuffer(ptr, dtype=np.uint8, count=nbytes + 255)


def make_cupy_allocator(cupy: Any, vmem: Any, index: int) -> Any:
    """``size -> MemoryPointer`` drawing from ``vmem`` (device first, pinned host on fallback)."""

    def malloc(size: int) -> Any:
        allocation = vmem.allocate(max(int(size), 1))
        owner = _Owner()
        weakref.finalize(owner, vmem.free, allocation)
        mem = cupy.cuda.UnownedMemory(allocation.address, size, owner, index)
        return cupy.cuda.MemoryPointer(mem, 0)

    return malloc


class _Owner:
    """Kept alive by CuPy as long as the memory is used; its death frees the allocation."""

    __slots__ = ("__weakref__",)
