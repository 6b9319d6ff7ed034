"""Allocator statistics records (immutable snapshots) and byte formatting."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

__all__ = ["AllocatorStats", "MemoryStats", "format_bytes"]


def format_bytes(n: int) -> str:
    """``n`` bytes for humans, exact count included: ``'1.00 GiB (1073741824 B)'``."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{n} B" if unit == "B" else f"{value:.2f} {unit} ({n} B)"
        value /= 1024
    raise AssertionError("unreachable")


@dataclass(frozen=True, slots=True)
class AllocatorStats:
    """A snapshot of one BFCAllocator's figures (bytes are chunk bytes: requests rounded up).

    peak_bytes_in_use is the lifetime peak; window_peak_bytes_in_use the peak since the last
    ``reset_peak()``. pool_bytes is the sum of regions held; stable_bytes the sum of regions
    holding at least one live chunk (what a shrink cannot free now). fragmentation is
    ``1 - largest_free_block / free_bytes`` over the pool (0 when nothing is free).
    """

    name: str
    bytes_in_use: int
    peak_bytes_in_use: int
    window_peak_bytes_in_use: int
    bytes_limit: int
    num_allocs: int
    num_live: int
    largest_alloc_size: int
    pool_bytes: int
    stable_bytes: int
    free_bytes: int
    largest_free_block: int
    fragmentation: float
    num_regions: int
    num_failures: int


@dataclass(frozen=True, slots=True)
class MemoryStats:
    """What ``sess.memory_stats(device)`` returns (docs/design.md section 3 fields first).

    Device figures come from the device BFC, host figures from the VMem host fallback allocator.
    ``swap_reason`` is the reason of the last host fallback: "OOM" (the request exceeded what the
    device limit leaves free), "FRAGMENT" (enough bytes were free but no block was large enough)
    or "" (no fallback yet).
    """

    bytes_in_use: int
    peak_bytes_in_use: int
    bytes_limit: int
    pool_bytes: int
    stable_bytes: int
    host_bytes_in_use: int
    host_peak_bytes_in_use: int
    num_allocs: int
    num_host_fallbacks: int
    # Extras.
    window_peak_bytes_in_use: int = 0
    host_window_peak_bytes_in_use: int = 0
    host_bytes_limit: int = 0
    host_pool_bytes: int = 0
    host_num_allocs: int = 0
    largest_free_block: int = 0
    fragmentation: float = 0.0
    num_oom_fallbacks: int = 0
    num_fragment_fallbacks: int = 0
    swap_reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
