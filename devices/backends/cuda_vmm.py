"""CUDA device memory through the driver's virtual memory management (PyTorch's "expandable
segments"): one address range reserved per device, physical chunks mapped at the end of what the
pool uses as it grows, unmapped again when the pool hands memory back.

To the BFC pool above, this is the simulated GPU's address space (a ``VirtualAddressSpace`` whose
addresses are real device pointers): regions grow in place, split and trim, so the pool stays one
range and coalesces across growths. Below it, each page of the allocation granularity that some
live region overlaps is backed by its own physical chunk; a page no live region overlaps is
unmapped and released. The free-range lists of the address space are the only record of which
pages are needed.

Facts used (``cuda.bindings.driver`` 12.9, read in the wheel's ``driver.pyx``; NVIDIA's
``vector_add_mmap.py`` sample): every call returns a tuple, a ``CUresult`` (an IntEnum) first,
then its outputs: ``cuMemAddressReserve(size, alignment, addr, flags) -> (err, CUdeviceptr)``,
``cuMemCreate(size, prop, flags) -> (err, handle)``, ``cuMemMap(ptr, size, offset, handle,
flags)``, ``cuMemSetAccess(ptr, size, [CUmemAccessDesc], count)``, ``cuMemUnmap(ptr, size)``,
``cuMemRelease(handle)``, ``cuMemAddressFree(ptr, size)`` -> ``(err,)``. Sizes and offsets given
to cuMemCreate / cuMemMap are multiples of ``cuMemGetAllocationGranularity``. Physical memory is
freed once its handle is released and no mapping is left. cuMemUnmap does not wait for kernels
still reading the range (PyTorch synchronizes before unmapping its segments), so every unmap of
pages the pool used follows a ``cuCtxSynchronize``; the calls run with the device's primary
context (the one CuPy's runtime calls use) pushed on the calling thread.
"""

from __future__ import annotations

import bisect
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from antcolony.errors import InternalError, UnavailableError

from ..allocator import Region, VirtualAddressSpace

logger = logging.getLogger(__name__)

__all__ = ["ADDRESS_SLACK", "CudaVirtualMemory"]

#: The reserved range is this many times the device's memory.
ADDRESS_SLACK = 2

_SUPPORT_ATTRIBUTES = (
    "CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED",  # the older name of the same value
)


class CudaVirtualMemory(VirtualAddressSpace):
    """GPU ``index``'s memory (``capacity`` bytes) as one reserved range, backed page by page on
    demand. The range is ``ADDRESS_SLACK`` times the memory (rounded up to the allocation
    granularity): addresses cost nothing, and holes handed back inside the pool must not leave a
    growth without addresses while the device still has memory (the device and the pool's limit
    bound the memory, not the range). ``driver`` is ``cuda.bindings.driver``
    (or a stand-in with the same calls). Raises ``UnavailableError`` when the device or driver
    cannot do it (the CUDA backend then uses cudaMalloc regions)."""

    def __init__(self, driver: Any, index: int, capacity: int, name: str = "") -> None:
        self.driver = driver
        self.index = index
        self.name = name or f"cuda{index}"
        self._success = driver.CUresult.CUDA_SUCCESS
        self._lock = threading.RLock()
        self._pages: dict[int, Any] = {}  # page number from the range's base -> physical handle
        self._closed = False
        self._context: Any = None
        try:
            granularity, size, base = self._set_up(capacity)
        except UnavailableError:
            raise
        except Exception as exc:  # the bindings raise, e.g., when libcuda cannot be loaded
            raise UnavailableError(
                None, None, f"{self.name}: setting up CUDA virtual memory raised {exc!r}"
            ) from exc
        self.granularity = granularity
        super().__init__(size, base, self.name)

    def _set_up(self, capacity: int) -> tuple[int, int, int]:
        """Check support, retain the primary context, reserve the range: (granularity, size, base)."""
        driver, index = self.driver, self.index
        self._check("cuInit", driver.cuInit(0), UnavailableError)
        self._device = self._check("cuDeviceGet", driver.cuDeviceGet(index), UnavailableError)
        if not self._supported():
            raise UnavailableError(
                None,
                None,
                f"{self.name}: the device does not support CUDA virtual memory management "
                "(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED is 0)",
            )
        self._context = self._check(
            "cuDevicePrimaryCtxRetain", driver.cuDevicePrimaryCtxRetain(self._device), UnavailableError
        )
        try:
            self._prop = driver.CUmemAllocationProp()
            self._prop.type = driver.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
            self._prop.location.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
            self._prop.location.id = index
            self._access = driver.CUmemAccessDesc()
            self._access.location.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
            self._access.location.id = index
            self._access.flags = driver.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
            with self._current(UnavailableError):
                minimum = driver.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM
                granularity = int(
                    self._check(
                        "cuMemGetAllocationGranularity",
                        driver.cuMemGetAllocationGranularity(self._prop, minimum),
                        UnavailableError,
                    )
                )
                size = -(-max(capacity, 1) * ADDRESS_SLACK // granularity) * granularity
                base = int(
                    self._check(
                        "cuMemAddressReserve",
                        driver.cuMemAddressReserve(size, granularity, 0, 0),
                        UnavailableError,
                    )
                )
        except BaseException:
            driver.cuDevicePrimaryCtxRelease(self._device)
            raise
        return granularity, size, base

    @property
    def mapped_bytes(self) -> int:
        """Physical device memory mapped now (whole pages: at least ``bytes_allocated``)."""
        return len(self._pages) * self.granularity

    # -- the address-space hooks, each followed by the mappings it implies -----------------------
    def _alloc(self, nbytes: int) -> Region:
        with self._lock:
            self._check_open()
            region = super()._alloc(nbytes)
            try:
                self._map(region.base, region.end)
            except BaseException:
                self._release_range(region.base, region.end)
                raise
            return region

    def _extend(self, region: Region, nbytes: int) -> bool:
        with self._lock:
            self._check_open()
            if not super()._extend(region, nbytes):
                return False
            try:
                self._map(region.end, region.end + nbytes)
            except BaseException:
                self._release_range(region.end, region.end + nbytes)
                raise
            return True

    def _free(self, region: Region) -> None:
        with self._lock:
            super()._free(region)
            self._unmap_idle(region.base, region.end)

    def _trim(self, region: Region, new_size: int) -> None:
        with self._lock:
            super()._trim(region, new_size)
            self._unmap_idle(region.base + new_size, region.end)

    def close(self) -> None:
        """Unmap and release every page and free the reserved range (and the primary context
        reference). Regions still live then lose their memory: a warning says how much."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self.bytes_allocated:
                logger.warning(
                    "%s: closed with %d bytes still allocated in %d region(s); their memory is unmapped",
                    self.name,
                    self.bytes_allocated,
                    len(self._live),
                )
            errors = self._unmap(sorted(self._pages), synchronize=True)
            with self._current(InternalError):
                err = self.driver.cuMemAddressFree(self.base, self.capacity)[0]
            if err != self._success:
                errors.append(f"cuMemAddressFree: {self._error_name(err)}")
            err = self.driver.cuDevicePrimaryCtxRelease(self._device)[0]
            if err != self._success:
                errors.append(f"cuDevicePrimaryCtxRelease: {self._error_name(err)}")
            if errors:
                raise InternalError(
                    None, None, f"{self.name}: closing its device memory failed: {'; '.join(errors)}"
                )

    # -- pages ----------------------------------------------------------------------------------
    def _map(self, start: int, end: int) -> None:
        """Back every page overlapping ``[start, end)`` that is not mapped yet; on a refusal the
        pages mapped here are undone and ``MemoryError`` names the call and the CUDA error."""
        g, d = self.granularity, self.driver
        first, last = (start - self.base) // g, (end - 1 - self.base) // g
        new = [p for p in range(first, last + 1) if p not in self._pages]
        if not new:
            return
        done: list[int] = []
        try:
            with self._current(MemoryError):
                for p in new:
                    handle = self._check("cuMemCreate", d.cuMemCreate(g, self._prop, 0), MemoryError, g)
                    err = d.cuMemMap(self.base + p * g, g, 0, handle, 0)[0]
                    if err != self._success:
                        d.cuMemRelease(handle)
                        self._raise("cuMemMap", err, MemoryError, g)
                    self._pages[p] = handle
                    done.append(p)
                for p, count in _runs(new):
                    self._check(
                        "cuMemSetAccess",
                        d.cuMemSetAccess(self.base + p * g, count * g, [self._access], 1),
                        MemoryError,
                        count * g,
                    )
        except BaseException as exc:
            self._unmap(done, synchronize=False)  # never handed out: nothing can be using them
            if isinstance(exc, MemoryError) or not isinstance(exc, Exception):
                raise
            raise MemoryError(f"{self.name}: mapping {len(new)} page(s) raised {exc!r}") from exc

    def _unmap_idle(self, start: int, end: int) -> None:
        """Unmap the pages overlapping ``[start, end)`` (just given back) that no live region
        overlaps any more."""
        g = self.granularity
        first, last = (start - self.base) // g, (end - 1 - self.base) // g
        idle = [p for p in range(first, last + 1) if p in self._pages and self._is_free(p)]
        errors = self._unmap(idle, synchronize=True)
        if errors:
            raise InternalError(
                None, None, f"{self.name}: giving device memory back failed: {'; '.join(errors)}"
            )

    def _is_free(self, page: int) -> bool:
        start = self.base + page * self.granularity
        i = bisect.bisect_right(self._starts, start) - 1
        return i >= 0 and self._ends[i] >= start + self.granularity

    def _unmap(self, pages: list[int], synchronize: bool) -> list[str]:
        """Unmap and release ``pages``; returns what failed (a page whose unmap failed stays
        mapped, so a later region there reuses it and close tries again)."""
        if not pages:
            return []
        g, d, errors = self.granularity, self.driver, []
        with self._current(InternalError):
            if synchronize:  # kernels enqueued before the free may still use these pages
                err = d.cuCtxSynchronize()[0]
                if err != self._success:
                    errors.append(f"cuCtxSynchronize: {self._error_name(err)}")
            for p in pages:
                err = d.cuMemUnmap(self.base + p * g, g)[0]
                if err != self._success:
                    errors.append(f"cuMemUnmap of page {p}: {self._error_name(err)}")
                    continue
                err = d.cuMemRelease(self._pages.pop(p))[0]
                if err != self._success:
                    errors.append(f"cuMemRelease of page {p}: {self._error_name(err)}")
        if errors:
            logger.error("%s: %s", self.name, "; ".join(errors))
        return errors

    # -- driver plumbing ------------------------------------------------------------------------
    @contextmanager
    def _current(self, error: type[BaseException]) -> Iterator[None]:
        """The device's primary context made current on this thread for the calls inside."""
        self._check("cuCtxPushCurrent", self.driver.cuCtxPushCurrent(self._context), error)
        try:
            yield
        finally:
            err = self.driver.cuCtxPopCurrent()[0]
            if err != self._success:
                logger.error("%s: cuCtxPopCurrent failed: %s", self.name, self._error_name(err))

    def _supported(self) -> bool:
        attrs = self.driver.CUdevice_attribute
        attr = next((getattr(attrs, n) for n in _SUPPORT_ATTRIBUTES if hasattr(attrs, n)), None)
        if attr is None:
            return False
        return bool(
            self._check(
                "cuDeviceGetAttribute", self.driver.cuDeviceGetAttribute(attr, self._device), UnavailableError
            )
        )

    def _check(self, call: str, result: tuple[Any, ...], error: type[BaseException], nbytes: int = 0) -> Any:
        """The output of a driver call, or ``error`` naming the call and the CUDA error."""
        if result[0] != self._success:
            self._raise(call, result[0], error, nbytes)
        return result[1] if len(result) > 1 else None

    def _raise(self, call: str, err: Any, error: type[BaseException], nbytes: int = 0) -> None:
        what = f" of {nbytes} bytes" if nbytes else ""
        message = f"{self.name}: {call}{what} failed with {self._error_name(err)}"
        if error is MemoryError:
            raise MemoryError(message + " (device memory refused; the pool's other pages stay mapped)")
        if error is UnavailableError:
            raise UnavailableError(
                None, None, message + "; set cuda_virtual_memory='off' to use cudaMalloc regions"
            )
        raise InternalError(None, None, message)

    def _error_name(self, err: Any) -> str:
        name = getattr(err, "name", None)
        if not name:
            got = self.driver.cuGetErrorName(err)
            name = got[1].decode() if got[0] == self._success and got[1] else None
        return str(name or f"CUresult {int(err)}")

    def _check_open(self) -> None:
        if self._closed:
            raise MemoryError(f"{self.name}: the device memory was closed with its backend")


def _runs(pages: list[int]) -> Iterator[tuple[int, int]]:
    """(first page, count) of each run of consecutive numbers in sorted ``pages``."""
    start = prev = pages[0]
    for p in pages[1:]:
        if p != prev + 1:
            yield start, prev - start + 1
            start = p
        prev = p
    yield start, prev - start + 1
