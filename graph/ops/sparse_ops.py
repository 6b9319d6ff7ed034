"""``sparse.to_dense``: a SparseTensor's dense value (SparseToDense, TF's op and input order)."""

from __future__ import annotations

from typing import Any

from .. import dtypes
from ..core import Operation
from ..gradients import not_differentiable
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from ..sparse_tensor import SparseTensor

__all__ = ["sparse_tensor_to_dense", "to_dense"]


@register_op("SparseToDense")
def _sparse_to_dense_shape(op: Operation) -> list:
    shape_t = op.inputs[1]
    if shape_t.op.type == "Const":
        return [(op.inputs[2].dtype, tuple(int(d) for d in shape_t.op.attrs["value"]))]
    rank = shape_t._shape[0] if shape_t._shape else None
    return [(op.inputs[2].dtype, None if rank is None else (None,) * rank)]


not_differentiable("SparseToDense")


def to_dense(
    sp_input: SparseTensor, default_value: Any = None, validate_indices: bool = True, name: str | None = None
) -> Any:
    """The dense tensor of ``sp_input``: its values at its indices, ``default_value`` elsewhere."""
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"sparse.to_dense needs a SparseTensor, got {type(sp_input).__name__}")
    dt = sp_input.dtype
    if default_value is None:
        default_value = b"" if dt == dtypes.string else 0
    default = convert_to_tensor(default_value, dtype=dt, graph=sp_input.graph)
    inputs = [sp_input.indices, sp_input.dense_shape, sp_input.values, default]
    return make_op(
        "SparseToDense", inputs, {"validate_indices": bool(validate_indices)}, name or "SparseToDense"
    ).outputs[0]


sparse_tensor_to_dense = to_dense
