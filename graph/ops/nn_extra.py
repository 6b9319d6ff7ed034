"""More of TF1's ``tf.nn``, composed of existing ops (so gradients come with them): ``swish`` /
``silu``, ``relu_layer``, ``max_pool1d`` / ``avg_pool1d`` and the rank-dispatching
``max_pool_v2`` / ``avg_pool_v2``, ``fused_batch_norm`` and
``batch_norm_with_global_normalization``."""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from ..core import Tensor, get_default_graph
from ..op_builder import convert_to_tensor
from .array import expand_dims, reshape, size
from .array_composite import squeeze
from .control import stop_gradient
from .conv3d import avg_pool3d, max_pool3d
from .math import cast, matmul, maximum
from .nn import bias_add, relu, sigmoid
from .normalization import batch_normalization, moments
from .pooling import avg_pool, max_pool

__all__ = [
    "avg_pool1d",
    "avg_pool_v2",
    "batch_norm_with_global_normalization",
    "fused_batch_norm",
    "max_pool1d",
    "max_pool_v2",
    "relu_layer",
    "silu",
    "swish",
]


def swish(features: Any, beta: float = 1.0) -> Tensor:
    """``features * sigmoid(beta * features)``."""
    with get_default_graph().name_scope("swish"):
        x = convert_to_tensor(features)
        return x * sigmoid(x * beta if beta != 1.0 else x)


silu = swish


def relu_layer(x: Any, weights: Any, biases: Any, name: str | None = None) -> Tensor:
    """``relu(x @ weights + biases)``."""
    with get_default_graph().name_scope(name or "relu_layer") as scope:
        return relu(bias_add(matmul(x, weights), biases), name=scope)


def _window(value: Any, what: str) -> list[int]:
    """A 1-D pool's size or stride (an int, or a list of 1 or 3) as the 2-D pool's [1, k, 1] part."""
    items = [value] if isinstance(value, int) else [int(v) for v in value]
    if len(items) == 3:
        items = items[1:2]
    if len(items) != 1:
        raise GraphError(f"a 1-D pool's {what} must be an int or a list of 1 or 3 ints, got {value!r}")
    return items


def _pool1d(
    pool: Any, input: Any, ksize: Any, strides: Any, padding: str, data_format: str, name: Any
) -> Tensor:
    if data_format not in ("NWC", "NCW"):
        raise GraphError(f"a 1-D pool's data_format must be 'NWC' or 'NCW', got {data_format!r}")
    axis = 1 if data_format == "NWC" else 2
    fmt = "NHWC" if data_format == "NWC" else "NCHW"
    k, s = _window(ksize, "ksize"), _window(strides, "strides")
    if fmt == "NHWC":
        k4, s4 = [1, 1, *k, 1], [1, 1, *s, 1]
    else:
        k4, s4 = [1, 1, 1, *k], [1, 1, 1, *s]
    with get_default_graph().name_scope(name or pool.__name__ + "1d"):
        out = pool(expand_dims(convert_to_tensor(input), axis), k4, s4, padding, data_format=fmt)
        return squeeze(out, [axis])


def max_pool1d(
    input: Any, ksize: Any, strides: Any, padding: str, data_format: str = "NWC", name: str | None = None
) -> Tensor:
    """The maximum of each window of a [batch, width, channels] input."""
    return _pool1d(max_pool, input, ksize, strides, padding, data_format, name or "MaxPool1d")


def avg_pool1d(
    input: Any, ksize: Any, strides: Any, padding: str, data_format: str = "NWC", name: str | None = None
) -> Tensor:
    """The mean of each window of a [batch, width, channels] input."""
    return _pool1d(avg_pool, input, ksize, strides, padding, data_format, name or "AvgPool1D")


def _pool_v2(
    one_d: Any,
    two_d: Any,
    three_d: Any,
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: Any,
    name: Any,
) -> Tensor:
    x = convert_to_tensor(input)
    rank = len(x._shape) if x._shape is not None else None
    if rank == 3:
        return one_d(x, ksize, strides, padding, data_format or "NWC", name)
    if rank == 4:
        k = [1, ksize, ksize, 1] if isinstance(ksize, int) else ksize
        s = [1, strides, strides, 1] if isinstance(strides, int) else strides
        if len(k) == 2:
            k = [1, *k, 1]
        if len(s) == 2:
            s = [1, *s, 1]
        return two_d(x, k, s, padding, data_format=data_format or "NHWC", name=name)
    if rank == 5:
        return three_d(x, ksize, strides, padding, data_format or "NDHWC", name)
    raise GraphError(f"pooling of {x.name}: inputs of rank 3, 4 or 5 are supported, got shape {x.shape}")


def max_pool_v2(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str | None = None,
    name: str | None = None,
) -> Tensor:
    """``max_pool1d``, ``max_pool`` or ``max_pool3d`` by the input's rank."""
    return _pool_v2(max_pool1d, max_pool, max_pool3d, input, ksize, strides, padding, data_format, name)


def avg_pool_v2(
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str | None = None,
    name: str | None = None,
) -> Tensor:
    """``avg_pool1d``, ``avg_pool`` or ``avg_pool3d`` by the input's rank."""
    return _pool_v2(avg_pool1d, avg_pool, avg_pool3d, input, ksize, strides, padding, data_format, name)


def fused_batch_norm(
    x: Any,
    scale: Any,
    offset: Any,
    mean: Any = None,
    variance: Any = None,
    epsilon: float = 0.001,
    data_format: str = "NHWC",
    is_training: bool = True,
    name: str | None = None,
    exponential_avg_factor: float = 1.0,
) -> tuple[Tensor, Tensor, Tensor]:
    """(y, mean, variance) of a 4-D input normalised per channel. Training: the batch's
    statistics normalise it and come back (the variance Bessel-corrected, as TF1's kernel
    returns it for moving averages); inference: the given ``mean`` and ``variance``."""
    if data_format not in ("NHWC", "NCHW"):
        raise GraphError(f"fused_batch_norm: data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    with get_default_graph().name_scope(name or "FusedBatchNorm"):
        xt = convert_to_tensor(x)
        axes = [0, 1, 2] if data_format == "NHWC" else [0, 2, 3]
        shape = [1, 1, 1, -1] if data_format == "NHWC" else [1, -1, 1, 1]

        def channel(t: Any) -> Tensor:
            return reshape(convert_to_tensor(t, dtype=xt.dtype), shape)

        if is_training:
            if exponential_avg_factor != 1.0:
                raise GraphError("fused_batch_norm: exponential_avg_factor other than 1.0 is not supported")
            batch_mean, batch_var = moments(xt, axes)
            y = batch_normalization(
                xt, channel(batch_mean), channel(batch_var), channel(offset), channel(scale), epsilon
            )
            # values per channel, known or not before the run
            count = cast(size(xt), xt.dtype) / cast(size(batch_mean), xt.dtype)
            unbiased = batch_var * count / maximum(count - 1.0, 1.0)
            # as TF1's FusedBatchNormGrad: only y's gradient flows back, not the statistics'
            return y, stop_gradient(batch_mean), stop_gradient(unbiased)
        if mean is None or variance is None:
            raise GraphError("fused_batch_norm: is_training=False needs mean and variance")
        # TF1 gives the given mean and variance no gradient
        m = stop_gradient(convert_to_tensor(mean, dtype=xt.dtype))
        v = stop_gradient(convert_to_tensor(variance, dtype=xt.dtype))
        y = batch_normalization(xt, channel(m), channel(v), channel(offset), channel(scale), epsilon)
        return y, m, v


def batch_norm_with_global_normalization(
    t: Any = None,
    m: Any = None,
    v: Any = None,
    beta: Any = None,
    gamma: Any = None,
    variance_epsilon: float | None = None,
    scale_after_normalization: bool | None = None,
    name: str | None = None,
    input: Any = None,
    mean: Any = None,
    variance: Any = None,
) -> Tensor:
    """``batch_normalization`` with TF1's old argument names (``gamma`` only when
    ``scale_after_normalization``)."""
    x = input if input is not None else t
    mu = mean if mean is not None else m
    var = variance if variance is not None else v
    if variance_epsilon is None:
        raise GraphError("batch_norm_with_global_normalization needs variance_epsilon")
    scale = gamma if scale_after_normalization else None
    return batch_normalization(x, mu, var, beta, scale, variance_epsilon, name=name or "batchnorm")
