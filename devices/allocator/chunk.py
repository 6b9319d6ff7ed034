"""The chunk record of the BFC allocator, which is also the allocation handle users hold."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .sub_allocator import Region

if TYPE_CHECKING:
    from .bfc import BFCAllocator

__all__ = ["Allocation", "RegionRecord"]


class RegionRecord:
    """The BFC allocator's books on one region: ``live`` counts its in-use chunks."""

    __slots__ = ("base", "live", "region", "size")

    def __init__(self, region: Region) -> None:
        self.region, self.base, self.size, self.live = region, region.base, region.size, 0


class Allocation:
    """A chunk handed out by :meth:`BFCAllocator.allocate`: ``[address, address + chunk_size)``.

    ``size`` is the size requested, ``chunk_size`` the bytes reserved (>= size, multiple of 256),
    ``allocator`` the BFCAllocator holding it. The handle is live until freed and never live
    again (a double free is detected); a freed handle keeps its address and sizes.
    The allocator describes its free chunks with the same record (``in_use`` False).
    """

    __slots__ = ("_next", "_prev", "_rs", "address", "allocator", "chunk_size", "in_use", "size")

    def __init__(
        self,
        address: int,
        size: int,
        chunk_size: int,
        in_use: bool,
        allocator: BFCAllocator,
        prev: Allocation | None,
        nxt: Allocation | None,
        rs: RegionRecord,
    ) -> None:
        self.address, self.size, self.chunk_size, self.in_use = address, size, chunk_size, in_use
        self.allocator, self._prev, self._next, self._rs = allocator, prev, nxt, rs

    @property
    def region(self) -> Region:
        return self._rs.region

    @property
    def offset(self) -> int:
        """Offset of the chunk inside its region (index into ``region.buffer``)."""
        return self.address - self._rs.base

    def buffer(self) -> Any:
        """The ``size`` bytes behind this allocation (a uint8 numpy view for host memory).

        Raises TypeError for regions with no memory behind them (a simulated device)."""
        buf = self._rs.region.buffer
        if buf is None:
            raise TypeError(
                f"{self.allocator.name}: allocation at {self.address:#x} is virtual (no memory behind it)"
            )
        off = self.address - self._rs.base
        return buf[off : off + self.size]

    def __repr__(self) -> str:
        state = "live" if self.in_use else "free"
        return (
            f"Allocation({state}, address={self.address:#x}, size={self.size}, chunk_size={self.chunk_size})"
        )
