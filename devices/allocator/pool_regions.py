"""The region side of the BFC allocator: how its pool grows and how it gives memory back.

A mixin of ``BFCAllocator`` (bfc.py), which owns the chunk lists, bins and statistics these
methods keep in step; every method here runs with the allocator's lock held. Growth first
extends the highest region in place where the sub-allocator can (the pool stays one range, as
TF's single region); giving back frees wholly free regions, trims free tails and, where regions
can be split, cuts free chunks out of them.
"""

from __future__ import annotations

import logging
from bisect import bisect_left
from typing import TYPE_CHECKING, cast

from .chunk import Allocation, RegionRecord
from .sub_allocator import ALIGNMENT, SubAllocator

if TYPE_CHECKING:
    import threading

    from .bfc import BFCAllocator

logger = logging.getLogger("antcolony.devices.allocator.bfc")

__all__ = ["PoolRegions"]


class PoolRegions:
    """Growth and release of a BFC allocator's regions (see the module docstring)."""

    # The allocator's state, set by BFCAllocator.__init__.
    name: str
    sub_allocator: SubAllocator
    allow_growth: bool
    garbage_collection: bool
    lock: threading.RLock
    _limit: int
    _growth: int
    _refusal: str
    _pool: int
    _stable: int
    _regions: list[RegionRecord]
    _bases: list[int]
    _free: dict[int, Allocation]
    _in_use: dict[int, Allocation]

    @property
    def _owner(self) -> BFCAllocator:
        return cast("BFCAllocator", self)

    def _bin(self, c: Allocation) -> None:
        raise NotImplementedError

    def _unbin(self, c: Allocation) -> None:
        raise NotImplementedError

    def release_free_regions(self, target_pool_bytes: int, holes: bool = True) -> int:
        """Give memory back to the sub-allocator until pool_bytes <= target; returns pool_bytes.

        In order: wholly free regions (lowest address first), the free tails of regions (where
        the sub-allocator can trim), then, with ``holes`` and a sub-allocator that can split
        regions, free chunks inside regions, largest first (each is cut out as a region of its
        own and freed: what unmapping pages of an expandable segment does on CUDA)."""
        with self.lock:
            i = 0
            while self._pool > target_pool_bytes and i < len(self._regions):
                if self._regions[i].live:
                    i += 1
                    continue
                self._release_region(i)
            if self._pool > target_pool_bytes and self.sub_allocator.can_trim:
                self._trim_tails(target_pool_bytes)
            if holes and self._pool > target_pool_bytes and self.sub_allocator.can_split:
                self._release_holes(target_pool_bytes)
            return self._pool

    def _release_region(self, i: int) -> None:
        """Free region ``i``, which holds no live chunk (so it is one free chunk)."""
        rs = self._regions[i]
        self._unbin(self._free[rs.base])
        del self._regions[i], self._bases[i]
        self._pool -= rs.size
        self.sub_allocator.free(rs.region)
        logger.debug("%s: released region %r", self.name, rs.region)

    def _release_holes(self, target_pool_bytes: int) -> None:
        holes = sorted(
            (f for f in self._free.values() if f._prev is not None or f._next is not None),
            key=lambda f: f.chunk_size,
            reverse=True,
        )
        for f in holes:
            if self._pool <= target_pool_bytes:
                break
            if f._prev is not None:
                self._split(f._rs, f.address)
            if f._next is not None:
                self._split(f._rs, f.address + f.chunk_size)
            self._release_region(bisect_left(self._bases, f.address))

    def _split(self, rs: RegionRecord, at: int) -> None:
        """Cut region ``rs`` in two at ``at``, a chunk boundary inside it."""
        upper = RegionRecord(self.sub_allocator.split(rs.region, at - rs.base))
        first = self._free.get(at) or self._in_use[at]
        assert first._prev is not None, f"{self.name}: no chunk boundary at {at:#x}"
        first._prev._next = None
        first._prev = None
        c: Allocation | None = first
        while c is not None:
            c._rs = upper
            upper.live += c.in_use
            c = c._next
        if rs.live:
            self._stable -= rs.size
        rs.live -= upper.live
        rs.size = rs.region.size
        self._stable += (rs.size if rs.live else 0) + (upper.size if upper.live else 0)
        i = bisect_left(self._bases, rs.base) + 1
        self._regions.insert(i, upper)
        self._bases.insert(i, upper.base)

    def _trim_tails(self, target_pool_bytes: int) -> None:
        """Give back the free tails of regions holding live chunks, highest region first, until
        the pool fits ``target_pool_bytes`` (sub-allocators with virtual memory only)."""
        ends = {rs.base + rs.size: rs for rs in self._regions}
        tails = sorted(
            (f for f in self._free.values() if f.address + f.chunk_size in ends),
            key=lambda f: f.address,
            reverse=True,
        )
        for f in tails:
            excess = self._pool - target_pool_bytes
            if excess <= 0:
                break
            rs = f._rs
            cut = min(f.chunk_size, excess + (-excess % ALIGNMENT))
            self._unbin(f)
            self.sub_allocator.trim(rs.region, rs.size - cut)
            rs.size -= cut
            self._pool -= cut
            if rs.live:
                self._stable -= cut
            if cut < f.chunk_size:
                f.chunk_size -= cut
                self._bin(f)
            elif f._prev is not None:
                f._prev._next = None

    def _grow_size(self, need: int, available: int) -> tuple[int, bool]:
        """(bytes to add to the pool for a request needing ``need`` more, whether the growth step
        had to double to reach it): the growth step with allow_growth, else all the limit allows."""
        grew = False
        if not self.allow_growth:
            return available, grew
        while self._growth < need:
            self._growth *= 2
            grew = True
        return min(self._growth, available), grew

    def _extend(self, r: int) -> bool:
        available = (self._limit - self._pool) & -ALIGNMENT
        if self._regions and self.sub_allocator.can_extend:
            grown = self._extend_in_place(r, available)
            if grown is not None:
                return grown
        if r > available:
            return False
        size, grew = self._grow_size(r, available)
        while True:
            try:
                region = self.sub_allocator.alloc(size)
                break
            except MemoryError as exc:
                if size == r:
                    logger.debug("%s: sub-allocator refused %d bytes: %s", self.name, size, exc)
                    self._refusal = str(exc)
                    return False
                size = max(r, (size // 2) & -ALIGNMENT)
        if self.allow_growth and not grew:
            self._growth *= 2
        rs = RegionRecord(region)
        i = bisect_left(self._bases, rs.base)
        self._bases.insert(i, rs.base)
        self._regions.insert(i, rs)
        self._pool += rs.size
        self._bin(Allocation(rs.base, 0, rs.size, False, self._owner, None, None, rs))
        logger.debug("%s: new region %r (pool %d, limit %d)", self.name, region, self._pool, self._limit)
        return True

    def _last_chunk(self, rs: RegionRecord) -> Allocation:
        c = self._free.get(rs.base) or self._in_use.get(rs.base)
        while c is not None and c._next is not None:  # growth is rare: walking the region is fine
            c = c._next
        assert c is not None, f"{self.name}: region {rs.region!r} has no chunks"
        return c

    def _growable_tail(self) -> int:
        """Free bytes at the end of the highest region that an in-place growth would extend, when
        that region stays (it holds live chunks, or regions are never released)."""
        if not self._regions or not self.sub_allocator.can_extend:
            return 0
        rs = self._regions[-1]
        if not rs.live and self.garbage_collection:
            return 0  # counted as releasable already
        c = self._last_chunk(rs)
        return 0 if c.in_use else c.chunk_size

    def _extend_in_place(self, r: int, available: int) -> bool | None:
        """Grow the highest region in place so that its free tail (if any) plus the growth holds
        ``r``: the pool stays one range and a block may span what earlier growths added. True when
        grown, False when the limit or the device refuses, None when the addresses after the region
        are taken (a new region may still be had)."""
        rs = self._regions[-1]
        c = self._last_chunk(rs)
        need = r - (0 if c.in_use else c.chunk_size)
        if need > available:
            return False
        size, grew = self._grow_size(need, available)
        size = max(size, need)
        while True:
            try:
                if not self.sub_allocator.extend(rs.region, size):
                    return None
                break
            except MemoryError as exc:
                if size == need:
                    logger.debug("%s: sub-allocator refused %d more bytes: %s", self.name, size, exc)
                    self._refusal = str(exc)
                    return False
                size = max(need, (size // 2) & -ALIGNMENT)
        if self.allow_growth and not grew:
            self._growth *= 2
        end = rs.base + rs.size
        rs.size += size
        self._pool += size
        if rs.live:
            self._stable += size
        if c.in_use:
            f = Allocation(end, 0, size, False, self._owner, c, None, rs)
            c._next = f
            self._bin(f)
        else:
            self._unbin(c)
            c.chunk_size += size
            self._bin(c)
        logger.debug(
            "%s: grew region %r in place (pool %d, limit %d)", self.name, rs.region, self._pool, self._limit
        )
        return True

    def _collect(self, r: int) -> bool:
        """Release every wholly free region if that lets a new region of ``r`` bytes fit under the
        limit (all of them, as TF: releasing only enough would leave the address space fragmented)."""
        if self._limit - self._stable + self._growable_tail() < r or self._pool == self._stable:
            return False
        self.release_free_regions(0, holes=False)
        return True
