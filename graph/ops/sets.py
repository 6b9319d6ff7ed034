"""``tf.sets`` for dense inputs: the sets are the last dimension's values of each row
(DenseToDenseSetOperation: intersection, union, a-b, b-a); the result is a SparseTensor whose row
holds its set's elements in ascending order, as wide as the largest set. ``size`` counts a
SparseTensor's distinct values per row (SetSize). SparseTensor operands of the
binary operations are not supported (a clear error). Kernels: devices/kernels/sets.py."""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Operation, Tensor
from ..gradients import not_differentiable
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from ..sparse_tensor import SparseTensor

__all__ = ["difference", "intersection", "size", "union"]

_OPERATIONS = ("intersection", "union", "a-b", "b-a")


@register_op("DenseToDenseSetOperation")
def _set_operation_shape(op: Operation) -> list:
    rank = None if op.inputs[0]._shape is None else len(op.inputs[0]._shape)
    return [(dtypes.int64, (None, rank)), (op.inputs[0].dtype, (None,)), (dtypes.int64, (rank,))]


@register_op("SparseSetSize")
def _set_size_shape(op: Operation) -> list:
    shape = op.inputs[2]._shape
    rank = None if shape is None or shape[0] is None else shape[0]
    return [(dtypes.int32, None if rank is None else (None,) * (rank - 1))]


not_differentiable("DenseToDenseSetOperation", "SparseSetSize")


def _dense(value: Any, what: str) -> Tensor:
    if isinstance(value, SparseTensor):
        raise GraphError(f"tf.sets.{what}: SparseTensor operands are not supported; pass dense tensors")
    t = convert_to_tensor(value)
    if t.dtype.kind not in "iuSUO":
        raise GraphError(f"tf.sets.{what}: {t.name} must hold integers or strings, got {t.dtype.name}")
    if t._shape is not None and len(t._shape) < 2:
        raise GraphError(f"tf.sets.{what}: {t.name} must be of rank >= 2 (sets along the last dimension)")
    return t


def _set_operation(a: Any, b: Any, operation: str, what: str) -> SparseTensor:
    x, y = _dense(a, what), _dense(b, what)
    if x.dtype != y.dtype:
        raise GraphError(
            f"tf.sets.{what}: {x.name} and {y.name} differ in dtype ({x.dtype.name}, {y.dtype.name})"
        )
    op = make_op("DenseToDenseSetOperation", [x, y], {"set_operation": operation}, "DenseToDenseSetOperation")
    return SparseTensor(*op.outputs)


def intersection(a: Any, b: Any, validate_indices: bool = True) -> SparseTensor:
    """Per row, the values in both ``a`` and ``b``."""
    return _set_operation(a, b, "intersection", "intersection")


def union(a: Any, b: Any, validate_indices: bool = True) -> SparseTensor:
    """Per row, the values in ``a`` or ``b``."""
    return _set_operation(a, b, "union", "union")


def difference(a: Any, b: Any, aminusb: bool = True, validate_indices: bool = True) -> SparseTensor:
    """Per row, the values in ``a`` not in ``b`` (``aminusb=False``: in ``b`` not in ``a``)."""
    return _set_operation(a, b, "a-b" if aminusb else "b-a", "difference")


def size(a: Any, validate_indices: bool = True) -> Tensor:
    """The number of distinct values in each row of the SparseTensor ``a`` (int32; TF1 takes only
    a SparseTensor here)."""
    if not isinstance(a, SparseTensor):
        raise TypeError(f"tf.sets.size: expected a SparseTensor, got {type(a).__name__}")
    op = make_op("SparseSetSize", [a.indices, a.values, a.dense_shape], None, "SetSize")
    return op.outputs[0]
