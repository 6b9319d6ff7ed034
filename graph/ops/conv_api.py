"""``ac.nn`` convolution builders over the ops of graph/ops/conv.py, with TF1's signatures:
``conv2d``, ``conv2d_transpose``, ``conv2d_backprop_input``, ``conv2d_backprop_filter``,
``depthwise_conv2d``, ``depthwise_conv2d_native``, ``separable_conv2d``.

Strides and dilations may be given as an int, an (h, w) pair or TF's 4-vector; padding as
"SAME", "VALID" or four (before, after) pairs (explicit padding).
"""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from .. import shapes as S
from ..core import Tensor, get_default_graph
from ..op_builder import convert_to_tensor
from .conv import conv_op, sizes_tensor
from .conv_geometry import explicit_paddings_attr, four, spatial_axes

__all__ = [
    "atrous_conv2d",
    "conv2d",
    "conv2d_backprop_filter",
    "conv2d_backprop_input",
    "conv2d_transpose",
    "depthwise_conv2d",
    "depthwise_conv2d_native",
    "separable_conv2d",
]


def conv_attrs(strides: Any, padding: Any, data_format: str | None, dilations: Any) -> dict[str, Any]:
    """TF's attrs of a convolution op from the builder arguments (GraphError on bad values)."""
    fmt = data_format or "NHWC"
    try:
        pad, explicit = explicit_paddings_attr(padding, fmt)
        return {
            "strides": four(1 if strides is None else strides, fmt, "strides"),
            "padding": pad,
            "explicit_paddings": explicit,
            "data_format": fmt,
            "dilations": four(1 if dilations is None else dilations, fmt, "dilations"),
        }
    except ValueError as exc:
        raise GraphError(str(exc)) from None


def _filter(filter: Any, filters: Any, x: Tensor, what: str) -> Tensor:
    k = filters if filter is None else filter
    if k is None:
        raise GraphError(f"{what} needs a filter")
    return convert_to_tensor(k, dtype=x.dtype)


def conv2d(
    input: Any,
    filter: Any = None,
    strides: Any = 1,
    padding: Any = "VALID",
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = 1,
    name: str | None = None,
    filters: Any = None,
) -> Tensor:
    """2-D convolution (cross-correlation, as TF) of ``input`` with an HWIO ``filter``."""
    attrs = conv_attrs(strides, padding, data_format, dilations)
    x = convert_to_tensor(input)
    k = _filter(filter, filters, x, "conv2d")
    s = x._shape
    if s is not None and len(s) == 4:
        ah, aw, ac = spatial_axes(attrs["data_format"])
        if s[ah] is None or s[aw] is None or s[ac] is None:
            raise GraphError(
                f"conv2d needs an input with known height, width and channels, got {x.name} {x.shape}"
            )
    return conv_op("Conv2D", [x, k], attrs, name or "Conv2D")


def atrous_conv2d(value: Any, filters: Any, rate: int, padding: Any, name: str | None = None) -> Tensor:
    """TF1's atrous (dilated) convolution: conv2d with unit strides and dilation ``rate``."""
    return conv2d(value, filters, 1, padding, dilations=rate, name=name or "atrous_conv2d")


def conv2d_backprop_input(
    input_sizes: Any,
    filter: Any = None,
    out_backprop: Any = None,
    strides: Any = 1,
    padding: Any = "VALID",
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = 1,
    name: str | None = None,
    filters: Any = None,
) -> Tensor:
    """The gradient of conv2d with respect to its input, of shape ``input_sizes``."""
    dy = convert_to_tensor(out_backprop)
    k = _filter(filter, filters, dy, "conv2d_backprop_input")
    attrs = conv_attrs(strides, padding, data_format, dilations)
    return conv_op("Conv2DBackpropInput", [sizes_tensor(input_sizes, "input_sizes"), k, dy], attrs, name)


def conv2d_backprop_filter(
    input: Any,
    filter_sizes: Any,
    out_backprop: Any,
    strides: Any = 1,
    padding: Any = "VALID",
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = 1,
    name: str | None = None,
) -> Tensor:
    """The gradient of conv2d with respect to its filter, of shape ``filter_sizes``."""
    x = convert_to_tensor(input)
    dy = convert_to_tensor(out_backprop, dtype=x.dtype)
    attrs = conv_attrs(strides, padding, data_format, dilations)
    return conv_op("Conv2DBackpropFilter", [x, sizes_tensor(filter_sizes, "filter_sizes"), dy], attrs, name)


def conv2d_transpose(
    value: Any = None,
    filter: Any = None,
    output_shape: Any = None,
    strides: Any = None,
    padding: Any = "SAME",
    data_format: str = "NHWC",
    name: str | None = None,
    input: Any = None,
    filters: Any = None,
    dilations: Any = None,
) -> Tensor:
    """The transpose of conv2d (its gradient with respect to the input): ``filter`` is
    (height, width, output channels, input channels), ``output_shape`` the 4-D result shape."""
    x = convert_to_tensor(value if input is None else input)
    k = _filter(filter, filters, x, "conv2d_transpose")
    if output_shape is None:
        raise GraphError("conv2d_transpose needs output_shape")
    attrs = conv_attrs(strides, padding, data_format, dilations)
    _, _, ac = spatial_axes(attrs["data_format"])
    xs, ks = x._shape, k._shape
    in_c = xs[ac] if xs is not None and len(xs) == 4 else None
    out_c = ks[3] if ks is not None and len(ks) == 4 else None
    if in_c is not None and out_c is not None and in_c != out_c:
        raise GraphError(
            f"conv2d_transpose: input {x.name} of shape {S.format_shape(xs)} has {in_c} channels but "
            f"filter {k.name} of shape {S.format_shape(ks)} expects {out_c} (its last dimension)"
        )
    sizes = sizes_tensor(output_shape, "output_shape")
    return conv_op("Conv2DBackpropInput", [sizes, k, x], attrs, name or "conv2d_transpose")


def depthwise_conv2d_native(
    input: Any,
    filter: Any,
    strides: Any,
    padding: Any,
    data_format: str = "NHWC",
    dilations: Any = 1,
    name: str | None = None,
) -> Tensor:
    """Per-channel convolution: filter (h, w, in, multiplier) gives in * multiplier channels,
    output channel ``c * multiplier + m`` from input channel c."""
    x = convert_to_tensor(input)
    k = convert_to_tensor(filter, dtype=x.dtype)
    attrs = conv_attrs(strides, padding, data_format, dilations)
    return conv_op("DepthwiseConv2dNative", [x, k], attrs, name or "DepthwiseConv2dNative")


def depthwise_conv2d(
    input: Any,
    filter: Any,
    strides: Any,
    padding: Any,
    rate: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    dilations: Any = None,
) -> Tensor:
    """TF1's depthwise_conv2d: ``rate`` (or ``dilations``) is the dilation of the filter."""
    dil = dilations if dilations is not None else rate
    with get_default_graph().name_scope(name or "depthwise"):
        return depthwise_conv2d_native(input, filter, strides, padding, data_format or "NHWC", dil or 1)


def separable_conv2d(
    input: Any,
    depthwise_filter: Any,
    pointwise_filter: Any,
    strides: Any,
    padding: Any,
    rate: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    dilations: Any = None,
) -> Tensor:
    """A depthwise convolution followed by a 1x1 (pointwise) convolution, as TF1's."""
    dil = dilations if dilations is not None else rate
    fmt = data_format or "NHWC"
    with get_default_graph().name_scope(name or "separable_conv2d"):
        mid = depthwise_conv2d_native(
            input, depthwise_filter, strides, padding, fmt, dil or 1, name="depthwise"
        )
        return conv_op(
            "Conv2D",
            [mid, convert_to_tensor(pointwise_filter, dtype=mid.dtype)],
            conv_attrs(1, "VALID", fmt, 1),
            "pointwise",
        )
