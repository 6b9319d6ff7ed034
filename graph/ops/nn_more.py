"""More of ``tf.nn`` as TF1 programs call it, built from registered ops with TF's formulas (their
gradients come from the parts' rules): ``conv1d``, ``lrn`` / ``local_response_normalization``,
``zero_fraction``, ``crelu``, ``weighted_cross_entropy_with_logits``, ``log_poisson_loss``,
``space_to_depth`` / ``depth_to_space``, ``sufficient_statistics``, ``normalize_moments`` and
``weighted_moments``.
"""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from ..core import Tensor, get_default_graph
from ..legacy_args import resolve
from ..op_builder import convert_to_tensor
from .array import concat, expand_dims, reshape, shape, stack, transpose, where, zeros_like
from .array_composite import pad, squeeze
from .conv_api import conv2d
from .math import (
    abs,
    add_n,
    cast,
    divide,
    equal,
    exp,
    greater_equal,
    less_equal,
    log,
    maximum,
    pow,
    reduce_mean,
    reduce_sum,
    square,
)
from .math_composite import logical_and
from .math_unary import log1p
from .nn import relu

__all__ = [
    "conv1d",
    "crelu",
    "depth_to_space",
    "local_response_normalization",
    "log_poisson_loss",
    "lrn",
    "normalize_moments",
    "space_to_depth",
    "sufficient_statistics",
    "weighted_cross_entropy_with_logits",
    "weighted_moments",
    "zero_fraction",
]


def _one(value: Any, what: str) -> int:
    """A 1-D stride or dilation given as an int or as TF's 1- or 3-element list."""
    if isinstance(value, int):
        return value
    items = list(value)
    if len(items) == 1:
        return int(items[0])
    if len(items) == 3 and items[0] == 1 and items[2] == 1:
        return int(items[1])
    raise GraphError(f"conv1d: {what} {value!r} must be an int or [1, {what}, 1]")


def conv1d(
    value: Any = None,
    filters: Any = None,
    stride: Any = 1,
    padding: Any = "VALID",
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NWC",
    name: str | None = None,
    input: Any = None,
    dilations: Any = 1,
) -> Tensor:
    """1-D convolution of a [batch, width, channels] input ("NWC"; "NCW": channels first) with a
    [width, in_channels, out_channels] filter, as TF1: a conv2d over a height of one."""
    x = resolve(input, value, "input", "value")
    if x is None or filters is None:
        raise GraphError("conv1d needs an input and filters")
    if data_format not in ("NWC", "NCW"):
        raise GraphError(f"conv1d: data_format {data_format!r} is not 'NWC' or 'NCW'")
    s, d = _one(stride, "stride"), _one(dilations, "dilations")
    with get_default_graph().name_scope(name or "conv1d"):
        channels_last = data_format == "NWC"
        x2 = expand_dims(convert_to_tensor(x), 1 if channels_last else 2)
        k2 = expand_dims(convert_to_tensor(filters), 0)
        y = conv2d(
            x2,
            k2,
            [1, 1, s, 1] if channels_last else [1, 1, 1, s],
            padding,
            data_format="NHWC" if channels_last else "NCHW",
            dilations=[1, 1, d, 1] if channels_last else [1, 1, 1, d],
        )
        return squeeze(y, [1 if channels_last else 2])


def local_response_normalization(
    input: Any,
    depth_radius: int = 5,
    bias: float = 1.0,
    alpha: float = 1.0,
    beta: float = 0.5,
    name: str | None = None,
) -> Tensor:
    """``input / (bias + alpha * sqr_sum) ** beta`` over the last axis of a 4-D input, where
    ``sqr_sum`` sums the squares of the ``2 * depth_radius + 1`` channels centred on each (fewer
    at the edges), as TF's LRN."""
    with get_default_graph().name_scope(name or "LRN"):
        x = convert_to_tensor(input)
        if x._shape is not None and len(x._shape) != 4:
            raise GraphError(f"lrn needs a 4-D input, but {x.name} has shape {x.shape}")
        if x.dtype.kind != "f":
            raise GraphError(f"lrn needs a floating-point input, but {x.name} is {x.dtype.name}")
        r = int(depth_radius)
        if r < 0:
            raise GraphError(f"lrn: depth_radius must be >= 0, got {depth_radius}")
        padded = pad(square(x), [[0, 0], [0, 0], [0, 0], [r, r]])
        width = 2 * r
        windows = [padded[..., k : (k - width) or None] for k in range(width + 1)]
        sqr_sum = windows[0] if len(windows) == 1 else add_n(windows)
        return x / pow(sqr_sum * alpha + bias, beta)


lrn = local_response_normalization


def zero_fraction(value: Any, name: str | None = None) -> Tensor:
    """The fraction of ``value``'s elements that are zero, a float32 scalar."""
    with get_default_graph().name_scope(name or "zero_fraction"):
        x = convert_to_tensor(value)
        return reduce_mean(cast(equal(x, 0), "float32"))


def crelu(features: Any, name: str | None = None, axis: int = -1) -> Tensor:
    """``concat([relu(x), relu(-x)], axis)``: the positive and the negative part."""
    with get_default_graph().name_scope(name or "CRelu"):
        x = convert_to_tensor(features)
        return concat([relu(x), relu(-x)], axis)


def weighted_cross_entropy_with_logits(
    targets: Any = None,
    logits: Any = None,
    pos_weight: Any = None,
    name: str | None = None,
    labels: Any = None,
) -> Tensor:
    """Sigmoid cross entropy with the positive term weighted by ``pos_weight``, in TF's stable
    form ``(1 - z) * x + (1 + (q - 1) * z) * (log(1 + exp(-|x|)) + max(-x, 0))``."""
    z = resolve(labels, targets, "labels", "targets")
    if z is None or logits is None or pos_weight is None:
        raise GraphError("weighted_cross_entropy_with_logits needs targets (labels), logits and pos_weight")
    with get_default_graph().name_scope(name or "logistic_loss"):
        x = convert_to_tensor(logits)
        zt = convert_to_tensor(z, dtype=x.dtype)
        log_weight = (convert_to_tensor(pos_weight, dtype=x.dtype) - 1.0) * zt + 1.0
        return (1.0 - zt) * x + log_weight * (log1p(exp(-abs(x))) + maximum(-x, 0.0))


def log_poisson_loss(
    targets: Any, log_input: Any, compute_full_loss: bool = False, name: str | None = None
) -> Tensor:
    """``exp(log_input) - log_input * targets``, plus Stirling's approximation of
    ``log(targets!)`` where ``targets > 1`` when ``compute_full_loss``, as TF."""
    with get_default_graph().name_scope(name or "log_poisson_loss"):
        c = convert_to_tensor(log_input)
        z = convert_to_tensor(targets, dtype=c.dtype)
        loss = exp(c) - c * z
        if not compute_full_loss:
            return loss
        stirling = z * log(z) - z + 0.5 * log(z * 6.283185307179586)
        dropped = logical_and(greater_equal(z, 0.0), less_equal(z, 1.0))
        return loss + where(dropped, zeros_like(z), stirling)


def _block(block_size: Any, op: str) -> int:
    b = int(block_size)
    if b < 2:
        raise GraphError(f"{op}: block_size must be at least 2, got {block_size}")
    return b


def _nhwc(x: Tensor, data_format: str, op: str) -> Tensor:
    if data_format not in ("NHWC", "NCHW"):
        raise GraphError(f"{op}: data_format {data_format!r} is not 'NHWC' or 'NCHW'")
    if x._shape is not None and len(x._shape) != 4:
        raise GraphError(f"{op} needs a 4-D input, but {x.name} has shape {x.shape}")
    return x if data_format == "NHWC" else transpose(x, [0, 2, 3, 1])


def _from_nhwc(x: Tensor, data_format: str) -> Tensor:
    return x if data_format == "NHWC" else transpose(x, [0, 3, 1, 2])


def space_to_depth(input: Any, block_size: int, name: str | None = None, data_format: str = "NHWC") -> Tensor:
    """Each ``block_size`` x ``block_size`` block of pixels becomes one pixel of
    ``block_size**2`` times the channels (row-major within the block, then channel), as TF."""
    b = _block(block_size, "space_to_depth")
    with get_default_graph().name_scope(name or "SpaceToDepth"):
        x = _nhwc(convert_to_tensor(input), data_format, "space_to_depth")
        s = shape(x)
        n, h, w, c = s[0], s[1], s[2], s[3]
        blocks = reshape(x, stack([n, h // b, b, w // b, b, c]))
        out = reshape(transpose(blocks, [0, 1, 3, 2, 4, 5]), stack([n, h // b, w // b, c * (b * b)]))
        return _from_nhwc(out, data_format)


def depth_to_space(input: Any, block_size: int, name: str | None = None, data_format: str = "NHWC") -> Tensor:
    """The inverse of ``space_to_depth``: each pixel's channels spread over a ``block_size`` x
    ``block_size`` block."""
    b = _block(block_size, "depth_to_space")
    with get_default_graph().name_scope(name or "DepthToSpace"):
        x = _nhwc(convert_to_tensor(input), data_format, "depth_to_space")
        s = shape(x)
        n, h, w, c = s[0], s[1], s[2], s[3]
        cells = reshape(x, stack([n, h, w, b, b, c // (b * b)]))
        out = reshape(transpose(cells, [0, 1, 3, 2, 4, 5]), stack([n, h * b, w * b, c // (b * b)]))
        return _from_nhwc(out, data_format)


def sufficient_statistics(
    x: Any,
    axes: Any,
    shift: Any = None,
    keep_dims: bool | None = None,
    name: str | None = None,
    keepdims: bool | None = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor | None]:
    """(count, sum of ``x - shift``, sum of its squares, shift) over ``axes``, as TF."""
    keep = bool(resolve(keepdims, keep_dims, "keepdims", "keep_dims", default=False))
    with get_default_graph().name_scope(name or "sufficient_statistics"):
        xt = convert_to_tensor(x)
        s = shape(xt)
        axis_list = [axes] if isinstance(axes, int) else list(axes)
        sizes = [s[a] for a in axis_list]
        count = cast(sizes[0] if len(sizes) == 1 else _product(sizes), xt.dtype)
        if shift is not None:
            st = convert_to_tensor(shift, dtype=xt.dtype)
            centred = xt - st
        else:
            st, centred = None, xt
        mean_ss = reduce_sum(centred, axis_list, keepdims=keep, name="mean_ss")
        var_ss = reduce_sum(square(centred), axis_list, keepdims=keep, name="var_ss")
        return count, mean_ss, var_ss, st


def _product(sizes: list[Tensor]) -> Tensor:
    out = sizes[0]
    for size in sizes[1:]:
        out = out * size
    return out


def normalize_moments(
    counts: Any, mean_ss: Any, variance_ss: Any, shift: Any, name: str | None = None
) -> tuple[Tensor, Tensor]:
    """(mean, variance) from ``sufficient_statistics``' sums, as TF."""
    with get_default_graph().name_scope(name or "normalize"):
        divisor = divide(1.0, convert_to_tensor(counts))
        shifted_mean = convert_to_tensor(mean_ss) * divisor
        mean = shifted_mean + shift if shift is not None else shifted_mean
        variance = convert_to_tensor(variance_ss) * divisor - square(shifted_mean)
        return mean, variance


def weighted_moments(
    x: Any,
    axes: Any,
    frequency_weights: Any,
    name: str | None = None,
    keep_dims: bool | None = None,
    keepdims: bool | None = None,
) -> tuple[Tensor, Tensor]:
    """The frequency-weighted mean and variance of ``x`` over ``axes``, as TF."""
    keep = bool(resolve(keepdims, keep_dims, "keepdims", "keep_dims", default=False))
    with get_default_graph().name_scope(name or "weighted_moments"):
        xt = convert_to_tensor(x)
        w = convert_to_tensor(frequency_weights, dtype=xt.dtype)
        weighted_sum = reduce_sum(w * xt, axes, keepdims=True)
        weight_sum = reduce_sum(w + zeros_like(xt), axes, keepdims=True)
        divisor = divide(1.0, weight_sum)
        mean = weighted_sum * divisor
        variance = reduce_sum(w * square(xt - mean), axes, keepdims=True) * divisor
        if not keep:
            mean = squeeze(mean, axes if not isinstance(axes, int) else [axes])
            variance = squeeze(variance, axes if not isinstance(axes, int) else [axes])
        return mean, variance
