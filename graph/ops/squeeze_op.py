"""``Squeeze`` as an op, for what a reshape cannot say at build time: ``tf.squeeze`` of a tensor
with unknown dimensions (every size-1 dimension goes, found when it runs) or keeping more than one
unknown dimension. ``squeeze_dims`` empty: all size-1 dimensions; else those (each must be 1).
Output shape as TF1 infers it: unknown rank when no axes are given and a dimension is unknown."""

from __future__ import annotations

from ..core import Operation, Tensor
from ..gradients import register_gradient
from ..op_builder import make_op
from ..registry import register_op

__all__: list[str] = []


@register_op("Squeeze")
def _squeeze_shape(op: Operation) -> list:
    x = op.inputs[0]
    dims = x._shape
    axes = op.attrs["squeeze_dims"]
    if dims is None:
        return [(x.dtype, None)]
    if not axes:
        if any(d is None for d in dims):
            return [(x.dtype, None)]
        return [(x.dtype, tuple(d for d in dims if d != 1))]
    drop = {a % len(dims) for a in axes}
    for a in drop:
        if dims[a] not in (1, None):
            raise ValueError(f"{op.name}: cannot squeeze dimension {a} of {x.name}, of size {dims[a]}")
    return [(x.dtype, tuple(d for i, d in enumerate(dims) if i not in drop))]


@register_gradient("Squeeze")
def _squeeze_grad(op: Operation, grad: Tensor) -> list:
    return [make_op("ReshapeLike", [grad, op.inputs[0]], None, "ReshapeLike").outputs[0]]
