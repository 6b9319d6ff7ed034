"""Recount a BFCAllocator from scratch and compare with its incremental books (tests, debugging)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .bfc import _ADDR_BITS, _ADDR_MASK, NUM_BINS
from .sub_allocator import ALIGNMENT

if TYPE_CHECKING:
    from .bfc import BFCAllocator

__all__ = ["check_invariants"]


def _fail(bfc: BFCAllocator, what: str) -> None:
    raise AssertionError(f"{bfc.name}: allocator invariant broken: {what}")


def check_invariants(bfc: BFCAllocator) -> None:
    """Walk every region's chunk list and check the allocator's structure and statistics.

    Checks: regions sorted and disjoint; chunks tile each region exactly, 256-aligned, linked both
    ways; no two adjacent free chunks; bins hold exactly the free chunks, in the right class,
    sorted; the non-empty-bin mask; and every statistic against a recount.
    Raises AssertionError naming the first broken invariant. Call with ``bfc.lock`` held.
    """
    free_seen: dict[int, object] = {}
    live_seen: dict[int, object] = {}
    pool = stable = in_use = 0
    last_end = -1
    if bfc._bases != [rs.base for rs in bfc._regions]:
        _fail(bfc, "region base index out of sync")
    for rs in bfc._regions:
        if rs.base < last_end:
            _fail(bfc, f"regions overlap or are unsorted at {rs.base:#x}")
        if rs.region.base != rs.base or rs.region.size != rs.size or rs.size % ALIGNMENT:
            _fail(bfc, f"region record {rs.region!r} inconsistent")
        last_end = rs.base + rs.size
        pool += rs.size
        first = bfc._free.get(rs.base) or bfc._in_use.get(rs.base)
        if first is None or first._prev is not None:
            _fail(bfc, f"no first chunk at region base {rs.base:#x}")
        addr, live, prev = rs.base, 0, None
        c = first
        while c is not None:
            if c.address != addr or c._prev is not prev or c._rs is not rs or c.allocator is not bfc:
                _fail(bfc, f"chunk list broken at {addr:#x} ({c!r})")
            if c.chunk_size <= 0 or c.chunk_size % ALIGNMENT or c.address % ALIGNMENT:
                _fail(bfc, f"unaligned or empty chunk {c!r}")
            if c.in_use:
                if c.size > c.chunk_size:
                    _fail(bfc, f"chunk smaller than its request {c!r}")
                live_seen[c.address] = c
                live += 1
                in_use += c.chunk_size
            else:
                if prev is not None and not prev.in_use:
                    _fail(bfc, f"adjacent free chunks at {prev.address:#x} and {c.address:#x} not merged")
                free_seen[c.address] = c
            addr += c.chunk_size
            prev, c = c, c._next
        if addr != rs.base + rs.size:
            _fail(bfc, f"chunks of region {rs.region!r} end at {addr:#x}")
        if live != rs.live:
            _fail(bfc, f"region {rs.region!r} counts {rs.live} live chunks, recount {live}")
        if live:
            stable += rs.size
    if free_seen.keys() != bfc._free.keys() or any(bfc._free[a] is not c for a, c in free_seen.items()):
        _fail(bfc, "free-chunk index differs from the chunk lists")
    if live_seen.keys() != bfc._in_use.keys() or any(bfc._in_use[a] is not c for a, c in live_seen.items()):
        _fail(bfc, "live-chunk index differs from the chunk lists")
    keys = []
    for b, lst in enumerate(bfc._bins):
        if lst != sorted(lst) or bool(lst) != bool(bfc._mask >> b & 1):
            _fail(bfc, f"bin {b} unsorted or mask bit wrong")
        for key in lst:
            size, c = key >> _ADDR_BITS, bfc._free.get(key & _ADDR_MASK)
            if c is None or c.chunk_size != size or min((size >> 8).bit_length() - 1, NUM_BINS - 1) != b:
                _fail(bfc, f"bin {b} holds a stale or misplaced key for size {size}")
        keys.extend(lst)
    if len(keys) != len(free_seen):
        _fail(bfc, f"bins hold {len(keys)} chunks, {len(free_seen)} free chunks exist")
    if bfc._mask >> NUM_BINS:
        _fail(bfc, "mask has bits beyond the last bin")
    s = bfc.stats()
    largest = max((c.chunk_size for c in free_seen.values()), default=0)  # type: ignore[attr-defined]
    recount = {
        "pool_bytes": pool,
        "stable_bytes": stable,
        "bytes_in_use": in_use,
        "num_live": len(live_seen),
        "largest_free_block": largest,
        "free_bytes": pool - in_use,
        "num_regions": len(bfc._regions),
    }
    for field, value in recount.items():
        if getattr(s, field) != value:
            _fail(bfc, f"stats.{field} = {getattr(s, field)}, recount {value}")
    if not in_use <= s.window_peak_bytes_in_use <= s.peak_bytes_in_use:
        _fail(bfc, f"peaks {s.window_peak_bytes_in_use}/{s.peak_bytes_in_use} below bytes in use {in_use}")
    if any(bfc.sub_allocator._live.get(rs.base) is not rs.region for rs in bfc._regions):
        _fail(bfc, "a region is not (or no longer) allocated by the sub-allocator")
