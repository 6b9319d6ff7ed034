"""CUDA memory for the allocator stack: device regions from cudaMalloc, host fallback regions
from mapped pinned memory, and the CuPy allocator function that carves arrays from them.

Facts used (notes/cuda-nvml-asyncio-apis.md section 2): ``cupy.cuda.Memory(size)`` owns a
cudaMalloc block; ``UnownedMemory(ptr, size, owner, device_id)`` + ``MemoryPointer`` wrap a pointer
for an ndarray; pinned memory from ``cudaHostAlloc`` is addressable by kernels under UVA, so
host-fallback allocations can back device arrays; ``using_allocator`` is thread-local, so each
stream thread installs it.

cudaMalloc regions can neither grow in place nor be split (``can_extend`` / ``can_split`` stay
False), so on CUDA the BFC pool is still made of separate growth regions, freed whole. Not done:
a path through CUDA's virtual memory management (``cuMemAddressReserve`` + ``cuMemCreate`` /
``cuMemMap`` of physical chunks, as PyTorch's expandable segments), which would let the pool
grow as one range and unmap free chunks, as the simulated GPU's address space does. CuPy does
not bind those driver calls: ``cupy.cuda.driver`` (cupy_backends/cuda/api/driver.pyx, read at
tags v13.0.0, v13.6.0 and v14.2.0) has context, module, link, launch, function-attribute,
occupancy and ``streamGetCtx`` calls only, no ``cuMem*``. The path would need another binding
(NVIDIA's ``cuda-python``, ``cuda.bindings.driver``, binds them): a new optional dependency.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..allocator import HostMemory, Region, SubAllocator


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
