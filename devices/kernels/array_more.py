"""Kernels of Unique, UniqueWithCounts, ListDiff (tf.setdiff1d) and StableArgsort (tf.argsort,
tf.sort): values in order of first occurrence, as TF's; argsort stable in both directions."""

from __future__ import annotations

from typing import Any

from antcolony.errors import InvalidArgumentError

from .registry import Aliasing, Compute, KernelContext, register_kernel


def _first_occurrence(xp: Any, x: Any) -> tuple[Any, Any, Any]:
    """(distinct values in order of first occurrence, each element's index among them, counts)."""
    values, first, inverse, counts = xp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    order = xp.argsort(first, kind="stable")  # sorted-unique position -> first-occurrence rank
    rank = xp.empty_like(order)
    rank[order] = xp.arange(order.size)
    return values[order], rank[inverse.reshape(-1)], counts[order]


@register_kernel("Unique", aliasing=Aliasing.FRESH)
def _unique(ctx: KernelContext) -> Compute:
    xp, idx_dtype = ctx.xp, ctx.attr("out_idx")

    def compute(x: Any) -> tuple[Any, Any]:
        values, idx, _ = _first_occurrence(xp, xp.asarray(x))
        return values, idx.astype(idx_dtype)

    return compute


@register_kernel("UniqueWithCounts", aliasing=Aliasing.FRESH)
def _unique_with_counts(ctx: KernelContext) -> Compute:
    xp, idx_dtype = ctx.xp, ctx.attr("out_idx")

    def compute(x: Any) -> tuple[Any, Any, Any]:
        values, idx, counts = _first_occurrence(xp, xp.asarray(x))
        return values, idx.astype(idx_dtype), counts.astype(idx_dtype)

    return compute


@register_kernel("ListDiff", aliasing=Aliasing.FRESH)
def _list_diff(ctx: KernelContext) -> Compute:
    xp, idx_dtype = ctx.xp, ctx.attr("out_idx")

    def compute(x: Any, y: Any) -> tuple[Any, Any]:
        keep = ~xp.isin(x, y)
        positions = xp.nonzero(keep)[0]
        return x[positions], positions.astype(idx_dtype)

    return compute


@register_kernel("StableArgsort", aliasing=Aliasing.FRESH)
def _argsort(ctx: KernelContext) -> Compute:
    xp, descending = ctx.xp, ctx.attr("descending")

    def compute(x: Any) -> Any:
        a = xp.asarray(x)
        if not descending:
            return xp.argsort(a, axis=-1, kind="stable").astype("int32")
        # stable descending: sort the reversed row ascending, map back, reverse again
        n = a.shape[-1]
        rev = xp.argsort(xp.flip(a, axis=-1), axis=-1, kind="stable")
        return xp.flip(n - 1 - rev, axis=-1).astype("int32")

    return compute


@register_kernel("Range", aliasing=Aliasing.FRESH)
def _range(ctx: KernelContext) -> Compute:
    xp, op, dtype = ctx.xp, ctx.op, ctx.attr("Tidx")

    def compute(start: Any, limit: Any, delta: Any) -> Any:
        s, e, d = (xp.asarray(v).item() for v in (start, limit, delta))
        if d == 0:
            raise InvalidArgumentError(None, op, f"Requires delta != 0: {d}")
        if (d > 0 and s > e) or (d < 0 and s < e):
            raise InvalidArgumentError(
                None, op, f"Requires start <= limit when delta > 0 (start >= limit when delta < 0): {s}/{e}"
            )
        return xp.arange(s, e, d).astype(dtype)

    return compute


@register_kernel("LinSpace", aliasing=Aliasing.FRESH)
def _linspace(ctx: KernelContext) -> Compute:
    xp, op = ctx.xp, ctx.op

    def compute(start: Any, stop: Any, num: Any) -> Any:
        n = int(xp.asarray(num).item())
        if n <= 0:
            raise InvalidArgumentError(None, op, f"Requires num > 0: {n}")
        s = xp.asarray(start)
        return xp.linspace(s.item(), xp.asarray(stop).item(), n).astype(s.dtype)

    return compute
