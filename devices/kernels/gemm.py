"""A large 2-D matrix product split over the intra-op pool (``elementwise.run_parts``).

BLAS runs at the session's per-call thread limit (1 on a 2-core machine, so that two kernels at
once never put four spinning threads on two cores); a product of at least ``PARALLEL_MACS``
multiply-adds is instead cut into blocks of output rows (or columns, when the rows are few, as
a fully connected layer's batch of 64) that the pool's threads multiply into one result, each
block a GEMM of its own. One block per thread: each block repacks the shared operand, so on the
MNIST CNN's fc layer (64x3136 by 3136x1024, one OpenBLAS thread) two blocks each cost 4.3 ->
4.5 ms of CPU time and four 4.7 -> 5.3. Non-numpy arrays (cupy) and smaller products are one
GEMM.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .elementwise import run_parts, threads

PARALLEL_MACS = 1 << 24
BLOCKS_PER_THREAD = 1
_MIN_BLOCK = 32  # rows or columns: narrower blocks lose more in GEMM efficiency than they gain
_FEW_ROWS = 32
_FEW_ROWS_MACS = 1 << 20


def matmul(xp: Any, a: Any, b: Any) -> Any:
    """``a @ b`` of 2-D arrays, on several threads when large."""
    if xp is not np or a.ndim != 2 or b.ndim != 2:
        return xp.matmul(a, b)
    m, k = a.shape
    n = b.shape[1]
    if (
        m <= _FEW_ROWS
        and _FEW_ROWS_MACS <= m * k * n < PARALLEL_MACS
        and k == b.shape[0]
        and a.dtype == b.dtype
        and a.dtype.kind == "f"
        and b.T.flags.c_contiguous
    ):
        # a @ W^T with few rows (an LSTM step's input gradient: 20 x 800 by 800 x 400) as
        # (W @ a^T)^T: OpenBLAS's transposed-B path runs such shapes at about 60% of the speed
        # of the plain one (one thread: 280 -> 174 us for that shape, 137 -> 92 us for 20 x 800
        # by 800 x 200); with 64 rows or a product under a million multiply-adds it gained
        # nothing or lost.
        return np.ascontiguousarray(np.matmul(b.T, a.T).T)
    if threads() <= 1:
        return xp.matmul(a, b)
    if m * k * n < PARALLEL_MACS or k != b.shape[0] or a.dtype != b.dtype or a.dtype.kind not in "fc":
        return xp.matmul(a, b)
    by_rows = m >= n
    size = m if by_rows else n
    blocks = min(BLOCKS_PER_THREAD * threads(), size // _MIN_BLOCK)
    if blocks <= 1:
        return xp.matmul(a, b)
    out = np.empty((m, n), dtype=a.dtype)
    step = -(-size // blocks)
    block = _row_block if by_rows else _column_block
    run_parts([functools.partial(block, a, b, out, lo, lo + step) for lo in range(0, size, step)])
    return out


def _row_block(a: Any, b: Any, out: Any, lo: int, hi: int) -> None:
    np.matmul(a[lo:hi], b, out=out[lo:hi])


def _column_block(a: Any, b: Any, out: Any, lo: int, hi: int) -> None:
    np.matmul(a, b[:, lo:hi], out=out[:, lo:hi])
