"""Const, Placeholder, PlaceholderWithDefault."""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Operation, Tensor, get_default_graph
from ..gradients import not_differentiable, register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from ..shapes import as_shape, compatible, format_shape, is_fully_defined


@register_op("Const")
def _const_shape(op: Operation) -> list:
    v = op.attrs["value"]
    return [(v.dtype, v.shape)]


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str = "Const") -> Tensor:
    """A constant tensor; Python floats default to float32 and ints to int32 (as TF)."""
    dt = dtypes.as_dtype(dtype) if dtype is not None else dtypes.infer_dtype(value)
    arr = np.asarray(value)
    if arr.dtype.kind == "f" and dt.kind in "iu" and not np.all(np.mod(arr, 1) == 0):
        raise GraphError(f"constant {name}: value {value!r} is not representable as {dt.name}")
    arr = dtypes.as_string_array(arr) if dt == dtypes.string else arr.astype(dt)
    if shape is not None:
        target = as_shape(shape)
        if not is_fully_defined(target):
            raise GraphError(f"constant {name}: shape {shape!r} must be fully defined")
        if arr.size == 1:
            arr = np.full(target, arr.reshape(()), dtype=dt)
        elif arr.size == int(np.prod(target)):
            arr = arr.reshape(target)
        else:
            raise GraphError(f"constant {name}: {arr.size} values cannot fill shape {format_shape(target)}")
    arr.setflags(write=False)
    return make_op("Const", [], {"value": arr, "dtype": dt}, name).outputs[0]


@register_op("Placeholder")
def _placeholder_shape(op: Operation) -> list:
    return [(op.attrs["dtype"], op.attrs["shape"])]


def placeholder(dtype: Any, shape: Any = None, name: str = "Placeholder") -> Tensor:
    """A tensor that must be fed; ``shape`` may contain None for any size."""
    attrs = {"dtype": dtypes.as_dtype(dtype), "shape": as_shape(shape)}
    return get_default_graph().create_op("Placeholder", [], attrs, name).outputs[0]


@register_op("PlaceholderWithDefault")
def _pwd_shape(op: Operation) -> list:
    x = op.inputs[0]
    shape = op.attrs["shape"]
    if not compatible(x._shape, shape):
        raise ValueError(f"default value shape {format_shape(x._shape)} does not match {format_shape(shape)}")
    return [(x.dtype, shape if shape is not None else x._shape)]


def placeholder_with_default(input: Any, shape: Any, name: str = "PlaceholderWithDefault") -> Tensor:
    """Passes ``input`` through unless fed."""
    x = convert_to_tensor(input)
    return make_op("PlaceholderWithDefault", [x], {"shape": as_shape(shape)}, name).outputs[0]


not_differentiable("Const", "Placeholder")


@register_gradient("PlaceholderWithDefault")
def _pwd_grad(op: Operation, grad: Tensor) -> list:
    return [grad]
