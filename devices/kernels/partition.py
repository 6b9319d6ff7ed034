"""Kernels of DynamicPartition, DynamicStitch and RangeLike (graph/ops/partition.py)."""

from __future__ import annotations

from typing import Any

from .registry import Compute, KernelContext, register_kernel
from .segment import check_ids


@register_kernel("DynamicPartition", expensive=True)
def _dynamic_partition(ctx: KernelContext) -> Compute:
    xp, name, n = ctx.xp, ctx.op.name, ctx.attr("num_partitions")

    def compute(data: Any, partitions: Any) -> tuple[Any, ...]:
        p = xp.asarray(partitions)
        check_ids(p, n, "partitions", name)
        rows = xp.reshape(data, (p.size, *xp.shape(data)[p.ndim :]))
        flat = p.reshape(-1)
        return tuple(rows[flat == i] for i in range(n))

    return compute


@register_kernel("DynamicStitch", expensive=True)
def _dynamic_stitch(ctx: KernelContext) -> Compute:
    xp, name, n = ctx.xp, ctx.op.name, ctx.attr("N")

    def compute(*args: Any) -> Any:
        indices, data = args[:n], args[n:]
        flat = [xp.asarray(i).reshape(-1) for i in indices]
        size = max((int(f.max()) + 1 for f in flat if f.size), default=0)
        tail = xp.shape(data[0])[xp.ndim(indices[0]) :]
        out = xp.zeros((size, *tail), dtype=data[0].dtype)
        for f, i, d in zip(flat, indices, data):
            if xp.shape(d)[: xp.ndim(i)] != xp.shape(i):
                raise ValueError(
                    f"{name}: data of shape {xp.shape(d)} does not start with its indices' {xp.shape(i)}"
                )
            check_ids(f, size, "indices", name)
            out[f] = xp.reshape(d, (f.size, *tail))
        return out

    return compute


@register_kernel("RangeLike")
def _range_like(ctx: KernelContext) -> Compute:
    xp = ctx.xp
    return lambda x: xp.arange(xp.size(x), dtype=xp.int32).reshape(xp.shape(x))
