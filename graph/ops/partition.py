"""``dynamic_partition`` and ``dynamic_stitch``, as TF1 (each other's gradients): data split into
lists by a partition number per row, and lists merged back by an index per row."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import not_differentiable, register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op

__all__ = ["dynamic_partition", "dynamic_stitch"]


@register_op("DynamicPartition")
def _dynamic_partition_shape(op: Operation) -> list:
    data, partitions = op.inputs
    if partitions.dtype.kind not in "iu":
        raise ValueError(f"partitions {partitions.name} must be integers, got {partitions.dtype.name}")
    ds, ps = data._shape, partitions._shape
    if ds is not None and ps is not None and not S.compatible(ds[: len(ps)], ps):
        raise ValueError(
            f"partitions {partitions.name} of shape {S.format_shape(ps)} must be a prefix of data "
            f"{data.name}'s shape {S.format_shape(ds)}"
        )
    out = None if ds is None or ps is None else (None, *ds[len(ps) :])
    return [(data.dtype, out)] * op.attrs["num_partitions"]


def dynamic_partition(
    data: Any, partitions: Any, num_partitions: int, name: str | None = None
) -> list[Tensor]:
    """[data[partitions == p] for p in range(num_partitions)], rows in their order."""
    d = convert_to_tensor(data)
    p = convert_to_tensor(partitions, graph=d.graph)
    attrs = {"num_partitions": int(num_partitions)}
    return list(make_op("DynamicPartition", [d, p], attrs, name or "DynamicPartition").outputs)


@register_gradient("DynamicPartition")
def _dynamic_partition_grad(op: Operation, *grads: Tensor) -> list:
    # The rows went to the partitions in order: stitch the gradients back by their original positions.
    from .array import reshape, shape
    from .array_composite import range as range_

    data, partitions = op.inputs
    if S.is_fully_defined(partitions._shape):
        positions = range_(S.num_elements(partitions._shape) or 0)
        positions = reshape(positions, list(partitions._shape))
    else:
        positions = make_op("RangeLike", [partitions], None, "positions").outputs[0]
    parts = dynamic_partition(positions, partitions, op.attrs["num_partitions"])
    stitched = dynamic_stitch(parts, list(grads))
    return [reshape(stitched, shape(data)), None]


@register_op("RangeLike")
def _range_like_shape(op: Operation) -> list:
    from .. import dtypes

    return [(dtypes.int32, op.inputs[0]._shape)]


@register_op("DynamicStitch")
def _dynamic_stitch_shape(op: Operation) -> list:
    n = op.attrs["N"]
    indices, data = op.inputs[:n], op.inputs[n:]
    for t in indices:
        if t.dtype.kind not in "iu":
            raise ValueError(f"indices {t.name} must be integers, got {t.dtype.name}")
    for t in data[1:]:
        if t.dtype != data[0].dtype:
            raise ValueError(f"data {t.name} is {t.dtype.name} but {data[0].name} is {data[0].dtype.name}")
    i0, d0 = indices[0]._shape, data[0]._shape
    out = None if i0 is None or d0 is None else (None, *d0[len(i0) :])
    return [(data[0].dtype, out)]


def dynamic_stitch(indices: Sequence[Any], data: Sequence[Any], name: str | None = None) -> Tensor:
    """merged[indices[m][i]] = data[m][i]; a later (m, i) wins where indices repeat."""
    if len(indices) != len(data) or not indices:
        raise ValueError(f"dynamic_stitch needs as many data as indices, got {len(indices)} and {len(data)}")
    ds = [convert_to_tensor(d) for d in data]
    ix = [convert_to_tensor(i, graph=ds[0].graph) for i in indices]
    return make_op("DynamicStitch", [*ix, *ds], {"N": len(ix)}, name or "DynamicStitch").outputs[0]


@register_gradient("DynamicStitch")
def _dynamic_stitch_grad(op: Operation, grad: Tensor) -> list:
    # As TF: each data row gets the gradient at its index (repeats not excluded).
    from .array import gather

    n = op.attrs["N"]
    return [None] * n + [gather(grad, i) for i in op.inputs[:n]]


not_differentiable("RangeLike")
