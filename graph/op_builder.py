"""Helpers op builder functions share: tensor conversion and op creation on the default graph."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from antcolony.errors import GraphError

from . import dtypes
from .core import Graph, Operation, Tensor, get_default_graph


def graph_of(values: Sequence[Any]) -> Graph:
    """The graph the given values live in (the default graph when none is a Tensor)."""
    found: Graph | None = None
    for v in values:
        if hasattr(v, "_as_graph_element"):
            v = v._as_graph_element()
        g = getattr(v, "graph", None)
        if isinstance(g, Graph):
            if found is not None and g is not found:
                raise GraphError(f"{v.name} belongs to a different graph than the other inputs")
            found = g
    return found or get_default_graph()


def convert_to_tensor(
    value: Any, dtype: Any = None, name: str | None = None, graph: Graph | None = None
) -> Tensor:
    """A Tensor for ``value``: Tensors pass through, Variables give their value, data becomes a constant."""
    if hasattr(value, "_as_tensor"):
        value = value._as_tensor()
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype != dtypes.as_dtype(dtype):
            raise GraphError(
                f"tensor {value.name} has dtype {value.dtype.name}, expected {dtypes.as_dtype(dtype).name}; "
                "use ac.cast to convert"
            )
        return value
    if isinstance(value, (list, tuple)) and any(_is_symbolic(v) for v in value):
        from .ops.array import stack

        return stack([convert_to_tensor(v, dtype) for v in value], name=name or "packed")
    from .ops.constant import constant

    g = graph or get_default_graph()
    with g.as_default():
        return constant(value, dtype=dtype, name=name or "Const")


def _is_symbolic(v: Any) -> bool:
    return isinstance(v, Tensor) or hasattr(v, "_as_tensor")


def holds_tensors(value: Any) -> bool:
    """``value`` is a tensor (or a Variable), or a list / tuple holding one at any depth: a shape,
    size or padding computed (in part) at run time, as TF1 takes ``[batch_size, 200]``."""
    if _is_symbolic(value):
        return True
    return isinstance(value, (list, tuple)) and any(holds_tensors(v) for v in value)


def convert_pair(x: Any, y: Any, name: str) -> tuple[Tensor, Tensor]:
    """Convert two operands of a binary op; a non-tensor operand takes the tensor operand's dtype."""
    g = graph_of([x, y])
    xt = x if _is_symbolic(x) else None
    yt = y if _is_symbolic(y) else None
    if xt is not None:
        x = convert_to_tensor(x, graph=g)
    if yt is not None:
        y = convert_to_tensor(y, graph=g)
    if xt is None and yt is None:
        x = convert_to_tensor(x, graph=g)
    if not isinstance(x, Tensor):
        x = convert_to_tensor(_cast_value(x, y.dtype, name), y.dtype, graph=g)
    if not isinstance(y, Tensor):
        y = convert_to_tensor(_cast_value(y, x.dtype, name), x.dtype, graph=g)
    if x.dtype != y.dtype:
        raise GraphError(
            f"{name}: operands {x.name} ({x.dtype.name}) and {y.name} ({y.dtype.name}) have different "
            "dtypes; cast one with ac.cast"
        )
    return x, y


def _cast_value(value: Any, dtype: np.dtype, name: str) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind == "f" and dtype.kind in "iub" and not np.all(np.equal(np.mod(arr, 1), 0)):
        raise GraphError(f"{name}: cannot use {value!r} with a {dtype.name} tensor without losing precision")
    return arr.astype(dtype)


def make_op(
    op_type: str,
    inputs: Sequence[Tensor],
    attrs: dict[str, Any] | None = None,
    name: str | None = None,
    control_inputs: Sequence[Operation] = (),
) -> Operation:
    g = graph_of(inputs) if inputs else get_default_graph()
    return g.create_op(op_type, inputs, attrs, name, control_inputs)


def unary(op_type: str, x: Any, name: str | None, **attrs: Any) -> Tensor:
    xt = convert_to_tensor(x)
    return make_op(op_type, [xt], attrs, name or op_type).outputs[0]


def binary(op_type: str, x: Any, y: Any, name: str | None, **attrs: Any) -> Tensor:
    xt, yt = convert_pair(x, y, name or op_type)
    return make_op(op_type, [xt, yt], attrs, name or op_type).outputs[0]
