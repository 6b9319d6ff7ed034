"""2-D pooling ops with kernels, as TF's: ``MaxPool`` (gradient ``MaxPoolGrad``, which routes
each output's gradient to the first maximum of its window; its own gradient ``MaxPoolGradGrad``
reads the gradient at that maximum) and ``AvgPool`` (gradient
``AvgPoolGrad``; SAME padding is not counted in the mean). Attrs are TF's: ``ksize``,
``strides`` (4-vectors in ``data_format`` order), ``padding`` "SAME" / "VALID".
"""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from .array import zeros_like
from .conv import shape_of, static_sizes
from .conv_geometry import four, spatial_axes, window_of

__all__ = ["avg_pool", "avg_pool2d", "max_pool", "max_pool2d"]

POOL_ATTRS = ("ksize", "strides", "padding", "data_format")


def _check_attrs(op: Operation) -> None:
    fmt = op.attrs["data_format"]
    _, _, c = spatial_axes(fmt)
    if op.attrs["padding"] not in ("SAME", "VALID"):
        raise ValueError(f"padding {op.attrs['padding']!r} is not 'SAME' or 'VALID'")
    for what in ("ksize", "strides"):
        v = op.attrs[what]
        if len(v) != 4 or min(v) < 1 or v[0] != 1 or v[c] != 1:
            raise ValueError(f"{what} {v} must be 4 positive ints, 1 in the batch and depth dimensions")


def _pooled_shape(op: Operation, xs: Any) -> tuple[int | None, ...]:
    if xs is None:
        return (None,) * 4
    if len(xs) != 4:
        raise ValueError(f"input {op.inputs[0].name} must be 4-D, but has shape {S.format_shape(xs)}")
    ah, aw, _ = spatial_axes(op.attrs["data_format"])
    out = list(xs)
    k = op.attrs["ksize"]
    if xs[ah] is not None and xs[aw] is not None:
        win = window_of(op.attrs, xs[ah], xs[aw], k[ah], k[aw])
        if win.out_h <= 0 or win.out_w <= 0:
            raise ValueError(
                f"a {k[ah]}x{k[aw]} window does not fit in the {xs[ah]}x{xs[aw]} input "
                f"{op.inputs[0].name} with padding {op.attrs['padding']}"
            )
        out[ah], out[aw] = win.out_h, win.out_w
    return tuple(out)


def _need_float(t: Tensor) -> None:
    if t.dtype.kind != "f":
        raise ValueError(f"pooling needs floating-point inputs, but {t.name} is {t.dtype.name}")


@register_op("MaxPool")
@register_op("AvgPool")
def _pool_shape(op: Operation) -> list:
    x = op.inputs[0]
    _check_attrs(op)
    _need_float(x)
    return [(x.dtype, _pooled_shape(op, x._shape))]


@register_op("MaxPoolGrad")
def _max_pool_grad_shape(op: Operation) -> list:
    x, y, dy = op.inputs
    _check_attrs(op)
    want = _pooled_shape(op, x._shape)
    for t in (y, dy):
        if t.dtype != x.dtype:
            raise ValueError(f"{t.name} is {t.dtype.name} but orig_input {x.name} is {x.dtype.name}")
        if not S.compatible(want, t._shape):
            raise ValueError(
                f"{t.name} has shape {S.format_shape(t._shape)} but pooling orig_input {x.name} "
                f"{S.format_shape(x._shape)} gives {S.format_shape(want)}"
            )
    return [(x.dtype, x._shape if x._shape is not None else (None,) * 4)]


@register_op("MaxPoolGradGrad")
def _max_pool_grad_grad_shape(op: Operation) -> list:
    x, y, g = op.inputs
    _check_attrs(op)
    if not S.compatible(x._shape, g._shape):
        raise ValueError(
            f"grad {g.name} {S.format_shape(g._shape)} must have the shape of orig_input {x.name} "
            f"{S.format_shape(x._shape)}"
        )
    return [(y.dtype, _pooled_shape(op, x._shape))]


@register_op("AvgPoolGrad")
def _avg_pool_grad_shape(op: Operation) -> list:
    sizes, dy = op.inputs
    _check_attrs(op)
    _need_float(dy)
    xs = static_sizes(sizes)
    return [(dy.dtype, xs if xs is not None else (None,) * 4)]


def _pool(
    op_type: str, value: Any, ksize: Any, strides: Any, padding: Any, data_format: str, name: str | None
) -> Tensor:
    fmt = data_format or "NHWC"
    try:
        if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
            raise ValueError(f"padding {padding!r} is not 'SAME' or 'VALID'")
        attrs = {
            "ksize": four(ksize, fmt, "ksize"),
            "strides": four(strides, fmt, "strides"),
            "padding": padding.upper(),
            "data_format": fmt,
        }
    except ValueError as exc:
        raise GraphError(f"{op_type}: {exc}") from None
    return make_op(op_type, [convert_to_tensor(value)], attrs, name or op_type).outputs[0]


def max_pool(
    value: Any,
    ksize: Any,
    strides: Any,
    padding: Any,
    data_format: str = "NHWC",
    name: str | None = None,
    input: Any = None,
) -> Tensor:
    """The maximum of each window (SAME padding never wins)."""
    return _pool("MaxPool", value if input is None else input, ksize, strides, padding, data_format, name)


def max_pool2d(
    input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NHWC", name: str | None = None
) -> Tensor:
    return _pool("MaxPool", input, ksize, strides, padding, data_format, name)


def avg_pool(
    value: Any,
    ksize: Any,
    strides: Any,
    padding: Any,
    data_format: str = "NHWC",
    name: str | None = None,
    input: Any = None,
) -> Tensor:
    """The mean of each window over the input elements it covers (SAME padding is not counted)."""
    return _pool("AvgPool", value if input is None else input, ksize, strides, padding, data_format, name)


def avg_pool2d(
    input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NHWC", name: str | None = None
) -> Tensor:
    return _pool("AvgPool", input, ksize, strides, padding, data_format, name)


def _attrs(op: Operation) -> dict[str, Any]:
    return {k: op.attrs[k] for k in POOL_ATTRS}


@register_gradient("MaxPool")
def _max_pool_grad(op: Operation, grad: Tensor) -> list:
    args = [op.inputs[0], op.outputs[0], grad]
    return [make_op("MaxPoolGrad", args, _attrs(op), "MaxPoolGrad").outputs[0]]


@register_gradient("MaxPoolGrad")
def _max_pool_grad_grad(op: Operation, grad: Tensor) -> list:
    # MaxPoolGrad is linear in its gradient input, and routes it by the (fixed) argmax.
    x, y, _ = op.inputs
    gg = make_op("MaxPoolGradGrad", [x, y, grad], _attrs(op), "MaxPoolGradGrad").outputs[0]
    return [zeros_like(x), zeros_like(y), gg]


@register_gradient("MaxPoolGradGrad")
def _max_pool_grad_grad_grad(op: Operation, grad: Tensor) -> list:
    x, y, _ = op.inputs
    return [
        zeros_like(x),
        zeros_like(y),
        make_op("MaxPoolGrad", [x, y, grad], _attrs(op), "MaxPoolGrad").outputs[0],
    ]


@register_gradient("AvgPool")
def _avg_pool_grad(op: Operation, grad: Tensor) -> list:
    args = [shape_of(op.inputs[0]), grad]
    return [make_op("AvgPoolGrad", args, _attrs(op), "AvgPoolGrad").outputs[0]]


@register_gradient("AvgPoolGrad")
def _avg_pool_grad_grad(op: Operation, grad: Tensor) -> list:
    # AvgPoolGrad is linear in its gradient input; its adjoint is AvgPool itself.
    return [None, make_op("AvgPool", [grad], _attrs(op), "AvgPool").outputs[0]]
