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
from .pool_regions import PoolRegions
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


class BFCAllocator(PoolRegions):
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
