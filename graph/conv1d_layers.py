"""``tf.layers.conv1d``, ``max_pooling1d`` and ``average_pooling1d`` (text CNNs' layers), over
``tf.nn.conv1d`` and 2-D pooling with a height of one. conv1d's variables are ``<scope>/kernel``
(width, in, out) and ``<scope>/bias`` in a ``conv1d``, ``conv1d_1``, ... scope, as TF names them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from antcolony.errors import GraphError

from . import initializers as I
from .conv_layers import _finish
from .core import Tensor, get_default_graph
from .op_builder import convert_to_tensor
from .ops.array import expand_dims
from .ops.array_composite import squeeze
from .ops.nn_more import conv1d as nn_conv1d
from .ops.pooling import avg_pool, max_pool
from .variable_scope import get_variable, variable_scope

__all__ = ["average_pooling1d", "conv1d", "max_pooling1d"]

_ZEROS = I.Zeros()
_FORMATS = {"channels_last": "NWC", "channels_first": "NCW"}


def _format(data_format: str) -> str:
    try:
        return _FORMATS[data_format]
    except KeyError:
        raise GraphError(f"data_format {data_format!r} is not 'channels_last' or 'channels_first'") from None


def _one(value: Any, what: str) -> int:
    if isinstance(value, (list, tuple)):
        if len(value) != 1:
            raise GraphError(f"{what} {value!r} must be an int or a 1-tuple for a 1-D layer")
        value = value[0]
    return int(value)


def conv1d(
    inputs: Any,
    filters: int,
    kernel_size: Any,
    strides: Any = 1,
    padding: str = "valid",
    data_format: str = "channels_last",
    dilation_rate: Any = 1,
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
    """``activation(conv1d(inputs, kernel) + bias)`` with a new (or reused) kernel and bias."""
    fmt = _format(data_format)
    x = convert_to_tensor(inputs)
    if x._shape is None or len(x._shape) != 3:
        raise GraphError(f"conv1d layer needs a 3-D input [batch, width, channels], got {x.name} {x.shape}")
    channels = x._shape[2 if fmt == "NWC" else 1]
    if channels is None:
        raise GraphError(f"conv1d layer: the channel dimension of {x.name} ({x.shape}) must be known")
    k = _one(kernel_size, "kernel_size")
    with variable_scope(name, default_name="conv1d", values=[x], reuse=reuse):
        kernel = get_variable(
            "kernel",
            [k, int(channels), int(filters)],
            dtype=x.dtype,
            initializer=I.get(kernel_initializer),
            regularizer=kernel_regularizer,
            trainable=trainable,
        )
        out = nn_conv1d(
            x,
            kernel,
            _one(strides, "strides"),
            padding.upper(),
            data_format=fmt,
            dilations=_one(dilation_rate, "dilation_rate"),
        )
        # the bias over the channel axis: NWC's is last, NCW's second, as NHWC's and NCHW's
        return _finish(
            out,
            "NHWC" if fmt == "NWC" else "NCHW",
            int(filters),
            activation,
            use_bias,
            bias_initializer,
            bias_regularizer,
            activity_regularizer,
            trainable,
        )


def _pool1d(
    pool: Any, inputs: Any, pool_size: Any, strides: Any, padding: str, data_format: str, name: str
) -> Tensor:
    fmt = _format(data_format)
    with get_default_graph().name_scope(name):
        x = convert_to_tensor(inputs)
        if x._shape is not None and len(x._shape) != 3:
            raise GraphError(f"{name} needs a 3-D input, got {x.name} {x.shape}")
        axis = 1 if fmt == "NWC" else 2
        p, s = _one(pool_size, "pool_size"), _one(strides, "strides")
        y = pool(
            expand_dims(x, axis),
            [1, 1, p, 1] if fmt == "NWC" else [1, 1, 1, p],
            [1, 1, s, 1] if fmt == "NWC" else [1, 1, 1, s],
            padding.upper(),
            "NHWC" if fmt == "NWC" else "NCHW",
        )
        return squeeze(y, [axis])


def max_pooling1d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    """The maximum of each window along the width."""
    return _pool1d(max_pool, inputs, pool_size, strides, padding, data_format, name or "max_pooling1d")


def average_pooling1d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> Tensor:
    """The mean of each window along the width."""
    return _pool1d(avg_pool, inputs, pool_size, strides, padding, data_format, name or "average_pooling1d")
