"""3-D convolution and pooling ops with kernels, as TF's: ``Conv3D`` (gradient the two
``Conv3DBackprop*V2`` ops), ``MaxPool3D`` (gradient ``MaxPool3DGrad``: the first maximum of each
window in (depth, row, column) order takes the window's gradient, as TF's default oneDNN CPU
kernel; its Eigen kernel, which TF runs when it folds constants, gives every tied maximum the
gradient; its own gradient ``MaxPool3DGradGrad`` reads the gradient at those maxima) and ``AvgPool3D`` (gradient
``AvgPool3DGrad``; SAME padding is not counted in the mean).

Attrs are TF's: ``strides``, ``dilations``, ``ksize`` as 5-vectors in ``data_format`` order
("NDHWC" or "NCDHW"), ``padding`` "SAME" / "VALID". The builders (``ac.nn.conv3d``,
``conv3d_transpose``, ``max_pool3d``, ...) are at the end.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from .array import zeros_like
from .conv import shape_of, sizes_tensor, static_sizes
from .conv_geometry import axis_geometry

__all__ = [
    "avg_pool3d",
    "conv3d",
    "conv3d_backprop_filter",
    "conv3d_backprop_filter_v2",
    "conv3d_transpose",
    "max_pool3d",
    "spatial_axes_3d",
    "window_3d",
]

CONV_ATTRS = ("strides", "padding", "data_format", "dilations")
POOL_ATTRS = ("ksize", "strides", "padding", "data_format")


def spatial_axes_3d(data_format: str) -> tuple[tuple[int, int, int], int]:
    """((depth, height, width) axes, channel axis) of a 5-D tensor in ``data_format``."""
    if data_format == "NDHWC":
        return (1, 2, 3), 4
    if data_format == "NCDHW":
        return (2, 3, 4), 1
    raise ValueError(f"data_format {data_format!r} is not 'NDHWC' or 'NCDHW'")


def window_3d(
    attrs: dict[str, Any], sizes: tuple[int, int, int], window: tuple[int, int, int]
) -> tuple[tuple[int, int, int, int, int, int], ...]:
    """Per spatial axis (depth, height, width): (window, stride, dilation, output size, pad
    before, pad after) of an op with TF's attrs over an input of spatial ``sizes``."""
    axes, _ = spatial_axes_3d(attrs.get("data_format", "NDHWC"))
    strides = attrs["strides"]
    dil = attrs.get("dilations") or [1] * 5
    out = []
    for a, size, k in zip(axes, sizes, window, strict=True):
        o, before, after = axis_geometry(size, k, strides[a], dil[a], attrs["padding"])
        out.append((k, strides[a], dil[a], o, before, after))
    return tuple(out)


def _five(value: Any, fmt: str, what: str) -> list[int]:
    """TF's 5-vector attr from an int, a (d, h, w) triple or a 5-vector with 1 at batch and channel."""
    axes, c = spatial_axes_3d(fmt)
    v = [int(value)] * 3 if isinstance(value, (int, np.integer)) else [int(x) for x in value]
    if len(v) == 1:
        v = v * 3
    if len(v) == 3:
        out = [1] * 5
        for a, x in zip(axes, v, strict=True):
            out[a] = x
        return out
    if len(v) == 5:
        if v[0] != 1 or v[c] != 1:
            raise ValueError(f"{what} {v}: the batch and channel entries must be 1 (data_format {fmt})")
        return v
    raise ValueError(f"{what} {v} must be an int, a triple or a 5-vector")


def _check(op: Operation, vectors: tuple[str, ...]) -> str:
    fmt = str(op.attrs["data_format"])
    _, c = spatial_axes_3d(fmt)
    if op.attrs["padding"] not in ("SAME", "VALID"):
        raise ValueError(f"padding {op.attrs['padding']!r} is not 'SAME' or 'VALID'")
    for what in vectors:
        v = op.attrs.get(what) or [1] * 5
        if len(v) != 5 or min(v) < 1 or v[0] != 1 or v[c] != 1:
            raise ValueError(f"{what} {v} must be 5 positive ints, 1 in the batch and channel dimensions")
    return fmt


def _rank5(shape: Any, what: str, t: Tensor) -> tuple[int | None, ...] | None:
    if shape is None:
        return None
    if len(shape) != 5:
        raise ValueError(f"{what} {t.name} must be 5-D, but has shape {S.format_shape(shape)}")
    return tuple(shape)


def _float(op: Operation, *ts: Tensor) -> None:
    for t in ts:
        if t.dtype.kind != "f":
            raise ValueError(f"{op.type} needs floating-point inputs, but {t.name} is {t.dtype.name}")
    if len({t.dtype for t in ts}) > 1:
        raise ValueError(f"{op.type}: inputs {', '.join(t.name for t in ts)} differ in dtype")


def _windowed(op: Operation, xs: Any, window: Any, out_c: int | None) -> tuple[int | None, ...]:
    """The output shape of a window op over an input of shape ``xs`` (None entries unknown)."""
    axes, c = spatial_axes_3d(op.attrs["data_format"])
    out: list[int | None] = [None] * 5
    out[c] = out_c
    if xs is None:
        return tuple(out)
    out[0] = xs[0]
    sizes = tuple(xs[a] for a in axes)
    if window is None or None in sizes or None in window:
        return tuple(out)
    geo = window_3d(op.attrs, sizes, window)
    if any(g[3] <= 0 for g in geo):
        raise ValueError(
            f"a {'x'.join(map(str, window))} window does not fit in the {'x'.join(map(str, sizes))} input "
            f"{op.inputs[0].name} with padding {op.attrs['padding']}"
        )
    for a, g in zip(axes, geo, strict=True):
        out[a] = g[3]
    return tuple(out)


def _depth(op: Operation, x: Tensor, xs: Any, f: Tensor, fs: Any) -> None:
    _, c = spatial_axes_3d(op.attrs["data_format"])
    if xs is not None and fs is not None and xs[c] is not None and fs[3] is not None and xs[c] != fs[3]:
        raise ValueError(
            f"input {x.name} of shape {S.format_shape(xs)} has {xs[c]} channels but filter {f.name} of shape "
            f"{S.format_shape(fs)} expects {fs[3]} (input depth must equal the filter's fourth dimension)"
        )


@register_op("Conv3D")
def _conv3d_shape(op: Operation) -> list:
    x, f = op.inputs
    _check(op, ("strides", "dilations"))
    _float(op, x, f)
    xs, fs = _rank5(x._shape, "input", x), _rank5(f._shape, "filter", f)
    _depth(op, x, xs, f, fs)
    return [(x.dtype, _windowed(op, xs, None if fs is None else fs[:3], None if fs is None else fs[4]))]


@register_op("Conv3DBackpropInputV2")
def _conv3d_input_shape(op: Operation) -> list:
    sizes, f, dy = op.inputs
    _check(op, ("strides", "dilations"))
    _float(op, f, dy)
    xs = _rank5(static_sizes(sizes), "input_sizes", sizes)
    fs = _rank5(f._shape, "filter", f)
    if xs is not None and fs is not None:
        _depth(op, sizes, xs, f, fs)
        want = _windowed(op, xs, fs[:3], fs[4])
        ds = _rank5(dy._shape, "out_backprop", dy)
        if ds is not None and not S.compatible(want, ds):
            raise ValueError(
                f"out_backprop {dy.name} has shape {S.format_shape(ds)} but a convolution of input size "
                f"{S.format_shape(xs)} by filter {f.name} {S.format_shape(fs)} gives {S.format_shape(want)}"
            )
    return [(f.dtype, xs if xs is not None else (None,) * 5)]


@register_op("Conv3DBackpropFilterV2")
def _conv3d_filter_shape(op: Operation) -> list:
    x, sizes, dy = op.inputs
    _check(op, ("strides", "dilations"))
    _float(op, x, dy)
    fs = _rank5(static_sizes(sizes), "filter_sizes", sizes)
    _depth(op, x, _rank5(x._shape, "input", x), sizes, fs)
    return [(x.dtype, fs if fs is not None else (None,) * 5)]


def _ksize(op: Operation) -> tuple[int, int, int]:
    axes, _ = spatial_axes_3d(op.attrs["data_format"])
    k = op.attrs["ksize"]
    return k[axes[0]], k[axes[1]], k[axes[2]]


@register_op("MaxPool3D")
@register_op("AvgPool3D")
def _pool3d_shape(op: Operation) -> list:
    (x,) = op.inputs
    _check(op, ("ksize", "strides"))
    _float(op, x)
    xs = _rank5(x._shape, "input", x)
    _, c = spatial_axes_3d(op.attrs["data_format"])
    return [(x.dtype, _windowed(op, xs, _ksize(op), None if xs is None else xs[c]))]


@register_op("MaxPool3DGrad")
def _max_pool3d_grad_shape(op: Operation) -> list:
    x, y, dy = op.inputs
    _check(op, ("ksize", "strides"))
    _float(op, x, y, dy)
    return [(dy.dtype, x._shape)]


@register_op("MaxPool3DGradGrad")
def _max_pool3d_grad_grad_shape(op: Operation) -> list:
    x, y, g = op.inputs
    _check(op, ("ksize", "strides"))
    _float(op, x, y, g)
    return [(g.dtype, y._shape)]


@register_op("AvgPool3DGrad")
def _avg_pool3d_grad_shape(op: Operation) -> list:
    sizes, dy = op.inputs
    _check(op, ("ksize", "strides"))
    _float(op, dy)
    xs = static_sizes(sizes)
    return [(dy.dtype, xs if xs is not None else (None,) * 5)]


def _attrs(op: Operation, names: tuple[str, ...]) -> dict[str, Any]:
    return {k: op.attrs[k] for k in names if k in op.attrs}


def _op(op_type: str, inputs: list[Tensor], attrs: dict[str, Any], name: str | None = None) -> Tensor:
    return make_op(op_type, inputs, attrs, name or op_type).outputs[0]


@register_gradient("Conv3D")
def _conv3d_grad(op: Operation, grad: Tensor) -> list:
    x, f = op.inputs
    a = _attrs(op, CONV_ATTRS)
    return [
        _op("Conv3DBackpropInputV2", [shape_of(x), f, grad], a),
        _op("Conv3DBackpropFilterV2", [x, shape_of(f), grad], a),
    ]


@register_gradient("Conv3DBackpropInputV2")
def _conv3d_input_grad(op: Operation, grad: Tensor) -> list:
    _, f, dy = op.inputs
    a = _attrs(op, CONV_ATTRS)
    return [None, _op("Conv3DBackpropFilterV2", [grad, shape_of(f), dy], a), _op("Conv3D", [grad, f], a)]


@register_gradient("Conv3DBackpropFilterV2")
def _conv3d_filter_grad(op: Operation, grad: Tensor) -> list:
    x, _, dy = op.inputs
    a = _attrs(op, CONV_ATTRS)
    return [_op("Conv3DBackpropInputV2", [shape_of(x), grad, dy], a), None, _op("Conv3D", [x, grad], a)]


@register_gradient("MaxPool3D")
def _max_pool3d_grad(op: Operation, grad: Tensor) -> list:
    return [_op("MaxPool3DGrad", [op.inputs[0], op.outputs[0], grad], _attrs(op, POOL_ATTRS))]


@register_gradient("MaxPool3DGrad")
def _max_pool3d_grad_grad(op: Operation, grad: Tensor) -> list:
    # MaxPool3DGrad is linear in its gradient input, and routes it by the (fixed) first maxima.
    x, y, _ = op.inputs
    gg = _op("MaxPool3DGradGrad", [x, y, grad], _attrs(op, POOL_ATTRS))
    return [zeros_like(x), zeros_like(y), gg]


@register_gradient("MaxPool3DGradGrad")
def _max_pool3d_grad_grad_grad(op: Operation, grad: Tensor) -> list:
    x, y, _ = op.inputs
    return [zeros_like(x), zeros_like(y), _op("MaxPool3DGrad", [x, y, grad], _attrs(op, POOL_ATTRS))]


@register_gradient("AvgPool3D")
def _avg_pool3d_grad(op: Operation, grad: Tensor) -> list:
    return [_op("AvgPool3DGrad", [shape_of(op.inputs[0]), grad], _attrs(op, POOL_ATTRS))]


@register_gradient("AvgPool3DGrad")
def _avg_pool3d_grad_grad(op: Operation, grad: Tensor) -> list:
    # AvgPool3DGrad is linear in its gradient input; its adjoint is AvgPool3D itself.
    return [None, _op("AvgPool3D", [grad], _attrs(op, POOL_ATTRS))]


# -- builders, with TF1's signatures ------------------------------------------------------------


def _conv_attrs(
    strides: Any, padding: Any, data_format: str | None, dilations: Any, what: str
) -> dict[str, Any]:
    fmt = data_format or "NDHWC"
    try:
        if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
            raise ValueError(f"padding {padding!r} is not 'SAME' or 'VALID'")
        return {
            "strides": _five(1 if strides is None else strides, fmt, "strides"),
            "padding": padding.upper(),
            "data_format": fmt,
            "dilations": _five(1 if dilations is None else dilations, fmt, "dilations"),
        }
    except ValueError as exc:
        raise GraphError(f"{what}: {exc}") from None


def _one_of(a: Any, b: Any, what: str) -> Any:
    if a is None and b is None:
        raise GraphError(f"{what} needs a filter")
    return b if a is None else a


def conv3d(
    input: Any,
    filter: Any = None,
    strides: Any = None,
    padding: Any = None,
    data_format: str = "NDHWC",
    dilations: Any = (1, 1, 1, 1, 1),
    name: str | None = None,
    filters: Any = None,
) -> Tensor:
    """3-D convolution of ``input`` (NDHWC or NCDHW) by a [d, h, w, in, out] filter."""
    attrs = _conv_attrs(strides, padding, data_format, dilations, "conv3d")
    f = convert_to_tensor(_one_of(filter, filters, "conv3d"))
    return _op("Conv3D", [convert_to_tensor(input), f], attrs, name)


def conv3d_transpose(
    value: Any = None,
    filter: Any = None,
    output_shape: Any = None,
    strides: Any = None,
    padding: str = "SAME",
    data_format: str = "NDHWC",
    name: str | None = None,
    input: Any = None,
    filters: Any = None,
    dilations: Any = None,
) -> Tensor:
    """The gradient of ``conv3d`` with respect to its input: a [d, h, w, out, in] filter maps
    ``value`` to ``output_shape``."""
    if output_shape is None:
        raise GraphError("conv3d_transpose needs output_shape")
    attrs = _conv_attrs(strides, padding, data_format, dilations, "conv3d_transpose")
    f = convert_to_tensor(_one_of(filter, filters, "conv3d_transpose"))
    x = convert_to_tensor(value if input is None else input)
    sizes = sizes_tensor(output_shape, "output_shape")
    return _op("Conv3DBackpropInputV2", [sizes, f, x], attrs, name or "conv3d_transpose")


def conv3d_backprop_filter_v2(
    input: Any,
    filter_sizes: Any,
    out_backprop: Any,
    strides: Any,
    padding: str,
    data_format: str = "NDHWC",
    dilations: Any = (1, 1, 1, 1, 1),
    name: str | None = None,
) -> Tensor:
    """The gradient of ``conv3d`` with respect to its filter (of shape ``filter_sizes``)."""
    attrs = _conv_attrs(strides, padding, data_format, dilations, "conv3d_backprop_filter")
    args = [
        convert_to_tensor(input),
        sizes_tensor(filter_sizes, "filter_sizes"),
        convert_to_tensor(out_backprop),
    ]
    return _op("Conv3DBackpropFilterV2", args, attrs, name)


conv3d_backprop_filter = conv3d_backprop_filter_v2


def _pool3d(
    op_type: str, x: Any, ksize: Any, strides: Any, padding: Any, fmt: str | None, name: str | None
) -> Tensor:
    fmt = fmt or "NDHWC"
    try:
        if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
            raise ValueError(f"padding {padding!r} is not 'SAME' or 'VALID'")
        attrs = {
            "ksize": _five(ksize, fmt, "ksize"),
            "strides": _five(strides, fmt, "strides"),
            "padding": padding.upper(),
            "data_format": fmt,
        }
    except ValueError as exc:
        raise GraphError(f"{op_type}: {exc}") from None
    return _op(op_type, [convert_to_tensor(x)], attrs, name)


def max_pool3d(
    input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NDHWC", name: str | None = None
) -> Tensor:
    """The maximum of each 3-D window (SAME padding never wins)."""
    return _pool3d("MaxPool3D", input, ksize, strides, padding, data_format, name)


def avg_pool3d(
    input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NDHWC", name: str | None = None
) -> Tensor:
    """The mean of each 3-D window over the input elements it covers (padding is not counted)."""
    return _pool3d("AvgPool3D", input, ksize, strides, padding, data_format, name)
