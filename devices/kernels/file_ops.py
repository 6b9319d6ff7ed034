"""Kernel of ``MatchingFiles`` (graph/ops/file_ops.py): glob patterns expanded on the host,
sorted, as bytes."""

from __future__ import annotations

import glob
from typing import Any

import numpy as np

from .registry import Aliasing, Compute, KernelContext, register_kernel


@register_kernel("MatchingFiles", devices=("CPU",), aliasing=Aliasing.FRESH)
def _matching_files(ctx: KernelContext) -> Compute:
    def compute(pattern: Any) -> np.ndarray:
        patterns = np.asarray(pattern, dtype=object).reshape(-1)
        found: set[str] = set()
        for p in patterns.tolist():
            found.update(glob.glob(p.decode() if isinstance(p, bytes) else str(p)))
        return np.array([f.encode() for f in sorted(found)], dtype=object).reshape(-1)

    return compute
