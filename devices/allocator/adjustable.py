"""AdjustableAllocator: grow or shrink a BFC allocator's limit while it runs (AntMan)."""

from __future__ import annotations

import logging

from .bfc import BFCAllocator
from .stats import format_bytes

logger = logging.getLogger(__name__)

__all__ = ["AdjustableAllocator"]


class AdjustableAllocator:
    """Changes the limit of ``bfc`` (a device's BFC; for a VMemAllocator pass ``vmem.device``).

    ``max_limit`` (default: the limit at construction, i.e. the initial device limit) caps what
    :meth:`adjust_limit` sets unless called with ``clamp=False``. A shrink that live data blocks
    is remembered as :attr:`target`; :meth:`retry` re-applies it (e.g. at each step boundary).
    """

    def __init__(self, bfc: BFCAllocator, max_limit: int | None = None) -> None:
        self.bfc = bfc
        self.max_limit = bfc.bytes_limit if max_limit is None else max_limit
        self.target: int | None = None

    def clamp(self, new_limit: int) -> int:
        """``new_limit`` capped at :attr:`max_limit` (logged when capped)."""
        if new_limit > self.max_limit:
            logger.info(
                "%s: requested limit %s is above the initial device limit; clamped to %s",
                self.bfc.name,
                format_bytes(new_limit),
                format_bytes(self.max_limit),
            )
            return self.max_limit
        return new_limit

    def adjust_limit(self, new_limit: int, *, clamp: bool = True) -> int:
        """Set the limit to ``new_limit`` as far as possible; return the limit actually reached.

        Growing, or shrinking to no less than the bytes held in regions, only sets the limit.
        Shrinking further releases regions holding no live chunk, lowest address first, until the
        pool fits; if live chunks prevent that the limit becomes the remaining pool size (which
        also stops the allocator from taking new regions) and a later :meth:`retry` can finish.
        """
        if new_limit < 0:
            raise ValueError(f"{self.bfc.name}: limit must be >= 0, got {new_limit}")
        if clamp:
            new_limit = self.clamp(new_limit)
        bfc = self.bfc
        with bfc.lock:
            self.target = new_limit
            if new_limit >= bfc.pool_bytes:
                bfc.set_limit(new_limit)
                return new_limit
            pool = bfc.release_free_regions(new_limit)
            reached = max(new_limit, pool)
            bfc.set_limit(reached, restart_growth=True)
        if reached > new_limit:
            logger.info(
                "%s: could shrink the limit only to %s (target %s): live data holds %s in regions; will retry",
                bfc.name,
                format_bytes(reached),
                format_bytes(new_limit),
                format_bytes(bfc.stats().stable_bytes),
            )
        return reached

    @property
    def reached(self) -> bool:
        """True unless the last requested limit is still above what could be set."""
        return self.target is None or self.bfc.bytes_limit <= self.target

    def retry(self) -> int:
        """Re-apply a target that live data blocked; return the limit now in force."""
        if self.target is not None and not self.reached:
            return self.adjust_limit(self.target, clamp=False)
        return self.bfc.bytes_limit
