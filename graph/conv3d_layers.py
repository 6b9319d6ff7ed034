"""``tf.layers.conv3d``, ``conv3d_transpose``, ``max_pooling3d``, ``average_pooling3d`` over the
ops of graph/ops/conv3d.py. conv3d's variables are ``<scope>/kernel`` (kd, kh, kw, in, out) and
``<scope>/bias`` in a ``conv3d``, ``conv3d_1``, ... scope as TF names them; conv3d_transpose's
kernel is (kd, kh, kw, out, in)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from antcolony.errors import GraphError

from . import initializers as I
from .conv_layers import _finish, transposed_output
from .core import Tensor
from .op_builder import convert_to_tensor
from .ops.conv3d import avg_pool3d, max_pool3d
from .ops.conv3d import conv3d as nn_conv3d
from .ops.conv3d import conv3d_transpose as nn_conv3d_transpose
from .variable_scope import get_variable, variable_scope

__all__ = ["average_pooling3d", "conv3d", "conv3d_transpose", "max_pooling3d"]

_ZEROS = I.Zeros()
# data_format -> (op format, spatial axes, channel axis, bias_add's format)
_FORMATS = {
    "channels_last": ("NDHWC", (1, 2, 3), 4, "NHWC"),
    "channels_first": ("NCDHW", (2, 3, 4), 1, "NCHW"),
}


def _format(data_format: str) -> tuple[str, tuple[int, int, int], int, str]:
    try:
        return _FORMATS[data_format]
    except KeyError:
        raise GraphError(f"data_format {data_format!r} is not 'channels_last' or 'channels_first'") from None


def _three(value: Any) -> tuple[int, int, int]:
    if isinstance(value, int):
        return value, value, value
    a, b, c = value
    return int(a), int(b), int(c)


def _five(value: Any, axes: tuple[int, int, int]) -> list[int]:
    out = [1] * 5
    for axis, v in zip(axes, _three(value), strict=True):
        out[axis] = v
    return out


def _input(inputs: Any, what: str, channel_axis: int) -> tuple[Tensor, int]:
    x = convert_to_tensor(inputs)
    if x._shape is None or len(x._shape) != 5:
        raise GraphError(f"{what} layer needs a 5-D input, got {x.name} {x.shape}")
    channels = x._shape[channel_axis]
    if channels is None:
        raise GraphError(f"{what} layer: the channel dimension of {x.name} ({x.shape}) must be known")
    return x, int(channels)


def conv3d(
    inputs: Any,
    filters: int,
    kernel_size: Any,
    strides: Any = (1, 1, 1),
    padding: str = "valid",
    data_format: str = "channels_last",
    dilation_rate: Any = (1, 1, 1),
    activation: Callable[[Tensor], Tensor] | None = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = _ZEROS,
    kernel_regularizer: Any = None,
    bias_regularizer: Any = None,
    activity_regularizer: Any = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> Tensor:
    """``activation(conv3d(inputs, kernel) + bias)`` with a new (or reused) kernel and bias."""
    fmt, axes, channel_axis, bias_fmt = _format(data_format)
    x, channels = _input(inputs, "conv3d", channel_axis)
    with variable_scope(name, default_name="conv3d", values=[x], reuse=reuse):
        kernel = get_variable(
            "kernel",
            [*_three(kernel_size), channels, int(filters)],
            dtype=x.dtype,
            initializer=I.get(kernel_initializer),
            regularizer=kernel_regularizer,
            trainable=trainable,
        )
        out = nn_conv3d(
            x,
            kernel,
            _five(strides, axes),
            padding.upper(),
            data_format=fmt,
            dilations=_five(dilation_rate, axes),
        )
        return _finish(
            out,
            bias_fmt,
            int(filters),
            activation,
            use_bias,
            bias_initializer,
            bias_regularizer,
            activity_regularizer,
            trainable,
        )


def conv3d_transpose(
    inputs: Any,
    filters: int,
    kernel_size: Any,
    strides: Any = (1, 1, 1),
    padding: str = "valid",
    data_format: str = "channels_last",
    activation: Callable[[Tensor], Tensor] | None = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = _ZEROS,
    kernel_regularizer: Any = None,
    bias_regularizer: Any = None,
    activity_regularizer: Any = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> Tensor:
    """``activation(conv3d_transpose(inputs, kernel) + bias)``: the output is ``strides`` times
    the input's size ("same"), plus ``max(kernel - stride, 0)`` ("valid")."""
    fmt, axes, channel_axis, bias_fmt = _format(data_format)
    x, channels = _input(inputs, "conv3d_transpose", channel_axis)
    pad = padding.lower()
    if pad not in ("same", "valid"):
        raise GraphError(f"conv3d_transpose layer: padding {padding!r} is not 'same' or 'valid'")
    ks, ss = _three(kernel_size), _three(strides)
    with variable_scope(name, default_name="conv3d_transpose", values=[x], reuse=reuse):
        kernel = get_variable(
            "kernel",
            [*ks, int(filters), channels],
            dtype=x.dtype,
            initializer=I.get(kernel_initializer),
            regularizer=kernel_regularizer,
            trainable=trainable,
        )
        dims, output_shape = transposed_output(x, int(filters), channel_axis, axes, ks, ss, pad)
        out = nn_conv3d_transpose(x, kernel, output_shape, _five(strides, axes), pad.upper(), fmt)
        out.set_shape([d if isinstance(d, int) else None for d in dims])  # what is known, as TF's
        return _finish(
            out,
            bias_fmt,
            int(filters),
            activation,
            use_bias,
            bias_initializer,
            bias_regularizer,
            activity_regularizer,
            trainable,
        )


def _pooling(
    op: Callable[..., Tensor],
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str,
    data_format: str,
    name: str,
) -> Tensor:
    fmt, axes, _, _ = _format(data_format)
    return op(inputs, _five(pool_size, axes), _five(strides, axes), padding.upper(), fmt, name=name)


def max_pooling3d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    return _pooling(max_pool3d, inputs, pool_size, strides, padding, data_format, name or "max_pooling3d")


def average_pooling3d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    return _pooling(avg_pool3d, inputs, pool_size, strides, padding, data_format, name or "average_pooling3d")
