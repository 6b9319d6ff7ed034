"""Sub-allocators: where a BFCAllocator gets its large regions from.

A sub-allocator hands out a few large, contiguous regions; the BFC allocator carves them into
chunks. The simulated GPU uses a :class:`VirtualAddressSpace` (offsets, no memory behind them),
the host fallback uses :class:`HostMemory` (numpy buffers). The CUDA backend adds device memory
and pinned host memory by subclassing :class:`SubAllocator` / :class:`HostMemory`.
"""

from __future__ import annotations

import bisect
import logging
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

__all__ = ["ALIGNMENT", "HostMemory", "Region", "SubAllocator", "VirtualAddressSpace"]

#: Byte alignment of regions and chunks (TF's kMinAllocationSize).
ALIGNMENT = 256


class Region:
    """A contiguous range ``[base, base + size)`` handed out by a sub-allocator.

    ``buffer`` is the memory behind it when there is any (a uint8 numpy array of ``size`` bytes
    for host memory; None for a virtual address space).
    """

    __slots__ = ("base", "buffer", "owner", "size")

    def __init__(self, base: int, size: int, buffer: Any = None, owner: SubAllocator | None = None) -> None:
        self.base = base
        self.size = size
        self.buffer = buffer
        self.owner = owner

    @property
    def end(self) -> int:
        return self.base + self.size

    def __repr__(self) -> str:
        return f"Region(base={self.base:#x}, size={self.size})"


class SubAllocator:
    """Supplies regions to a BFCAllocator.

    ``alloc`` / ``free`` validate and keep the books; subclasses fill two hooks:

    - ``_alloc(nbytes) -> Region``: obtain ``nbytes`` (a positive multiple of ``ALIGNMENT``) with
      ``Region.base`` aligned to ``ALIGNMENT``; raise ``MemoryError`` when it cannot (CuPy's
      ``OutOfMemoryError`` and numpy's allocation error already are MemoryErrors).
    - ``_free(region)``: give the region back.
    """

    def __init__(self, name: str = "") -> None:
        self.name = name or type(self).__name__
        self.bytes_allocated = 0
        self._live: dict[int, Region] = {}

    def alloc(self, nbytes: int) -> Region:
        if nbytes <= 0 or nbytes % ALIGNMENT:
            raise ValueError(
                f"{self.name}: region size must be a positive multiple of {ALIGNMENT}, got {nbytes}"
            )
        region = self._alloc(nbytes)
        if region.size < nbytes or region.base % ALIGNMENT:
            raise AssertionError(
                f"{self.name}: _alloc({nbytes}) returned {region!r} (too small or unaligned)"
            )
        region.owner = self
        self._live[region.base] = region
        self.bytes_allocated += region.size
        return region

    def free(self, region: Region) -> None:
        if self._live.get(region.base) is not region:
            raise ValueError(f"{self.name}: {region!r} was not allocated here or was already freed")
        del self._live[region.base]
        self.bytes_allocated -= region.size
        self._free(region)

    @property
    def regions(self) -> list[Region]:
        return sorted(self._live.values(), key=lambda r: r.base)

    #: True when :meth:`trim` can give back the tail of a live region (virtual memory can;
    #: ``cudaMalloc`` regions cannot).
    can_trim = False

    def trim(self, region: Region, new_size: int) -> None:
        """Give back ``[base + new_size, end)`` of a live region; ``new_size`` a positive multiple
        of ``ALIGNMENT`` below its size."""
        if self._live.get(region.base) is not region:
            raise ValueError(f"{self.name}: {region!r} is not a live region of this sub-allocator")
        if not self.can_trim:
            raise NotImplementedError(f"{self.name}: regions cannot be trimmed")
        if not 0 < new_size < region.size or new_size % ALIGNMENT:
            raise ValueError(f"{self.name}: cannot trim {region!r} to {new_size} bytes")
        self._trim(region, new_size)
        self.bytes_allocated -= region.size - new_size
        region.size = new_size

    #: True when :meth:`split` can cut a live region in two (virtual memory can; the halves of
    #: a ``cudaMalloc`` region cannot be freed apart).
    can_split = False

    def split(self, region: Region, size: int) -> Region:
        """Cut a live region in two: ``region`` keeps its first ``size`` bytes (a positive
        multiple of ``ALIGNMENT`` below its size) and the rest is returned as a live region of
        its own, so either can be freed or trimmed alone. No memory changes hands."""
        if self._live.get(region.base) is not region:
            raise ValueError(f"{self.name}: {region!r} is not a live region of this sub-allocator")
        if not self.can_split:
            raise NotImplementedError(f"{self.name}: regions cannot be split")
        if not 0 < size < region.size or size % ALIGNMENT:
            raise ValueError(f"{self.name}: cannot split {region!r} at {size} bytes")
        upper = Region(region.base + size, region.size - size, None, self)
        region.size = size
        self._live[upper.base] = upper
        return upper

    #: True when :meth:`extend` can grow a live region in place (a virtual address space can
    #: when the addresses after the region are free; ``cudaMalloc`` regions cannot).
    can_extend = False

    def extend(self, region: Region, nbytes: int) -> bool:
        """Grow a live region in place by ``nbytes`` (a positive multiple of ``ALIGNMENT``): True
        when done; False when the addresses after it are not free; ``MemoryError`` when the
        device refuses the memory."""
        if self._live.get(region.base) is not region:
            raise ValueError(f"{self.name}: {region!r} is not a live region of this sub-allocator")
        if nbytes <= 0 or nbytes % ALIGNMENT:
            raise ValueError(f"{self.name}: cannot extend {region!r} by {nbytes} bytes")
        if not self.can_extend or not self._extend(region, nbytes):
            return False
        region.size += nbytes
        self.bytes_allocated += nbytes
        return True

    def refused_others_since(self, when: float) -> float | None:
        """When (``time.time()``) another process sharing this device was last refused memory, if
        after ``when``: the cue to hand back free memory. None where no such signal exists."""
        return None

    def _alloc(self, nbytes: int) -> Region:
        raise NotImplementedError

    def _free(self, region: Region) -> None:
        raise NotImplementedError

    def _extend(self, region: Region, nbytes: int) -> bool:
        """Hook of sub-allocators with ``can_extend``: take ``[region.end, region.end + nbytes)``
        if free (size not yet changed)."""
        raise NotImplementedError

    def _trim(self, region: Region, new_size: int) -> None:
        """Hook of sub-allocators with ``can_trim``: release the region's tail (size not yet changed)."""
        raise NotImplementedError


class VirtualAddressSpace(SubAllocator):
    """A simulated device's memory: ``capacity`` bytes of addresses starting at ``base``.

    Nothing is allocated for real; a region is only a reserved range of offsets. Ranges are taken
    first-fit, lowest address first, and freed ranges merge with their neighbours. A region grows
    in place into the free range right after it (:meth:`extend`), so a growing pool stays one range.
    """

    def __init__(self, capacity: int, base: int = 0, name: str = "") -> None:
        super().__init__(name)
        if capacity < 0 or base < 0 or base % ALIGNMENT:
            raise ValueError(f"VirtualAddressSpace needs capacity >= 0 and a {ALIGNMENT}-aligned base >= 0")
        self.capacity = capacity - capacity % ALIGNMENT
        self.base = base
        # Free ranges as parallel sorted lists of starts and ends (few regions: lists are fastest).
        self._starts = [base] if self.capacity else []
        self._ends = [base + self.capacity] if self.capacity else []

    @property
    def free_bytes(self) -> int:
        return sum(e - s for s, e in zip(self._starts, self._ends))

    def _alloc(self, nbytes: int) -> Region:
        for i, (start, end) in enumerate(zip(self._starts, self._ends)):
            if end - start >= nbytes:
                if end - start == nbytes:
                    del self._starts[i], self._ends[i]
                else:
                    self._starts[i] = start + nbytes
                return Region(start, nbytes)
        raise MemoryError(
            f"{self.name}: no {nbytes}-byte range free in a {self.capacity}-byte address space "
            f"({self.free_bytes} bytes free in {len(self._starts)} ranges)"
        )

    can_trim = True
    can_extend = True
    can_split = True

    def _trim(self, region: Region, new_size: int) -> None:
        self._release_range(region.base + new_size, region.end)

    def _extend(self, region: Region, nbytes: int) -> bool:
        i = bisect.bisect_left(self._starts, region.end)
        if i == len(self._starts) or self._starts[i] != region.end or self._ends[i] - region.end < nbytes:
            return False
        if self._ends[i] - region.end == nbytes:
            del self._starts[i], self._ends[i]
        else:
            self._starts[i] += nbytes
        return True

    def _free(self, region: Region) -> None:
        self._release_range(region.base, region.end)

    def _release_range(self, start: int, end: int) -> None:
        i = bisect.bisect_left(self._starts, start)
        if i > 0 and self._ends[i - 1] == start:  # merge with the range below
            i -= 1
            start = self._starts[i]
            del self._starts[i], self._ends[i]
        if i < len(self._starts) and self._starts[i] == end:  # merge with the range above
            end = self._ends[i]
            del self._starts[i], self._ends[i]
        self._starts.insert(i, start)
        self._ends.insert(i, end)


class HostMemory(SubAllocator):
    """Host memory in numpy buffers, for the host fallback of VMemAllocator.

    ``Region.base`` is the buffer's real address, so regions never overlap and allocations can be
    handed to code that wants pointers. Override :meth:`_new_buffer` to supply other host memory;
    the CUDA backend's pinned (page-locked, device-mapped) sub-allocator does exactly that.
    """

    def _new_buffer(self, nbytes: int) -> np.ndarray:
        """Extension hook: a writable uint8 array of at least ``nbytes`` bytes (MemoryError if none)."""
        return np.empty(nbytes + ALIGNMENT - 1, dtype=np.uint8)

    def _alloc(self, nbytes: int) -> Region:
        raw = self._new_buffer(nbytes)
        skip = -raw.ctypes.data % ALIGNMENT  # align the base; the slice keeps `raw` alive
        buffer = raw[skip : skip + nbytes]
        if buffer.nbytes < nbytes:
            raise MemoryError(f"{self.name}: _new_buffer returned {raw.nbytes} bytes, need {nbytes} aligned")
        return Region(buffer.ctypes.data, nbytes, buffer)

    def _free(self, region: Region) -> None:
        region.buffer = None  # numpy frees the memory with the last reference
