"""Run-time checks as TF1 writes them: ``tf.Assert`` (an op that fails its step with
InvalidArgumentError "assertion failed: [...]" when its condition is false), the ``tf.assert_*``
family built on it, and ``tf.check_numerics`` / ``tf.verify_tensor_all_finite`` (an identity that
fails on NaN or Inf). A comparison whose operands are both constants is checked when the graph is
built, as TF1 does: a false one raises InvalidArgumentError there and adds no op.

The kernels are devices/kernels/assertions.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from antcolony.errors import GraphError, InvalidArgumentError

from .. import dtypes
from ..core import Operation, Tensor, get_default_graph
from ..gradients import not_differentiable, register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from .control import no_op
from .math import equal, greater, greater_equal, less, less_equal, not_equal
from .math_composite import reduce_all

__all__ = [
    "Assert",
    "assert_equal",
    "assert_greater",
    "assert_greater_equal",
    "assert_integer",
    "assert_less",
    "assert_less_equal",
    "assert_negative",
    "assert_non_negative",
    "assert_non_positive",
    "assert_none_equal",
    "assert_positive",
    "assert_rank",
    "assert_rank_at_least",
    "assert_scalar",
    "assert_type",
    "check_numerics",
    "verify_tensor_all_finite",
]


@register_op("Assert", stateful=True)
def _assert_shape(op: Operation) -> list:
    cond = op.inputs[0]
    if cond.dtype != dtypes.bool_:
        raise ValueError(f"Assert's condition {cond.name} must be bool, got {cond.dtype.name}")
    if cond._shape is not None and len(cond._shape) != 0:
        raise ValueError(f"Assert's condition {cond.name} must be a scalar, got shape {cond.shape}")
    return []


not_differentiable("Assert")


@register_op("CheckNumerics")
def _check_numerics_shape(op: Operation) -> list:
    x = op.inputs[0]
    if x.dtype.kind != "f":
        raise ValueError(f"check_numerics needs a floating-point tensor, but {x.name} is {x.dtype.name}")
    return [(x.dtype, x._shape)]


@register_gradient("CheckNumerics")
def _check_numerics_grad(op: Operation, grad: Tensor) -> list:
    # As TF: the gradient is checked too, naming the forward check's message.
    message = f"Not a number (NaN) or infinity (Inf) values detected in gradient. {op.attrs['message']}"
    return [make_op("CheckNumerics", [grad], {"message": message}, "CheckNumericsGrad").outputs[0]]


def Assert(
    condition: Any, data: Sequence[Any], summarize: int | None = None, name: str | None = None
) -> Operation:
    """An op that fails the step with InvalidArgumentError, showing ``data`` (at most
    ``summarize`` values of each tensor, default 3), when ``condition`` is false."""
    cond = convert_to_tensor(condition, dtype=dtypes.bool_)
    items = [convert_to_tensor(d) for d in data]
    attrs = {"summarize": 3 if summarize is None else int(summarize)}
    return make_op("Assert", [cond, *items], attrs, name or "Assert")


def _static(t: Tensor) -> np.ndarray | None:
    return np.asarray(t.op.attrs["value"]) if t.op.type == "Const" else None


def _binary(
    check: Any,
    numpy_check: Any,
    what: str,
    x: Any,
    y: Any,
    data: Sequence[Any] | None,
    summarize: int | None,
    message: str | None,
    name: str | None,
    default_name: str,
) -> Operation:
    with get_default_graph().name_scope(name or default_name):
        xt = convert_to_tensor(x)
        yt = convert_to_tensor(y, dtype=xt.dtype)
        if data is None:
            data = [
                f"Condition x {what} y did not hold element-wise:",
                f"x ({xt.name}) = ",
                xt,
                f"y ({yt.name}) = ",
                yt,
            ]
        if message is not None:
            data = [message, *data]
        sx, sy = _static(xt), _static(yt)
        if sx is not None and sy is not None and not bool(np.all(numpy_check(sx, sy))):
            # both known now: TF1 fails at graph construction
            shown = f"{message} " if message else ""
            raise InvalidArgumentError(
                None, None, f"{shown}Condition x {what} y did not hold: x = {sx}, y = {sy}"
            )
        return Assert(reduce_all(check(xt, yt)), data, summarize)


def assert_equal(
    x: Any, y: Any, data: Any = None, summarize: Any = None, message: Any = None, name: Any = None
) -> Operation:
    """Fails the step unless ``x == y`` element-wise."""
    return _binary(equal, np.equal, "==", x, y, data, summarize, message, name, "assert_equal")


def assert_none_equal(
    x: Any, y: Any, data: Any = None, summarize: Any = None, message: Any = None, name: Any = None
) -> Operation:
    """Fails the step unless ``x != y`` element-wise."""
    return _binary(not_equal, np.not_equal, "!=", x, y, data, summarize, message, name, "assert_none_equal")


def assert_less(
    x: Any, y: Any, data: Any = None, summarize: Any = None, message: Any = None, name: Any = None
) -> Operation:
    """Fails the step unless ``x < y`` element-wise."""
    return _binary(less, np.less, "<", x, y, data, summarize, message, name, "assert_less")


def assert_less_equal(
    x: Any, y: Any, data: Any = None, summarize: Any = None, message: Any = None, name: Any = None
) -> Operation:
    """Fails the step unless ``x <= y`` element-wise."""
    return _binary(less_equal, np.less_equal, "<=", x, y, data, summarize, message, name, "assert_less_equal")


def assert_greater(
    x: Any, y: Any, data: Any = None, summarize: Any = None, message: Any = None, name: Any = None
) -> Operation:
    """Fails the step unless ``x > y`` element-wise."""
    return _binary(greater, np.greater, ">", x, y, data, summarize, message, name, "assert_greater")


def assert_greater_equal(
    x: Any, y: Any, data: Any = None, summarize: Any = None, message: Any = None, name: Any = None
) -> Operation:
    """Fails the step unless ``x >= y`` element-wise."""
    return _binary(
        greater_equal, np.greater_equal, ">=", x, y, data, summarize, message, name, "assert_greater_equal"
    )


def _against_zero(
    check: Any,
    numpy_check: Any,
    what: str,
    x: Any,
    data: Any,
    summarize: Any,
    message: Any,
    name: Any,
    default: str,
) -> Operation:
    xt = convert_to_tensor(x)
    zero = np.zeros((), xt.dtype)
    if data is None:
        data = [f"Condition x {what} 0 did not hold element-wise:", f"x ({xt.name}) = ", xt]
    return _binary(check, numpy_check, what, xt, zero, data, summarize, message, name, default)


def assert_positive(
    x: Any, data: Any = None, summarize: Any = None, message: Any = None, name: Any = None
) -> Operation:
    """Fails the step unless every element of ``x`` is > 0."""
    return _against_zero(greater, np.greater, ">", x, data, summarize, message, name, "assert_positive")


def assert_negative(
    x: Any, data: Any = None, summarize: Any = None, message: Any = None, name: Any = None
) -> Operation:
    """Fails the step unless every element of ``x`` is < 0."""
    return _against_zero(less, np.less, "<", x, data, summarize, message, name, "assert_negative")


def assert_non_negative(
    x: Any, data: Any = None, summarize: Any = None, message: Any = None, name: Any = None
) -> Operation:
    """Fails the step unless every element of ``x`` is >= 0."""
    return _against_zero(
        greater_equal, np.greater_equal, ">=", x, data, summarize, message, name, "assert_non_negative"
    )


def assert_non_positive(
    x: Any, data: Any = None, summarize: Any = None, message: Any = None, name: Any = None
) -> Operation:
    """Fails the step unless every element of ``x`` is <= 0."""
    return _against_zero(
        less_equal, np.less_equal, "<=", x, data, summarize, message, name, "assert_non_positive"
    )


def _static_rank(x: Tensor, what: str) -> int:
    if x._shape is None:
        raise GraphError(f"{what}: the rank of {x.name} is not known when the graph is built")
    return len(x._shape)


def assert_rank(
    x: Any, rank: int, data: Any = None, summarize: Any = None, message: Any = None, name: Any = None
) -> Operation:
    """Raises ValueError now unless ``x`` has rank ``rank`` (checked on the static shape)."""
    xt = convert_to_tensor(x)
    got = _static_rank(xt, "assert_rank")
    if got != int(rank):
        raise ValueError(
            f"{message + ' ' if message else ''}Tensor {xt.name} must have rank {int(rank)}. Received rank {got}, shape {xt.shape}"
        )
    return no_op(name=name or "NoOp")


def assert_rank_at_least(
    x: Any, rank: int, data: Any = None, summarize: Any = None, message: Any = None, name: Any = None
) -> Operation:
    """Raises ValueError now unless ``x`` has rank ``rank`` or more (checked on the static shape)."""
    xt = convert_to_tensor(x)
    got = _static_rank(xt, "assert_rank_at_least")
    if got < int(rank):
        raise ValueError(
            f"{message + ' ' if message else ''}Tensor {xt.name} must have rank at least {int(rank)}. Received rank {got}, shape {xt.shape}"
        )
    return no_op(name=name or "NoOp")


def assert_scalar(tensor: Any, name: str | None = None, message: str | None = None) -> Tensor:
    """``tensor`` itself, once its static shape is known to be a scalar's (ValueError otherwise)."""
    t = convert_to_tensor(tensor)
    if _static_rank(t, "assert_scalar") != 0:
        raise ValueError(
            f"{message + ' ' if message else ''}Expected scalar shape for {t.name}, saw shape: {t.shape}."
        )
    return t


def assert_integer(x: Any, message: str | None = None, name: str | None = None) -> Operation:
    """Raises TypeError now unless ``x`` has an integer dtype."""
    t = convert_to_tensor(x)
    if t.dtype.kind not in "iu":
        raise TypeError(
            f"{message + ' ' if message else ''}Expected integer type for {t.name}, got {t.dtype.name}"
        )
    return no_op(name=name or "NoOp")


def assert_type(tensor: Any, tf_type: Any, message: str | None = None, name: str | None = None) -> Operation:
    """Raises TypeError now unless ``tensor`` has dtype ``tf_type``."""
    t = convert_to_tensor(tensor)
    want = dtypes.as_dtype(tf_type)
    if t.dtype != want:
        raise TypeError(
            f"{message + ' ' if message else ''}{t.name} must be of type {want.name}, got {t.dtype.name}"
        )
    return no_op(name=name or "NoOp")


def check_numerics(tensor: Any, message: str, name: str | None = None) -> Tensor:
    """``tensor`` unchanged; its step fails with InvalidArgumentError naming ``message`` when it
    holds a NaN or an Inf."""
    t = convert_to_tensor(tensor)
    return make_op("CheckNumerics", [t], {"message": str(message)}, name or "CheckNumerics").outputs[0]


def verify_tensor_all_finite(
    t: Any, msg: str, name: str | None = None, x: Any = None, message: Any = None
) -> Tensor:
    """TF1's name for ``check_numerics``."""
    value = t if x is None else x
    text = msg if message is None else message
    with get_default_graph().name_scope(name or "VerifyFinite"):
        return check_numerics(value, text)
