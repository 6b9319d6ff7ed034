"""Keeping freed host memory for reuse: glibc malloc's trim and mmap thresholds.

A step whose kernels hold several large arrays at once (16 products of 512x512 float32 waiting
for their sums: 16 MiB) frees them all at its end. glibc's dynamic thresholds then give the
heap's top back to the kernel (trim threshold: twice the largest array freed) and the next step
faults every page in again: ~4,000 minor faults and 10 ms of system time per step there, a fifth
of the step. TF1 allocates through its own allocator and does not pay this. Raising the trim
threshold keeps up to ``retain`` freed bytes in the process; the mmap threshold goes to glibc's
own dynamic ceiling (32 MiB on 64-bit) because setting either one turns the dynamic adjustment
off. Arrays larger than that are mmapped and given back when freed, as before.

Process-wide C library state, like the BLAS thread limit: applied when a Runtime's devices are
created, and left as is when it closes (glibc has no way to return to its dynamic mode).
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
from typing import Any

logger = logging.getLogger(__name__)

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit: the most its dynamic threshold reaches
MMAP_THRESHOLD = 32 << 20


def retain_freed_host_memory(retain: int) -> bool:
    """Keep up to ``retain`` bytes of freed heap memory for reuse (0: leave malloc as it is).
    True when glibc took the settings; False elsewhere (another C library), where nothing
    changes."""
    mallopt = _mallopt() if retain > 0 and _glibc() else None
    if mallopt is None:
        return False
    # glibc's mallopt takes an int: cap at its largest value
    took = mallopt(M_TRIM_THRESHOLD, min(retain, 2**31 - 1)) == 1
    took = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 and took
    logger.info("host malloc keeps up to %d freed bytes for reuse (glibc took it: %s)", retain, took)
    return took


@functools.cache
def _mallopt() -> Any:
    """The C library's mallopt, loaded once: each ``ctypes.CDLL`` makes a class of its own,
    garbage the collector would have to find."""
    try:
        return ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return None


def _glibc() -> bool:
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (ValueError, OSError, AttributeError):  # not a GNU C library, or no confstr
        return False


__all__ = ["retain_freed_host_memory"]
