"""What is known, when a graph is built, of the value of a small integer tensor: a shape, a
multiple, a padding, a slice bound. TF1's shape inference reads these through its graph (``shape =
tf.stack([tf.shape(x)[0], 20])`` makes ``reshape(y, shape)`` statically ``(?, 20)``), and programs
rely on it (a dense layer needs its input's last dimension).

``partial_value(t)`` is a nested list of ints with None where an element is computed at run time,
an int (or None) for a scalar, or None when nothing is known. Each op type that can pass knowledge
on has a rule in ``RULES`` (op, its inputs' partial values) -> partial value; a pure integer op
whose inputs are all known is evaluated (``EVALUATED``). The graph is walked iteratively, at
most ``MAX_NODES`` ops deep.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .core import Operation, Tensor

__all__ = ["MAX_ELEMENTS", "partial_shape", "partial_value", "static_ints"]

MAX_ELEMENTS = 64  # larger values are not shapes: not worth holding
MAX_NODES = 64

Rule = Callable[[Operation, list[Any]], Any]
RULES: dict[str, Rule] = {}
#: rules that need no input values (their inputs' static shapes are enough)
SHAPE_ONLY = {"Shape", "Size", "Rank"}
#: integer arithmetic, evaluated once every input is fully known
EVALUATED: dict[str, Callable[..., Any]] = {
    "Add": np.add,
    "AddV2": np.add,
    "Sub": np.subtract,
    "Mul": np.multiply,
    "FloorDiv": np.floor_divide,
    "FloorMod": np.mod,
    "Maximum": np.maximum,
    "Minimum": np.minimum,
    "Neg": np.negative,
}


def rule(*op_types: str) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for t in op_types:
            RULES[t] = fn
        return fn

    return register


def _known(value: Any) -> bool:
    if isinstance(value, list):
        return all(_known(v) for v in value)
    return value is not None


@rule("Const")
def _const(op: Operation, _: list[Any]) -> Any:
    value = np.asarray(op.attrs["value"])
    if value.dtype.kind not in "iu" or value.size > MAX_ELEMENTS:
        return None
    return value.tolist()


@rule("Shape")
def _shape(op: Operation, _: list[Any]) -> Any:
    shape = op.inputs[0]._shape
    return None if shape is None else list(shape)


@rule("Size")
def _size(op: Operation, _: list[Any]) -> Any:
    shape = op.inputs[0]._shape
    return (
        None
        if shape is None or None in shape
        else int(np.prod([int(d) for d in shape if d is not None], dtype=np.int64))
    )


@rule("Rank")
def _rank(op: Operation, _: list[Any]) -> Any:
    shape = op.inputs[0]._shape
    return None if shape is None else len(shape)


@rule("Identity", "Cast")
def _same(op: Operation, values: list[Any]) -> Any:
    if op.type == "Cast" and np.dtype(op.attrs["DstT"].name).kind not in "iu":
        return None
    return values[0]


@rule("Pack")
def _pack(op: Operation, values: list[Any]) -> Any:
    if op.attrs.get("axis", 0) != 0:
        return None
    return list(values)


@rule("ConcatV2")
def _concat(op: Operation, values: list[Any]) -> Any:
    if op.attrs["axis"] != 0 or not all(isinstance(v, list) for v in values):
        return None
    return [d for v in values for d in v]


@rule("StridedSlice")
def _strided_slice(op: Operation, values: list[Any]) -> Any:
    from .ops.slicing import to_numpy_key

    if not isinstance(values[0], list):
        return None
    picked = np.array(values[0], dtype=object)[to_numpy_key(op.attrs["spec"])]
    return picked.tolist() if isinstance(picked, np.ndarray) else picked


def _evaluate(op: Operation, values: list[Any]) -> Any:
    if not all(_known(v) for v in values):
        return None
    arrays = [np.asarray(v, dtype=np.dtype(t.dtype.name)) for v, t in zip(values, op.inputs, strict=True)]
    out = np.asarray(EVALUATED[op.type](*arrays))
    return out.tolist() if out.size <= MAX_ELEMENTS else None


def _rule_for(op: Operation) -> Rule | None:
    if op.type in RULES:
        return RULES[op.type]
    if op.type in EVALUATED and all(t.dtype.kind in "iu" for t in op.inputs):
        return _evaluate
    return None


def partial_value(t: Tensor) -> Any:
    """What is known of ``t``'s value now (see the module docstring)."""
    memo: dict[Tensor, Any] = {}
    stack: list[tuple[Tensor, bool]] = [(t, False)]
    visited = 0
    while stack:
        tensor, expanded = stack.pop()
        if tensor in memo:
            continue
        op = tensor.op
        fn = _rule_for(op)
        if fn is None or len(op.outputs) != 1:
            memo[tensor] = None
            continue
        inputs = [] if op.type in SHAPE_ONLY else list(op.inputs)
        if not expanded:
            visited += 1
            if visited > MAX_NODES:
                return None
            stack.append((tensor, True))
            stack.extend((i, False) for i in inputs if i not in memo)
            continue
        memo[tensor] = fn(op, [memo[i] for i in inputs])
    return memo[t]


def partial_shape(t: Tensor) -> tuple[int | None, ...] | None:
    """The shape an integer vector ``t`` describes, as far as known now: None entries (and -1,
    for the ops that allow it, kept as -1) where computed at run time; None for an unknown length."""
    value = partial_value(t)
    if isinstance(value, list) and all(v is None or isinstance(v, int) for v in value):
        return tuple(value)
    if t._shape is not None and len(t._shape) == 1 and t._shape[0] is not None:
        return (None,) * t._shape[0]
    return None


def static_ints(value: Any, what: str) -> Any:
    """``value`` as Python ints: a tensor (``tf.constant([0, 2, 1])``, ``tf.rank(x) - 1``) must be
    known now; an axis or permutation computed at run time is not supported."""
    if not (isinstance(value, Tensor) or hasattr(value, "_as_tensor")):
        return value
    t = value._as_tensor() if hasattr(value, "_as_tensor") else value
    known = partial_value(t)
    if known is None or not _known(known):
        raise GraphError(
            f"{what} {t.name} must be known when the graph is built (a constant, or computed from "
            "static shapes); one computed at run time is not supported"
        )
    return known
