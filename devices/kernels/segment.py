"""Kernels of the segment reductions (graph/ops/segment.py) and the gather that drops negative ids."""

from __future__ import annotations

from typing import Any

import numpy as np

from .registry import Compute, KernelContext, register_kernel
from .ufunc_at import ufunc_at

#: integer dtype -> the unsigned one of its width: viewed so, a negative id is above any limit,
#: and one ``max`` checks both bounds
UNSIGNED = {np.dtype(f"{kind}{b}"): np.dtype(f"uint{b}") for kind in ("int", "uint") for b in (8, 16, 32, 64)}


def out_of_range(ids: Any, limit: int) -> bool:
    """Whether some of the (non-empty) ``ids`` are outside ``[0, limit)``: one pass for integers."""
    unsigned = UNSIGNED.get(ids.dtype)
    if unsigned is not None:
        return bool(ids.view(unsigned).max() >= limit)
    return bool(ids.max() >= limit or ids.min() < 0)


def check_ids(ids: Any, limit: int, what: str, name: str, allow_negative: bool = False) -> None:
    """Every id < ``limit`` (and >= 0 unless negatives mean "drop"), else an error naming the node."""
    if not ids.size:
        return
    if not allow_negative and not out_of_range(ids, limit):
        return
    lo, hi = int(ids.min()), int(ids.max())
    if hi >= limit or (lo < 0 and not allow_negative):
        raise IndexError(f"{name}: {what} must be in [0, {limit}), got values in [{lo}, {hi}]")


def _flat(xp: Any, data: Any, ids: Any) -> tuple[Any, Any]:
    """(ids as a vector, data with the ids' axes merged into its first)."""
    flat_ids = xp.asarray(ids).reshape(-1)
    tail = xp.shape(data)[xp.ndim(ids) :]
    return flat_ids, xp.reshape(data, (flat_ids.size, *tail))


def _fill_value(dtype: Any, ufunc: Any) -> Any:
    info = np.finfo(dtype) if np.dtype(dtype).kind == "f" else np.iinfo(dtype)
    return info.min if ufunc is np.maximum else info.max


_UNSORTED = {"UnsortedSegmentSum": np.add, "UnsortedSegmentMax": np.maximum, "UnsortedSegmentMin": np.minimum}


def _unsorted_kernel(ctx: KernelContext) -> Compute:
    xp, name = ctx.xp, ctx.op.name
    ufunc = getattr(xp, _UNSORTED[ctx.op.type].__name__)

    def compute(data: Any, ids: Any, num_segments: Any) -> Any:
        n = int(num_segments)
        flat_ids, rows = _flat(xp, data, ids)
        check_ids(flat_ids, n, "segment_ids", name, allow_negative=True)
        fill = 0 if ufunc is xp.add else _fill_value(rows.dtype, _UNSORTED[ctx.op.type])
        out = xp.full((n, *rows.shape[1:]), fill, dtype=rows.dtype)
        keep = flat_ids >= 0
        if not bool(keep.all()):
            flat_ids, rows = flat_ids[keep], rows[keep]
        ufunc_at(xp, ufunc, out, flat_ids, rows)
        return out

    return compute


for _t in _UNSORTED:
    register_kernel(_t, expensive=True)(_unsorted_kernel)


@register_kernel("SegmentGather", expensive=True)
def _segment_gather(ctx: KernelContext) -> Compute:
    xp = ctx.xp

    def compute(params: Any, ids: Any) -> Any:
        idx = xp.asarray(ids)
        drop = idx < 0
        out = xp.take(params, xp.where(drop, 0, idx), axis=0)
        if bool(drop.any()):
            out[drop] = 0
        return out

    return compute


#: Sorted segment reductions: (ufunc, value of an empty segment). Mean sums, then divides.
_SORTED = {
    "SegmentSum": ("add", 0),
    "SegmentMean": ("add", 0),
    "SegmentProd": ("multiply", 1),
    "SegmentMax": ("maximum", None),
    "SegmentMin": ("minimum", None),
}


def _sorted_kernel(ctx: KernelContext) -> Compute:
    xp, name, op_type = ctx.xp, ctx.op.name, ctx.op.type
    ufunc_name, empty = _SORTED[op_type]
    ufunc = getattr(xp, ufunc_name)

    def compute(data: Any, ids: Any) -> Any:
        idx = xp.asarray(ids)
        if idx.size and bool((idx[1:] < idx[:-1]).any()):
            raise ValueError(f"{name}: segment_ids must be sorted in increasing order")
        n = int(idx[-1]) + 1 if idx.size else 0
        check_ids(idx, max(n, 1), "segment_ids", name)
        tail = xp.shape(data)[1:]
        if empty is None:
            # max/min start from the data's extreme; segments no row reaches are 0 below
            fill = _fill_value(data.dtype, np.maximum if ufunc_name == "maximum" else np.minimum)
            out = xp.full((n, *tail), fill, dtype=data.dtype)
        else:
            out = xp.full((n, *tail), empty, dtype=data.dtype)
        ufunc_at(xp, ufunc, out, idx, data)
        if empty is None or op_type == "SegmentMean":
            counts = xp.bincount(idx, minlength=n)[:n].reshape((n,) + (1,) * len(tail))
            if op_type == "SegmentMean":
                out = (out / xp.maximum(counts, 1)).astype(data.dtype)
            else:
                out = xp.where(counts > 0, out, xp.zeros_like(out))
        return out

    return compute


for _t in _SORTED:
    # CuPy has no multiply.at: a product runs on the CPU (soft placement moves it there)
    _devices = ("CPU",) if _t == "SegmentProd" else ("CPU", "GPU")
    register_kernel(_t, devices=_devices, expensive=True)(_sorted_kernel)


def _segment_scale(xp: Any, ids: Any, n: int, mode: str, dtype: Any) -> Any:
    """Per segment: 1 (sum), 1/count (mean) or 1/sqrt(count) (sqrt_n); empty segments count 1."""
    counts = xp.maximum(xp.bincount(ids, minlength=n)[:n], 1).astype(dtype)
    return counts if mode == "mean" else xp.sqrt(counts)


def _sparse_segment_kernel(ctx: KernelContext) -> Compute:
    from antcolony.graph.ops.segment import SPARSE_SEGMENT_MODES

    xp, name, mode = ctx.xp, ctx.op.name, SPARSE_SEGMENT_MODES[ctx.op.type]

    def compute(data: Any, indices: Any, ids: Any, num_segments: Any = None) -> Any:
        idx, seg = xp.asarray(indices).reshape(-1), xp.asarray(ids).reshape(-1)
        if idx.size != seg.size:
            raise ValueError(f"{name}: indices ({idx.size}) and segment_ids ({seg.size}) differ in length")
        check_ids(idx, xp.shape(data)[0], "indices", name)
        n = int(num_segments) if num_segments is not None else (int(seg.max()) + 1 if seg.size else 0)
        check_ids(seg, max(n, 1), "segment_ids", name)
        out = xp.zeros((n, *xp.shape(data)[1:]), dtype=data.dtype)
        ufunc_at(xp, xp.add, out, seg, xp.take(data, idx, axis=0))
        if mode != "sum" and n:
            out /= _segment_scale(xp, seg, n, mode, out.dtype).reshape((n,) + (1,) * (out.ndim - 1))
        return out

    return compute


for _t in ("SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN"):
    register_kernel(_t, expensive=True)(_sparse_segment_kernel)


@register_kernel("SparseSegmentGrad", expensive=True)
def _sparse_segment_grad(ctx: KernelContext) -> Compute:
    xp, mode = ctx.xp, ctx.attr("mode")

    def compute(grad: Any, indices: Any, ids: Any, rows: Any) -> Any:
        idx, seg = xp.asarray(indices).reshape(-1), xp.asarray(ids).reshape(-1)
        picked = xp.take(grad, seg, axis=0)
        if mode != "sum" and seg.size:
            n = xp.shape(grad)[0]
            scale = _segment_scale(xp, seg, n, mode, grad.dtype)
            picked /= xp.take(scale, seg).reshape((seg.size,) + (1,) * (picked.ndim - 1))
        out = xp.zeros((int(rows), *xp.shape(grad)[1:]), dtype=grad.dtype)
        ufunc_at(xp, xp.add, out, idx, picked)
        return out

    return compute
