"""A stand-in for ``cuda.bindings.driver``: the virtual memory calls the CUDA backend makes, with
the tuple returns and ``CUresult`` codes of the real bindings, over a simulated virtual address
space and physical memory of a fixed size. It enforces the driver's rules that matter here
(granularity-aligned sizes and addresses, maps only inside a reservation and never over another
map, access set only on mapped ranges, a reservation freed only once unmapped, physical memory
freed once its handle is released and unmapped) and records every call, so a test sees what the
allocator asked of the driver. ``fail(name, code, after=n)`` makes the calls of ``name`` return
``code`` from the (n+1)-th next one on (``times`` of them; None: until ``heal()``).
"""

from __future__ import annotations

import enum
import threading
import types
from typing import Any

MiB = 1 << 20


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_OUT_OF_MEMORY = 2
    CUDA_ERROR_NOT_INITIALIZED = 3
    CUDA_ERROR_INVALID_CONTEXT = 201
    CUDA_ERROR_ILLEGAL_ADDRESS = 700
    CUDA_ERROR_NOT_SUPPORTED = 801


OK = CUresult.CUDA_SUCCESS
BAD = CUresult.CUDA_ERROR_INVALID_VALUE


class _Located:
    def __init__(self) -> None:
        self.type: Any = None
        self.location = types.SimpleNamespace(type=None, id=None)
        self.flags: Any = None


class FakeDriver:
    CUresult = CUresult
    CUdevice_attribute = types.SimpleNamespace(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED=102)
    CUmemAllocationType = types.SimpleNamespace(CU_MEM_ALLOCATION_TYPE_PINNED=1)
    CUmemLocationType = types.SimpleNamespace(CU_MEM_LOCATION_TYPE_DEVICE=1)
    CUmemAccess_flags = types.SimpleNamespace(CU_MEM_ACCESS_FLAGS_PROT_READWRITE=3)
    CUmemAllocationGranularity_flags = types.SimpleNamespace(CU_MEM_ALLOC_GRANULARITY_MINIMUM=0)
    CUmemAllocationProp = _Located
    CUmemAccessDesc = _Located

    def __init__(self, physical: int, granularity: int = 2 * MiB, supported: bool = True) -> None:
        self.physical = physical
        self.granularity = granularity
        self.supported = supported
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.reservations: dict[int, int] = {}  # base -> size
        self.handles: dict[int, int] = {}  # live physical allocation -> size
        self.released: set[int] = set()  # handles released while still mapped
        self.mappings: dict[int, tuple[int, int]] = {}  # address -> (size, handle)
        self.accessible: set[int] = set()  # mapped addresses with read/write access
        self.context_refs = 0
        self._depth = threading.local()
        self._failures: dict[str, list[list[Any]]] = {}  # name -> [[after, code, times left]]
        self._next_handle = 1
        self._next_base = 0x7F00_0000_0000

    # -- test controls and views --------------------------------------------------------------
    def fail(self, name: str, code: CUresult, after: int = 0, times: int | None = 1) -> None:
        self._failures.setdefault(name, []).append([after, code, times])

    def heal(self) -> None:
        self._failures.clear()

    def called(self, name: str) -> list[tuple[Any, ...]]:
        return [args for n, args in self.calls if n == name]

    @property
    def physical_in_use(self) -> int:
        return sum(self.handles.values())

    def mapped_ranges(self) -> list[tuple[int, int]]:
        """Mapped address ranges, adjacent maps merged: [(start, end)]."""
        out: list[tuple[int, int]] = []
        for address in sorted(self.mappings):
            end = address + self.mappings[address][0]
            if out and out[-1][1] == address:
                out[-1] = (out[-1][0], end)
            else:
                out.append((address, end))
        return out

    def _call(self, name: str, *args: Any) -> CUresult:
        self.calls.append((name, args))
        pending = self._failures.get(name)
        if pending:
            failure = pending[0]
            if failure[0]:
                failure[0] -= 1
                return OK
            if failure[2] is not None:
                failure[2] -= 1
                if failure[2] == 0:
                    pending.pop(0)
            return CUresult(failure[1])
        return OK

    @property
    def context_depth(self) -> int:
        """Contexts pushed and not popped on the calling thread."""
        return int(getattr(self._depth, "n", 0))

    def _in_context(self) -> bool:
        return self.context_depth > 0

    # -- the calls --------------------------------------------------------------------------
    def cuInit(self, flags: int) -> tuple[CUresult]:
        return (self._call("cuInit", flags),)

    def cuGetErrorName(self, err: CUresult) -> tuple[CUresult, bytes]:
        return (OK, CUresult(err).name.encode())

    def cuDeviceGet(self, ordinal: int) -> tuple[CUresult, Any]:
        err = self._call("cuDeviceGet", ordinal)
        return (err, ordinal if err == OK else None)

    def cuDeviceGetAttribute(self, attribute: int, device: int) -> tuple[CUresult, Any]:
        err = self._call("cuDeviceGetAttribute", attribute, device)
        return (err, int(self.supported) if err == OK else None)

    def cuDevicePrimaryCtxRetain(self, device: int) -> tuple[CUresult, Any]:
        err = self._call("cuDevicePrimaryCtxRetain", device)
        if err == OK:
            self.context_refs += 1
        return (err, f"ctx{device}" if err == OK else None)

    def cuDevicePrimaryCtxRelease(self, device: int) -> tuple[CUresult]:
        err = self._call("cuDevicePrimaryCtxRelease", device)
        if err == OK:
            self.context_refs -= 1
        return (err,)

    def cuCtxPushCurrent(self, context: Any) -> tuple[CUresult]:
        err = self._call("cuCtxPushCurrent", context)
        if err == OK:
            self._depth.n = getattr(self._depth, "n", 0) + 1
        return (err,)

    def cuCtxPopCurrent(self) -> tuple[CUresult, Any]:
        err = self._call("cuCtxPopCurrent")
        if err == OK:
            self._depth.n -= 1
        return (err, "ctx")

    def cuCtxSynchronize(self) -> tuple[CUresult]:
        err = self._call("cuCtxSynchronize")
        return (err if self._in_context() else CUresult.CUDA_ERROR_INVALID_CONTEXT,)

    def cuMemGetAllocationGranularity(self, prop: Any, option: int) -> tuple[CUresult, Any]:
        err = self._call("cuMemGetAllocationGranularity", prop, option)
        if prop.type != 1 or prop.location.type != 1:
            err = BAD
        return (err, self.granularity if err == OK else None)

    def cuMemAddressReserve(self, size: int, alignment: int, addr: int, flags: int) -> tuple[CUresult, Any]:
        err = self._call("cuMemAddressReserve", size, alignment, addr, flags)
        if err == OK and (size % self.granularity or not self._in_context()):
            err = BAD
        if err != OK:
            return (err, None)
        base = self._next_base
        self._next_base += 1 << 40
        self.reservations[base] = size
        return (OK, base)

    def cuMemAddressFree(self, ptr: int, size: int) -> tuple[CUresult]:
        err = self._call("cuMemAddressFree", ptr, size)
        if err == OK and (
            self.reservations.get(ptr) != size or any(ptr <= a < ptr + size for a in self.mappings)
        ):
            err = BAD
        if err == OK:
            del self.reservations[ptr]
        return (err,)

    def cuMemCreate(self, size: int, prop: Any, flags: int) -> tuple[CUresult, Any]:
        err = self._call("cuMemCreate", size, prop, flags)
        if err == OK and (size % self.granularity or prop.location.type != 1):
            err = BAD
        if err == OK and self.physical_in_use + size > self.physical:
            err = CUresult.CUDA_ERROR_OUT_OF_MEMORY
        if err != OK:
            return (err, None)
        handle, self._next_handle = self._next_handle, self._next_handle + 1
        self.handles[handle] = size
        return (OK, handle)

    def cuMemMap(self, ptr: int, size: int, offset: int, handle: int, flags: int) -> tuple[CUresult]:
        err = self._call("cuMemMap", ptr, size, offset, handle, flags)
        inside = any(b <= ptr and ptr + size <= b + s for b, s in self.reservations.items())
        overlaps = any(a < ptr + size and ptr < a + s for a, (s, _) in self.mappings.items())
        if err == OK and (
            not inside or overlaps or ptr % self.granularity or self.handles.get(handle) != size or offset
        ):
            err = BAD
        if err == OK:
            self.mappings[ptr] = (size, handle)
        return (err,)

    def cuMemSetAccess(self, ptr: int, size: int, descs: list[Any], count: int) -> tuple[CUresult]:
        err = self._call("cuMemSetAccess", ptr, size, descs, count)
        covered = [a for a in self.mappings if ptr <= a < ptr + size]
        if err == OK and (
            sum(self.mappings[a][0] for a in covered) != size
            or count != len(descs)
            or any(d.flags != 3 or d.location.type != 1 for d in descs)
        ):
            err = BAD
        if err == OK:
            self.accessible.update(covered)
        return (err,)

    def cuMemUnmap(self, ptr: int, size: int) -> tuple[CUresult]:
        err = self._call("cuMemUnmap", ptr, size)
        if err == OK and self.mappings.get(ptr, (None,))[0] != size:
            err = BAD
        if err == OK:
            _, handle = self.mappings.pop(ptr)
            self.accessible.discard(ptr)
            if handle in self.released:
                self.released.discard(handle)
                del self.handles[handle]
        return (err,)

    def cuMemRelease(self, handle: int) -> tuple[CUresult]:
        err = self._call("cuMemRelease", handle)
        if err == OK and (handle not in self.handles or handle in self.released):
            err = BAD
        if err == OK:
            if any(h == handle for _, h in self.mappings.values()):
                self.released.add(handle)  # freed with its last mapping
            else:
                del self.handles[handle]
        return (err,)
