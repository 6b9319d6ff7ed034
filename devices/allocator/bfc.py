"""BFCAllocator: best-fit with coalescing over regions from a sub-allocator (TF's GPU allocator).

Layout: every region is a doubly linked list of chunks tiling it exactly; a chunk is in use or
free, and two free chunks are never adjacent (freeing merges them). Free chunks sit in bins by
size class (bin i: [256 * 2**i, 256 * 2**(i+1)), the last bin unbounded), each bin a sorted list
of integer keys ``size << 64 | address`` so bisect finds the best fit (smallest, then lowest
address) and a bitmask of non-empty bins finds the next larger class in O(1).
"""

from __future__ import annotations

import logging
import threading
from bisect import bisect_left, insort

from antcolony.errors import ResourceExhaustedError

from .chunk import Allocation, RegionRecord
from .stats import AllocatorStats, format_bytes
from .sub_allocator import ALIGNMENT, SubAllocator

logger = logging.getLogger(__name__)

__all__ = ["NUM_BINS", "Allocation", "BFCAllocator", "round_bytes"]

NUM_BINS = 21
_ADDR_BITS = 64
_ADDR_MASK = (1 << _ADDR_BITS) - 1


def round_bytes(nbytes: int) -> int:
    """The chunk size serving a request: a multiple of 256, at least 256."""
    return ((nbytes + ALIGNMENT - 1) & -ALIGNMENT) or ALIGNMENT


class BFCAllocator:
    """Best-fit-with-coalescing allocator over regions from ``sub_allocator``, at most ``memory_limit``.

    With ``allow_growth`` regions start at ``initial_region_bytes`` and double at each extension
    (never past the limit); otherwise the first extension takes everything the limit allows.
    Where the sub-allocator can grow a region in place (``can_extend``: the simulated GPU's
    address space), an extension grows the highest region instead of adding one, merging its
    free tail with the growth: the pool stays one range, as TF's single region, and a block
    larger than any one growth step fits beside the others. When
    the sub-allocator refuses a region, halving sizes are tried down to the request. On failure,
    wholly free regions are released and the extension retried (TF's GPU garbage collection),
    so regions left by a shrink or by growth do not strand the limit.
    Thread-safe (one lock); loop-agnostic. ``lock`` is reentrant for compound callers.
    """

    initial_region_bytes = 2 << 20

    def __init__(
        self,
        sub_allocator: SubAllocator,
        memory_limit: int,
        allow_growth: bool = False,
        name: str = "bfc",
        garbage_collection: bool = True,
    ) -> None:
        if memory_limit < 0:
            raise ValueError(f"{name}: memory_limit must be >= 0, got {memory_limit}")
        self.sub_allocator, self.name = sub_allocator, name
        self.allow_growth, self.garbage_collection = allow_growth, garbage_collection
        self.lock = threading.RLock()
        self._limit = memory_limit
        self._growth = round_bytes(min(memory_limit, self.initial_region_bytes))
        self._refusal = ""  # the sub-allocator's last reason for refusing a region
        self._bins: list[list[int]] = [[] for _ in range(NUM_BINS)]
        self._mask = 0  # bit i set <=> bins[i] non-empty
        self._free: dict[int, Allocation] = {}  # address -> free chunk
        self._in_use: dict[int, Allocation] = {}  # address -> live chunk
        self._regions: list[RegionRecord] = []  # sorted by base
        self._bases: list[int] = []
        self._bytes_in_use = self._peak = self._window_peak = self._largest_alloc = 0
        self._recent_peak = 0  # since the last take_recent_peak (the pool trimmer's window)
        self._num_allocs = self._failures = self._pool = self._stable = 0

    # -- allocation ---------------------------------------------------------------------------
    def try_allocate(self, nbytes: int) -> Allocation | None:
        """A chunk of at least ``nbytes``, or None when the limit or fragmentation forbids it."""
        if nbytes < 0:
            raise ValueError(f"{self.name}: cannot allocate {nbytes} bytes")
        r = ((nbytes + ALIGNMENT - 1) & -ALIGNMENT) or ALIGNMENT
        b0 = (r >> 8).bit_length() - 1
        if b0 >= NUM_BINS:
            b0 = NUM_BINS - 1
        with self.lock:
            bins = self._bins
            while True:  # best fit: smallest chunk >= r in r's bin, else the smallest of a larger bin
                lst = bins[b0]
                i = bisect_left(lst, r << _ADDR_BITS)
                if i < len(lst):
                    b, key = b0, lst.pop(i)
                    break
                m = self._mask >> (b0 + 1)
                if m:
                    b = b0 + (m & -m).bit_length()
                    lst = bins[b]
                    key = lst.pop(0)
                    break
                if not (
                    self._extend(r) or (self.garbage_collection and self._collect(r) and self._extend(r))
                ):
                    self._failures += 1
                    return None
            if not lst:
                self._mask &= ~(1 << b)
            f = self._free.pop(key & _ADDR_MASK)
            prev = f._prev
            c = Allocation(f.address, nbytes, r, True, self, prev, f, f._rs)
            if prev is not None:
                prev._next = c
            if f.chunk_size > r:  # split: f keeps the tail and goes back to a bin
                f.address += r
                f.chunk_size -= r
                f._prev = c
                self._bin(f)
            else:  # exact fit: c replaces f in the list
                c._next = nxt = f._next
                if nxt is not None:
                    nxt._prev = c
            b = self._bytes_in_use = self._bytes_in_use + r
            if b > self._recent_peak:
                self._recent_peak = b
            if b > self._window_peak:
                self._window_peak = b
                self._peak = max(self._peak, b)
            if r > self._largest_alloc:
                self._largest_alloc = r
            self._num_allocs += 1
            rs = c._rs
            rs.live += 1
            if rs.live == 1:
                self._stable += rs.size
            self._in_use[c.address] = c
            return c

    def allocate(self, nbytes: int) -> Allocation:
        """Like :meth:`try_allocate` but raises ResourceExhaustedError with the figures on failure."""
        c = self.try_allocate(nbytes)
        if c is None:
            raise ResourceExhaustedError(None, None, self.oom_message(nbytes))
        return c

    def free(self, c: Allocation) -> None:
        """Return ``c`` (a live allocation of this allocator) and merge it with free neighbours."""
        with self.lock:
            if c.allocator is not self or not c.in_use:
                owner = "another allocator" if c.allocator is not self else "nobody (double free)"
                raise ValueError(f"{self.name}: cannot free {c!r}: it belongs to {owner}")
            del self._in_use[c.address]
            c.in_use = False
            self._bytes_in_use -= c.chunk_size
            rs = c._rs
            rs.live -= 1
            if not rs.live:
                self._stable -= rs.size
            # The freed handle never becomes a free chunk: a neighbour absorbs it or a new record
            # replaces it, so stale handles stay inert.
            prev, nxt, size = c._prev, c._next, c.chunk_size
            c._prev = c._next = None
            if prev is not None and not prev.in_use:
                self._unbin(prev)
                f = prev
                f.chunk_size += size
                if nxt is not None and not nxt.in_use:
                    self._unbin(nxt)
                    f.chunk_size += nxt.chunk_size
                    nxt = nxt._next
                f._next = nxt
                if nxt is not None:
                    nxt._prev = f
            elif nxt is not None and not nxt.in_use:
                self._unbin(nxt)
                f = nxt
                f.address, f.chunk_size, f._prev = c.address, size + f.chunk_size, prev
                if prev is not None:
                    prev._next = f
            else:
                f = Allocation(c.address, 0, size, False, self, prev, nxt, rs)
                if prev is not None:
                    prev._next = f
                if nxt is not None:
                    nxt._prev = f
            size = f.chunk_size
            b = (size >> 8).bit_length() - 1
            if b >= NUM_BINS:
                b = NUM_BINS - 1
            insort(self._bins[b], (size << _ADDR_BITS) | f.address)
            self._mask |= 1 << b
            self._free[f.address] = f

    def lookup(self, address: int) -> Allocation | None:
        """The live allocation starting at ``address`` (for callers that only kept a pointer)."""
        return self._in_use.get(address)

    # -- limits and regions ---------------------------------------------------------------------
    @property
    def bytes_limit(self) -> int:
        return self._limit

    @property
    def pool_bytes(self) -> int:
        return self._pool

    @property
    def bytes_in_use(self) -> int:
        return self._bytes_in_use

    def set_limit(self, limit: int, restart_growth: bool = False) -> None:
        """Set the limit; no region is freed (see AdjustableAllocator). ``restart_growth``: the next
        regions start small again (after a shrink, so small regions can fill the freed room)."""
        if limit < 0:
            raise ValueError(f"{self.name}: limit must be >= 0, got {limit}")
        with self.lock:
            self._limit = limit
            if restart_growth:
                self._growth = round_bytes(min(max(limit, 1), self.initial_region_bytes))

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

    def describe_live(self) -> str:
        """What holds the pool: live allocations and the regions they pin (for limit warnings)."""
        with self.lock:
            live = sorted(self._in_use.values(), key=lambda c: c.chunk_size, reverse=True)
            pinned = [rs for rs in self._regions if rs.live]
            if not live:
                return "no live allocation (regions could not be released)"
            big = ", ".join(f"{format_bytes(c.chunk_size)} at {c.address:#x}" for c in live[:3])
            return (
                f"{len(live)} live allocation(s) of {format_bytes(self._bytes_in_use)} pin "
                f"{len(pinned)} region(s) of {format_bytes(sum(rs.size for rs in pinned))} "
                f"(largest: {big}); the shrink is retried at each step boundary as they are freed"
            )

    def can_fit(self, nbytes: int) -> str:
        """ "ok" if an allocation of ``nbytes`` can succeed now (barring a sub-allocator refusal),
        "FRAGMENT" if enough bytes are free under the limit but no block (or new region) is large
        enough, "OOM" if the request exceeds what the limit leaves free."""
        r = round_bytes(nbytes)
        with self.lock:
            held = self._stable if self.garbage_collection else self._pool
            if self._largest_free() >= r or self._limit - held + self._growable_tail() >= r:
                return "ok"
            return "FRAGMENT" if self._limit - self._bytes_in_use >= r else "OOM"

    def oom_message(self, nbytes: int) -> str:
        s, reason = self.stats(), self.can_fit(nbytes)
        why = {
            "OOM": "the request exceeds what the memory limit leaves free",
            "FRAGMENT": "enough bytes are free but no free block is large enough (fragmentation)",
            "ok": f"the device could not supply a region ({self._refusal or 'no reason given'})",
        }[reason]
        return (
            f"OOM when allocating {format_bytes(nbytes)} (chunk {round_bytes(nbytes)} B) on {self.name}: {why}. "
            f"bytes_in_use={format_bytes(s.bytes_in_use)}, bytes_limit={format_bytes(s.bytes_limit)}, "
            f"pool_bytes={format_bytes(s.pool_bytes)}, largest_free_block={format_bytes(s.largest_free_block)}, "
            f"live allocations={s.num_live}. Free tensors earlier, lower the batch size, raise the limit "
            "or enable vmem (host memory fallback)."
        )

    # -- statistics -----------------------------------------------------------------------------
    def stats(self) -> AllocatorStats:
        with self.lock:
            free = self._pool - self._bytes_in_use
            largest = self._largest_free()
            return AllocatorStats(
                name=self.name,
                bytes_in_use=self._bytes_in_use,
                peak_bytes_in_use=self._peak,
                window_peak_bytes_in_use=self._window_peak,
                bytes_limit=self._limit,
                num_allocs=self._num_allocs,
                num_live=len(self._in_use),
                largest_alloc_size=self._largest_alloc,
                pool_bytes=self._pool,
                stable_bytes=self._stable,
                free_bytes=free,
                largest_free_block=largest,
                fragmentation=1.0 - largest / free if free else 0.0,
                num_regions=len(self._regions),
                num_failures=self._failures,
            )

    def take_recent_peak(self) -> int:
        """The most bytes in use since the last call (the pool trimmer's own window, apart from
        the statistics' per-step window); starts the next window at the bytes in use now."""
        with self.lock:
            peak = max(self._recent_peak, self._bytes_in_use)
            self._recent_peak = self._bytes_in_use
            return peak

    def reset_peak(self) -> None:
        """Start a new peak window (e.g. per step): window peak := bytes in use now."""
        with self.lock:
            self._window_peak = self._bytes_in_use

    def check_invariants(self) -> None:
        """Recount everything from the chunk lists and compare (debugging and tests; O(chunks))."""
        from .invariants import check_invariants

        with self.lock:
            check_invariants(self)

    def __repr__(self) -> str:
        return f"BFCAllocator({self.name!r}, in_use={self._bytes_in_use}, pool={self._pool}, limit={self._limit})"

    # -- internals (lock held) ------------------------------------------------------------------
    def _largest_free(self) -> int:
        return self._bins[self._mask.bit_length() - 1][-1] >> _ADDR_BITS if self._mask else 0

    def _bin(self, c: Allocation) -> None:
        size = c.chunk_size
        b = min((size >> 8).bit_length() - 1, NUM_BINS - 1)
        insort(self._bins[b], (size << _ADDR_BITS) | c.address)
        self._mask |= 1 << b
        self._free[c.address] = c

    def _unbin(self, c: Allocation) -> None:
        size = c.chunk_size
        b = min((size >> 8).bit_length() - 1, NUM_BINS - 1)
        lst = self._bins[b]
        del lst[bisect_left(lst, (size << _ADDR_BITS) | c.address)]
        if not lst:
            self._mask &= ~(1 << b)
        del self._free[c.address]

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
        self._bin(Allocation(rs.base, 0, rs.size, False, self, None, None, rs))
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
            f = Allocation(end, 0, size, False, self, c, None, rs)
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
