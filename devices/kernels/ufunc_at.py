"""``ufunc.at`` for every array module.

numpy's ``ufunc.at`` applies updates at repeated positions one after another. CuPy's covers
fewer cases: ``add.at`` for some dtypes only, ``subtract.at`` for int32/uint32 only (a float32
``ScatterSub``, the sparse SGD step, raised TypeError on an H200), no ``multiply.at`` or
``divide.at``. Where CuPy has no such kernel the updates go in rounds: round r applies each
position's r-th update, so every round's positions are distinct and plain fancy-index arithmetic
is exact, and repeated positions still see their updates in index order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# dtypes of CuPy's add.at (its scatter_add kernel); subtract goes through add.at of -updates
_CUPY_ADD_AT = frozenset({"float16", "float32", "float64", "int32", "uint32", "uint64"})


def ufunc_at(xp: Any, ufunc: Any, target: Any, where: Any, updates: Any) -> None:
    """``target[where] (ufunc)= updates`` in place, a position's repeated updates applied in order.

    ``where`` is what numpy's ``ufunc.at`` takes here: one index array over axis 0, or a tuple of
    index arrays over the leading axes; ``updates`` has one entry (row) per index. Indices are
    already checked (non-negative, in range)."""
    if xp is np:
        ufunc.at(target, where, updates)
        return
    additive = ufunc is xp.add or ufunc is xp.subtract
    if additive and np.dtype(target.dtype).name in _CUPY_ADD_AT:
        xp.add.at(target, where, updates if ufunc is xp.add else -updates)
        return
    apply_in_rounds(xp, ufunc, target, where, updates)


def apply_in_rounds(xp: Any, ufunc: Any, target: Any, where: Any, updates: Any) -> None:
    """``ufunc_at`` by fancy-index arithmetic, one round per repeat of the most repeated position
    (a round's positions are distinct); for any array module."""
    index = where if isinstance(where, tuple) else (where,)
    n = int(index[0].size)
    if n == 0:
        return
    updates = xp.broadcast_to(xp.asarray(updates), (n, *target.shape[len(index) :]))
    key = index[0] if len(index) == 1 else xp.ravel_multi_index(index, target.shape[: len(index)])
    key = key.astype(xp.int64)
    # position ties broken by update order, so no stable sort is needed
    order = xp.argsort(key * n + xp.arange(n, dtype=xp.int64))
    ranked = key[order]
    repeat = xp.arange(n) - xp.searchsorted(ranked, ranked, side="left")
    for r in range(int(repeat.max()) + 1):
        pick = order[repeat == r]
        at = tuple(i[pick] for i in index)
        target[at] = ufunc(target[at], updates[pick])
