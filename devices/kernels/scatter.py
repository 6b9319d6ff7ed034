"""Kernels of the scatter ops (graph/ops/scatter.py): variable rows updated in place
(``VarRef.mutable``), ``ScatterNd`` and ``GatherNd``."""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import InvalidArgumentError

from ..resources import check_ref
from .registry import Aliasing, Compute, KernelContext, register_kernel
from .segment import UNSIGNED, check_ids
from .ufunc_at import ufunc_at

# op type -> ufunc name whose ``.at`` applies updates at (possibly repeated) indices; None: assignment
_ROW_UFUNCS: dict[str, str | None] = {
    "ScatterUpdate": None,
    "ScatterAdd": "add",
    "ScatterSub": "subtract",
    "ScatterMul": "multiply",
    "ScatterDiv": "divide",
    "ScatterMax": "maximum",
    "ScatterMin": "minimum",
}
_ND_UFUNCS: dict[str, str | None] = {
    "ScatterNdUpdate": None,
    "ScatterNdAdd": "add",
    "ScatterNdSub": "subtract",
}


def scatter_rows(xp: Any, target: Any, idx: Any, updates: Any, ufunc: Any) -> None:
    """target[idx] (op)= updates in place, the rows of repeated indices applied one after another
    in index order (as TF's CPU kernels); ``idx`` already checked (cupy, and assignment)."""
    if ufunc is None:
        target[idx] = updates
    elif _unique(xp, idx):
        # no index repeats: fancy-index arithmetic is exact, and several times faster than .at
        target[idx] = ufunc(target[idx], updates)
    else:
        ufunc_at(xp, ufunc, target, idx, updates)


def scatter_rows_checked(target: np.ndarray, idx: np.ndarray, updates: np.ndarray, ufunc: Any) -> None:
    """``scatter_rows`` for numpy arrays and an arithmetic ``ufunc``, checking ``idx`` on the way:
    an index out of ``[0, len(target))`` raises IndexError before anything is written.

    Written for the fewest numpy calls (in a training step each costs several us, more than the
    arithmetic on a few hundred rows): for rows, the sort of the indices finds the smallest and
    largest index (the whole check) and the repeats; for a vector, as unsigned integers a
    negative index is above any bound, so the largest index is the whole check."""
    n, bound = idx.size, target.shape[0]
    if target.ndim == 1:
        # one call, rows applied in index order (.at's fast 1-D loop)
        uidx = idx.view(UNSIGNED[idx.dtype]) if idx.dtype in UNSIGNED else idx
        if n and uidx.max() >= bound:
            raise IndexError("index out of range")
        ufunc.at(target, uidx, updates)
        return
    if n < 2:
        if n and not 0 <= idx[0] < bound:
            raise IndexError("index out of range")
        target[idx] = ufunc(target.take(idx, axis=0), updates)
        return
    order = idx.argsort(kind="stable")
    ranked = idx.take(order)
    if ranked[0] < 0 or ranked[-1] >= bound:
        raise IndexError("index out of range")
    later = ranked[1:] == ranked[:-1]  # sorted position p + 1 repeats position p
    if not np.count_nonzero(later):  # (ndarray.any goes through a Python wrapper: ~2 us more)
        target[idx] = ufunc(target.take(idx, axis=0), updates)
        return
    # Each distinct row once into a compact buffer, with its first update by fancy-index
    # arithmetic; the later updates of repeated rows by .at on the flattened buffer (its fast
    # 1-D loop), in index order (the sort is stable); the buffer written back once. 128 Zipf
    # ids (103 distinct) into 50000x128 float32 in the word2vec step: 74-92 us against 81-95 us
    # with the first updates applied in the table and the repeats by .at there.
    first = np.empty(n, bool)
    first[0] = True
    np.logical_not(later, out=first[1:])
    rows = ranked[first]
    work = ufunc(target.take(rows, axis=0), updates.take(order[first], axis=0))
    if work.dtype != target.dtype:  # (integer division: stored as each update is applied)
        work = work.astype(target.dtype)
    slot = first.cumsum()[1:][later]  # the repeat's row in work, plus one
    width = work[0].size
    flat = (slot * width)[:, None] + _row_offsets(width)
    ufunc.at(work.reshape(-1), flat.reshape(-1), updates.take(order[1:][later], axis=0).reshape(-1))
    target[rows] = work


_OFFSETS: dict[int, np.ndarray] = {}


def _row_offsets(width: int) -> np.ndarray:
    """``arange(-width, 0)``: the offsets of a row's elements from the start of the next row."""
    got = _OFFSETS.get(width)
    if got is None:
        got = _OFFSETS[width] = np.arange(-width, 0, dtype=np.intp)
    return got


def _unique(xp: Any, idx: Any) -> bool:
    if idx.size < 2:
        return True
    s = xp.sort(idx)
    return not bool((s[1:] == s[:-1]).any())


def _row_kernel(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op
    ufunc_name = _ROW_UFUNCS[op.type]
    ufunc = None if ufunc_name is None else getattr(xp, ufunc_name)
    checked = xp is np and ufunc is not None

    def compute(ref: Any, indices: Any, updates: Any) -> Any:
        r = check_ref(ref, op)
        value = r.mutable()
        idx = xp.asarray(indices).reshape(-1)
        rows = value.shape[0] if value.ndim else 0
        fast = checked and rows and idx.dtype.kind in "iu"
        if not fast:
            check_ids(idx, rows, "indices", op.name)
        want = (*xp.shape(indices), *value.shape[1:])
        upd = xp.asarray(updates, dtype=value.dtype)
        if upd.shape != want:
            if upd.ndim:
                raise InvalidArgumentError(
                    None,
                    op,
                    f"updates of shape {tuple(upd.shape)} must have shape {want} (indices.shape + "
                    f"variable {r.name}'s shape[1:])",
                )
            upd = xp.broadcast_to(upd, want)
        upd = upd.reshape((idx.size, *value.shape[1:]))
        if not fast:
            scatter_rows(xp, value, idx, upd, ufunc)
            return value
        try:
            scatter_rows_checked(value, idx, upd, ufunc)
        except IndexError:
            check_ids(idx, rows, "indices", op.name)  # raises, naming the node and the range
            raise
        return value

    return compute


# A row scatter makes a few passes over its updates only (the variable's reference counts one
# element): inline up to 4x the session's threshold, since handing a 256 x 128 sparse SGD update
# (~40 us) to a worker thread costs more than it (the embedding step's ScatterSub, 33k elements).
for _t in _ROW_UFUNCS:
    register_kernel(_t, aliasing=Aliasing.HELD, expensive=True, inline_scale=4)(_row_kernel)


def _nd_index(xp: Any, indices: Any, shape: tuple[int, ...], name: str) -> tuple[tuple[Any, ...], int, int]:
    """(index arrays per leading axis, number of indices, index depth K) of [..., K] ``indices``."""
    ix = xp.asarray(indices)
    k = ix.shape[-1] if ix.ndim else 0
    if k > len(shape):
        raise ValueError(f"{name}: indices of depth {k} index a tensor of rank {len(shape)}")
    flat = ix.reshape(-1, k)
    for axis in range(k):
        check_ids(flat[:, axis], shape[axis], f"indices[..., {axis}]", name)
    return tuple(flat[:, a] for a in range(k)), flat.shape[0], k


def _scatter_into(xp: Any, out: Any, indices: Any, updates: Any, ufunc: Any, name: str) -> None:
    where, n, k = _nd_index(xp, indices, out.shape, name)
    upd = xp.asarray(updates, dtype=out.dtype)
    want = (*xp.shape(indices)[:-1], *out.shape[k:])
    if upd.shape != want:
        if upd.ndim:
            raise ValueError(f"{name}: updates of shape {tuple(upd.shape)} must have shape {want}")
        upd = xp.broadcast_to(upd, want)
    upd = upd.reshape((n, *out.shape[k:]))
    if ufunc is None:
        out[where] = upd
    else:
        ufunc_at(xp, ufunc, out, where, upd)


def _nd_kernel(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op
    ufunc_name = _ND_UFUNCS[op.type]
    ufunc = None if ufunc_name is None else getattr(xp, ufunc_name)

    def compute(ref: Any, indices: Any, updates: Any) -> Any:
        value = check_ref(ref, op).mutable()
        _scatter_into(xp, value, indices, updates, ufunc, op.name)
        return value

    return compute


for _t in _ND_UFUNCS:
    register_kernel(_t, aliasing=Aliasing.HELD, expensive=True)(_nd_kernel)


@register_kernel("ScatterNd", expensive=True)
def _scatter_nd(ctx: KernelContext) -> Compute:
    xp, name = ctx.xp, ctx.op.name

    def compute(indices: Any, updates: Any, shape: Any) -> Any:
        out = xp.zeros(tuple(int(d) for d in xp.asarray(shape).reshape(-1)), dtype=updates.dtype)
        _scatter_into(xp, out, indices, updates, xp.add, name)
        return out

    return compute


@register_kernel("GatherNd", expensive=True)
def _gather_nd(ctx: KernelContext) -> Compute:
    xp, name = ctx.xp, ctx.op.name

    def compute(params: Any, indices: Any) -> Any:
        shape = xp.shape(params)
        where, _, k = _nd_index(xp, indices, shape, name)
        return xp.asarray(params[where]).reshape((*xp.shape(indices)[:-1], *shape[k:]))

    return compute
