"""``Range`` and ``LinSpace`` as ops, for ``tf.range`` / ``tf.lin_space`` of tensors (values
known only at run time, as ``tf.range(tf.shape(x)[0])``); with Python numbers those functions
give a constant instead (graph/ops/array_composite.py). Kernels: devices/kernels/array_more.py."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes
from ..core import Operation, Tensor
from ..gradients import not_differentiable
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from .math import cast

__all__ = ["linspace_op", "range_op"]


def _scalar(t: Tensor, what: str, op: Operation) -> None:
    if t._shape is not None and len(t._shape) != 0:
        raise ValueError(f"{op.type}: {what} {t.name} must be a scalar, got shape {t.shape}")


def _static(t: Tensor) -> Any:
    return t.op.attrs["value"].item() if t.op.type == "Const" else None


@register_op("Range")
def _range_shape(op: Operation) -> list:
    start, limit, delta = op.inputs
    for what, t in (("start", start), ("limit", limit), ("delta", delta)):
        _scalar(t, what, op)
    values = [_static(t) for t in op.inputs]
    n = None
    if all(v is not None for v in values) and values[2] != 0:
        n = len(np.arange(*values))
    return [(start.dtype, (n,))]


@register_op("LinSpace")
def _linspace_shape(op: Operation) -> list:
    start, stop, num = op.inputs
    for what, t in (("start", start), ("stop", stop), ("num", num)):
        _scalar(t, what, op)
    if start.dtype.kind != "f":
        raise ValueError(f"lin_space needs floating-point start and stop, got {start.dtype.name}")
    n = _static(num)
    return [(start.dtype, (int(n) if n is not None else None,))]


not_differentiable("Range")
not_differentiable("LinSpace")


# TF's range takes the most general of its arguments' dtypes, in this order
_RANGE_DTYPES = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


def _range_dtype(values: list[Any], dtype: Any) -> np.dtype:
    if dtype is not None:
        return dtypes.as_dtype(dtype)
    found = [v.dtype if isinstance(v, Tensor) else dtypes.infer_dtype(v) for v in values]
    return max(found, key=lambda d: _RANGE_DTYPES.index(d) if d in _RANGE_DTYPES else 0)


def range_op(start: Any, limit: Any, delta: Any, dtype: Any, name: str) -> Tensor:
    """A ``Range`` op: ``[start, start + delta, ...)`` below ``limit``, computed at run time."""
    dt = _range_dtype([start, limit, delta], dtype)
    args = [convert_to_tensor(v, dtype=dt) if not isinstance(v, Tensor) else v for v in (start, limit, delta)]
    args = [a if a.dtype == dt else cast(a, dt) for a in args]
    return make_op("Range", args, {"Tidx": dt}, name or "range").outputs[0]


def linspace_op(start: Any, stop: Any, num: Any, name: str) -> Tensor:
    """A ``LinSpace`` op: ``num`` evenly spaced values from ``start`` to ``stop`` inclusive."""
    s = convert_to_tensor(start)
    if s.dtype.kind != "f":
        s = convert_to_tensor(start, dtype=dtypes.float32)
    e = convert_to_tensor(stop, dtype=s.dtype)
    n = convert_to_tensor(num, dtype=dtypes.int32)
    return make_op("LinSpace", [s, e, n], None, name or "LinSpace").outputs[0]
