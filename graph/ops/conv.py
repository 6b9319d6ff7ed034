"""2-D convolution ops with kernels, as TF's: ``Conv2D``, ``Conv2DBackpropInput``,
``Conv2DBackpropFilter`` and the depthwise ``DepthwiseConv2dNative`` family.

Attrs are TF's (``strides``, ``dilations`` as 4-vectors in ``data_format`` order, ``padding``
"SAME" / "VALID" / "EXPLICIT" with ``explicit_paddings``), so GraphDefs carry them as TF does.
Each op's gradient is built from the others, as TF wires it: conv2d's gradient is the two
backprop ops, and each backprop op's gradient is a convolution or the other backprop op. The
builders (``ac.nn.conv2d``, ``conv2d_transpose``, ...) are in graph/ops/conv_api.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import register_gradient
from ..op_builder import convert_to_tensor, holds_tensors, make_op
from ..registry import register_op
from ..static_value import partial_shape
from .constant import constant
from .conv_geometry import PADDINGS, spatial_axes, window_of

__all__ = ["conv_op", "shape_of", "sizes_tensor", "static_sizes"]

CONV_ATTRS = ("strides", "padding", "explicit_paddings", "data_format", "dilations")


def sizes_tensor(value: Any, name: str) -> Tensor:
    """A shape-vector input (``input_sizes``, ``filter_sizes``, ``output_shape``) as a tensor: int32
    constants, or what holds tensors packed as it is."""
    if holds_tensors(value):
        return convert_to_tensor(value, name=name)
    return convert_to_tensor(np.asarray(value, np.int32), name=name)


def static_sizes(t: Tensor) -> tuple[int | None, ...] | None:
    """What is known at build time of a shape-vector input (``input_sizes``, ``filter_sizes``):
    a constant's value, the static shape of the tensor a ``Shape`` op reads, the known parts of a
    ``tf.stack([batch, 8, 8, 2])`` (graph/static_value.py)."""
    return partial_shape(t)


def _rank4(shape: Any, what: str, t: Tensor) -> tuple[int | None, ...] | None:
    if shape is None:
        return None
    if len(shape) != 4:
        raise ValueError(f"{what} {t.name} must be 4-D, but has shape {S.format_shape(shape)}")
    return tuple(shape)


def _check_attrs(op: Operation) -> str:
    fmt = op.attrs["data_format"]
    spatial_axes(fmt)  # raises on an unknown format
    if op.attrs["padding"] not in PADDINGS:
        raise ValueError(f"padding {op.attrs['padding']!r} is not one of {', '.join(PADDINGS)}")
    strides = op.attrs["strides"]
    dil = op.attrs.get("dilations") or [1, 1, 1, 1]
    if len(strides) != 4 or len(dil) != 4 or min(strides) < 1 or min(dil) < 1:
        raise ValueError(f"strides {strides} and dilations {dil} must be 4 positive ints")
    _, _, c = spatial_axes(fmt)
    if strides[0] != 1 or strides[c] != 1 or dil[0] != 1 or dil[c] != 1:
        raise ValueError(f"strides {strides} and dilations {dil} must be 1 in the batch and depth dimensions")
    if op.attrs["padding"] == "EXPLICIT" and len(op.attrs.get("explicit_paddings") or ()) != 8:
        raise ValueError("padding EXPLICIT needs explicit_paddings of 8 ints")
    return str(fmt)


def _same_float(op: Operation, a: Tensor, b: Tensor) -> None:
    if a.dtype != b.dtype:
        raise ValueError(f"{a.name} is {a.dtype.name} but {b.name} is {b.dtype.name}")
    if a.dtype.kind != "f":
        raise ValueError(f"{op.type} needs floating-point inputs, but {a.name} is {a.dtype.name}")


def _out_shape(
    op: Operation, x: tuple[int | None, ...] | None, f: tuple[int | None, ...] | None, out_c: int | None
) -> tuple[int | None, ...]:
    """The NHWC-or-NCHW output shape of a convolution of ``x`` by a filter of shape ``f``."""
    fmt = op.attrs["data_format"]
    ah, aw, ac = spatial_axes(fmt)
    out: list[int | None] = [None] * 4
    out[ac] = out_c
    if x is None:
        return tuple(out)
    out[0] = x[0]
    kh, kw = (None, None) if f is None else (f[0], f[1])
    h, w = x[ah], x[aw]
    if h is not None and w is not None and kh is not None and kw is not None:
        win = window_of(op.attrs, h, w, kh, kw)
        if win.out_h <= 0 or win.out_w <= 0:
            raise ValueError(
                f"a {kh}x{kw} filter (dilations {op.attrs.get('dilations')}) does not fit in the "
                f"{x[ah]}x{x[aw]} input {op.inputs[0].name} with padding {op.attrs['padding']}"
            )
        out[ah], out[aw] = win.out_h, win.out_w
    return tuple(out)


def _depth_check(op: Operation, x: Tensor, xs: Any, f: Tensor, fs: Any) -> None:
    _, _, ac = spatial_axes(op.attrs["data_format"])
    if xs is not None and fs is not None and xs[ac] is not None and fs[2] is not None and xs[ac] != fs[2]:
        raise ValueError(
            f"input {x.name} of shape {S.format_shape(xs)} has {xs[ac]} channels but filter {f.name} of "
            f"shape {S.format_shape(fs)} expects {fs[2]} (input depth must equal the filter's third dimension)"
        )


def _out_channels(op: Operation, fs: Any) -> int | None:
    if fs is None:
        return None
    if op.type.startswith("Depthwise"):
        return None if fs[2] is None or fs[3] is None else fs[2] * fs[3]
    return fs[3]


@register_op("Conv2D")
@register_op("DepthwiseConv2dNative")
def _conv_shape(op: Operation) -> list:
    x, f = op.inputs
    _check_attrs(op)
    _same_float(op, x, f)
    xs, fs = _rank4(x._shape, "input", x), _rank4(f._shape, "filter", f)
    _depth_check(op, x, xs, f, fs)
    return [(x.dtype, _out_shape(op, xs, fs, _out_channels(op, fs)))]


@register_op("Conv2DBackpropInput")
@register_op("DepthwiseConv2dNativeBackpropInput")
def _backprop_input_shape(op: Operation) -> list:
    sizes, f, dy = op.inputs
    _check_attrs(op)
    _same_float(op, f, dy)
    if sizes.dtype.kind not in "iu":
        raise ValueError(f"input_sizes {sizes.name} must be int32, got {sizes.dtype.name}")
    xs = _rank4(static_sizes(sizes), "input_sizes", sizes)
    fs, ds = _rank4(f._shape, "filter", f), _rank4(dy._shape, "out_backprop", dy)
    if xs is not None and fs is not None:
        _depth_check(op, sizes, xs, f, fs)
        want = _out_shape(op, xs, fs, _out_channels(op, fs))
        if ds is not None and not S.compatible(want, ds):
            raise ValueError(
                f"out_backprop {dy.name} has shape {S.format_shape(ds)} but a convolution of input size "
                f"{S.format_shape(xs)} by filter {f.name} {S.format_shape(fs)} gives {S.format_shape(want)}"
            )
    return [(f.dtype, xs if xs is not None else (None,) * 4)]


@register_op("Conv2DBackpropFilter")
@register_op("DepthwiseConv2dNativeBackpropFilter")
def _backprop_filter_shape(op: Operation) -> list:
    x, sizes, dy = op.inputs
    _check_attrs(op)
    _same_float(op, x, dy)
    fs = _rank4(static_sizes(sizes), "filter_sizes", sizes)
    _depth_check(op, x, _rank4(x._shape, "input", x), sizes, fs)
    return [(x.dtype, fs if fs is not None else (None,) * 4)]


def conv_op(op_type: str, inputs: list[Tensor], attrs: dict[str, Any], name: str | None) -> Tensor:
    return make_op(op_type, inputs, {k: attrs[k] for k in CONV_ATTRS if k in attrs}, name or op_type).outputs[
        0
    ]


def shape_of(t: Tensor) -> Tensor:
    """``t``'s shape as an int32 vector: a constant when known at build time (TF's gradients use
    Shape; a constant spares a node per step and lets shape rules see the sizes)."""
    if S.is_fully_defined(t._shape):
        return constant(np.asarray(t._shape, np.int32))
    from .array import shape

    return shape(t)


_BACKPROP = {
    "Conv2D": ("Conv2DBackpropInput", "Conv2DBackpropFilter"),
    "DepthwiseConv2dNative": ("DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter"),
}


def _forward_grad(op: Operation, grad: Tensor) -> list:
    x, f = op.inputs
    bi, bf = _BACKPROP[op.type]
    return [
        conv_op(bi, [shape_of(x), f, grad], op.attrs, bi),
        conv_op(bf, [x, shape_of(f), grad], op.attrs, bf),
    ]


def _backprop_input_grad(op: Operation, grad: Tensor) -> list:
    _, f, dy = op.inputs
    fwd = "Conv2D" if op.type == "Conv2DBackpropInput" else "DepthwiseConv2dNative"
    bf = _BACKPROP[fwd][1]
    return [None, conv_op(bf, [grad, shape_of(f), dy], op.attrs, bf), conv_op(fwd, [grad, f], op.attrs, fwd)]


def _backprop_filter_grad(op: Operation, grad: Tensor) -> list:
    x, _, dy = op.inputs
    fwd = "Conv2D" if op.type == "Conv2DBackpropFilter" else "DepthwiseConv2dNative"
    bi = _BACKPROP[fwd][0]
    return [conv_op(bi, [shape_of(x), grad, dy], op.attrs, bi), None, conv_op(fwd, [x, grad], op.attrs, fwd)]


for _fwd, (_bi, _bf) in _BACKPROP.items():
    register_gradient(_fwd)(_forward_grad)
    register_gradient(_bi)(_backprop_input_grad)
    register_gradient(_bf)(_backprop_filter_grad)
