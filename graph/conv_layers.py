"""``tf.layers.conv2d``, ``conv2d_transpose``, ``max_pooling2d``, ``average_pooling2d`` over
``ac.nn``'s ops (graph/ops/conv_api.py, graph/ops/pooling.py). conv2d's variables are
``<scope>/kernel`` (kh, kw, in, out) and ``<scope>/bias``, in a ``conv2d``, ``conv2d_1``, ...
scope as TF names them; conv2d_transpose's kernel is (kh, kw, out, in)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from antcolony.errors import GraphError

from . import initializers as I
from .core import Tensor, get_default_graph
from .graph_keys import GraphKeys
from .op_builder import convert_to_tensor
from .ops.array import shape, stack
from .ops.conv_api import conv2d as nn_conv2d
from .ops.conv_api import conv2d_transpose as nn_conv2d_transpose
from .ops.nn import bias_add
from .ops.pooling import avg_pool, max_pool
from .variable_scope import get_variable, variable_scope

__all__ = ["average_pooling2d", "conv2d", "conv2d_transpose", "max_pooling2d"]

# Default initializers, shared by every call as TF's are (B008: built once, here, not per signature).
_ZEROS = I.Zeros()
_FORMATS = {"channels_last": "NHWC", "channels_first": "NCHW"}


def _format(data_format: str) -> str:
    try:
        return _FORMATS[data_format]
    except KeyError:
        raise GraphError(f"data_format {data_format!r} is not 'channels_last' or 'channels_first'") from None


def _two(value: Any) -> tuple[int, int]:
    if isinstance(value, int):
        return value, value
    a, b = value
    return int(a), int(b)


def conv2d(
    inputs: Any,
    filters: int,
    kernel_size: Any,
    strides: Any = (1, 1),
    padding: str = "valid",
    data_format: str = "channels_last",
    dilation_rate: Any = (1, 1),
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
    """``activation(conv2d(inputs, kernel) + bias)`` with a new (or reused) kernel and bias."""
    fmt = _format(data_format)
    x = convert_to_tensor(inputs)
    if x._shape is None or len(x._shape) != 4:
        raise GraphError(f"conv2d layer needs a 4-D input, got {x.name} {x.shape}")
    channels = x._shape[3 if fmt == "NHWC" else 1]
    if channels is None:
        raise GraphError(f"conv2d layer: the channel dimension of {x.name} ({x.shape}) must be known")
    kh, kw = _two(kernel_size)
    with variable_scope(name, default_name="conv2d", values=[x], reuse=reuse):
        kernel = get_variable(
            "kernel",
            [kh, kw, int(channels), int(filters)],
            dtype=x.dtype,
            initializer=I.get(kernel_initializer),
            regularizer=kernel_regularizer,
            trainable=trainable,
        )
        sh, sw = _two(strides)
        dh, dw = _two(dilation_rate)
        out = nn_conv2d(x, kernel, [1, sh, sw, 1], padding.upper(), data_format=fmt, dilations=[1, dh, dw, 1])
        return _finish(
            out,
            fmt,
            int(filters),
            activation,
            use_bias,
            bias_initializer,
            bias_regularizer,
            activity_regularizer,
            trainable,
        )


def _finish(
    out: Tensor,
    fmt: str,
    filters: int,
    activation: Callable[[Tensor], Tensor] | None,
    use_bias: bool,
    bias_initializer: Any,
    bias_regularizer: Any,
    activity_regularizer: Any,
    trainable: bool,
) -> Tensor:
    """Bias, activation and activity regularizer of a conv layer, inside its variable scope."""
    if use_bias:
        bias = get_variable(
            "bias",
            [filters],
            dtype=out.dtype,
            initializer=I.get(bias_initializer),
            regularizer=bias_regularizer,
            trainable=trainable,
        )
        out = bias_add(out, bias, data_format=fmt)
    if activation is not None:
        out = activation(out)
    if activity_regularizer is not None:
        loss = activity_regularizer(out)
        if loss is not None:
            get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
    return out


def _transposed_length(size: int | None, kernel: int, stride: int, padding: str) -> int | None:
    # Keras' deconv_output_length without output_padding.
    if size is None:
        return None
    return size * stride if padding == "same" else size * stride + max(kernel - stride, 0)


def transposed_output(
    x: Tensor,
    filters: int,
    channel_axis: int,
    axes: tuple[int, ...],
    kernel: tuple[int, ...],
    strides: tuple[int, ...],
    pad: str,
) -> tuple[list[Any], Any]:
    """(dims, output_shape) of a transposed convolution layer over ``x``: per dimension an int or,
    where ``x``'s static shape leaves it unknown, a scalar tensor from ``shape(x)``; output_shape
    is the list when every dim is known, else their ``stack``."""
    xs = x._shape
    assert xs is not None  # (the layer checked its rank)
    dims: list[Any] = [None] * len(xs)
    dims[0], dims[channel_axis] = xs[0], filters
    for axis, k, s in zip(axes, kernel, strides, strict=True):
        dims[axis] = _transposed_length(xs[axis], k, s, pad)
    if None in dims:
        dynamic = shape(x)
        if dims[0] is None:
            dims[0] = dynamic[0]
        for axis, k, s in zip(axes, kernel, strides, strict=True):
            if dims[axis] is None:
                dims[axis] = dynamic[axis] * s + (0 if pad == "same" else max(k - s, 0))
    return dims, (dims if all(isinstance(d, int) for d in dims) else stack(dims))


def conv2d_transpose(
    inputs: Any,
    filters: int,
    kernel_size: Any,
    strides: Any = (1, 1),
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
    """``activation(conv2d_transpose(inputs, kernel) + bias)``: the output is ``strides`` times
    the input's size ("same"), plus ``max(kernel - stride, 0)`` ("valid")."""
    fmt = _format(data_format)
    x = convert_to_tensor(inputs)
    if x._shape is None or len(x._shape) != 4:
        raise GraphError(f"conv2d_transpose layer needs a 4-D input, got {x.name} {x.shape}")
    ah, aw, ac = (1, 2, 3) if fmt == "NHWC" else (2, 3, 1)
    channels = x._shape[ac]
    if channels is None:
        raise GraphError(
            f"conv2d_transpose layer: the channel dimension of {x.name} ({x.shape}) must be known"
        )
    kh, kw = _two(kernel_size)
    sh, sw = _two(strides)
    pad = padding.lower()
    if pad not in ("same", "valid"):
        raise GraphError(f"conv2d_transpose layer: padding {padding!r} is not 'same' or 'valid'")
    with variable_scope(name, default_name="conv2d_transpose", values=[x], reuse=reuse):
        kernel = get_variable(
            "kernel",
            [kh, kw, int(filters), int(channels)],
            dtype=x.dtype,
            initializer=I.get(kernel_initializer),
            regularizer=kernel_regularizer,
            trainable=trainable,
        )
        _, output_shape = transposed_output(x, int(filters), ac, (ah, aw), (kh, kw), (sh, sw), pad)
        out = nn_conv2d_transpose(
            x, kernel, output_shape, [1, sh, sw, 1] if fmt == "NHWC" else [1, 1, sh, sw], pad.upper(), fmt
        )
        return _finish(
            out,
            fmt,
            int(filters),
            activation,
            use_bias,
            bias_initializer,
            bias_regularizer,
            activity_regularizer,
            trainable,
        )


def max_pooling2d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    ph, pw = _two(pool_size)
    sh, sw = _two(strides)
    return max_pool(
        inputs,
        [1, ph, pw, 1],
        [1, sh, sw, 1],
        padding.upper(),
        _format(data_format),
        name=name or "max_pooling2d",
    )


def average_pooling2d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    ph, pw = _two(pool_size)
    sh, sw = _two(strides)
    return avg_pool(
        inputs,
        [1, ph, pw, 1],
        [1, sh, sw, 1],
        padding.upper(),
        _format(data_format),
        name=name or "average_pooling2d",
    )
