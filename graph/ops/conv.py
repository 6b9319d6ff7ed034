"""2-D convolution and pooling (``ac.nn.conv2d``, ``max_pool``, ``avg_pool``) composed of
StridedSlice, ConcatV2, MatMul and reductions, so their gradients come from those ops' rules.

conv2d is an im2col: the kh*kw shifted (strided, dilated) views of the padded input are
concatenated along channels and multiplied by the filter reshaped to (kh*kw*C, O). Pools reduce
the stacked views. Spatial sizes and channels must be known when the graph is built (the batch
may be unknown); padding is TF's: SAME pads (total - total // 2) at the end, VALID none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import shapes as S
from ..core import Tensor, get_default_graph
from ..op_builder import convert_to_tensor
from .array import concat, reshape, stack, transpose, zeros_like
from .constant import constant
from .math import matmul
from .reduction import reduce_max, reduce_sum
from .slicing import strided_slice

__all__ = ["avg_pool", "conv2d", "max_pool"]


def _pair(value: Any, what: str) -> tuple[int, int]:
    """(h, w) from an int, a pair, or TF's 4-vector [1, h, w, 1] (NHWC)."""
    if isinstance(value, (int, np.integer)):
        return int(value), int(value)
    v = [int(x) for x in value]
    if len(v) == 2:
        return v[0], v[1]
    if len(v) == 4:
        if v[0] != 1 or v[3] != 1:
            raise GraphError(f"{what} {v}: the batch and channel entries must be 1")
        return v[1], v[2]
    raise GraphError(f"{what} {v} must be an int, a pair or a 4-vector")


def _spatial(x: Tensor, what: str) -> tuple[int, int, int]:
    s = x._shape
    hwc = None if s is None or len(s) != 4 else s[1:]
    if not S.is_fully_defined(hwc):
        raise GraphError(
            f"{what} needs an NHWC input with known height, width and channels, got {x.name} {x.shape}"
        )
    return int(hwc[0]), int(hwc[1]), int(hwc[2])


def _out_and_pads(size: int, window: int, stride: int, padding: str) -> tuple[int, int, int]:
    if padding == "VALID":
        out = (size - window) // stride + 1
        if out <= 0:
            raise GraphError(f"a window of {window} does not fit in {size} with VALID padding")
        return out, 0, 0
    out = -(-size // stride)
    total = max((out - 1) * stride + window - size, 0)
    return out, total // 2, total - total // 2


def _pad_axis(x: Tensor, axis: int, before: int, after: int, value: float) -> Tensor:
    if not before and not after:
        return x
    # A zero block of width 1 cut from x keeps x's (possibly unknown) batch size.
    key = tuple([slice(None)] * axis + [slice(0, 1)])
    unit = zeros_like(strided_slice(x, key))
    if value:
        unit = unit + value
    parts = [unit] * before + [x] + [unit] * after
    return concat(parts, axis)


def _views(
    x: Tensor,
    window: tuple[int, int],
    strides: tuple[int, int],
    padding: str,
    dilations: tuple[int, int],
    pad_value: float,
    what: str,
) -> tuple[list[Tensor], int, int]:
    """The kh*kw shifted views of ``x`` (each N x Ho x Wo x C), row-major over the window."""
    padding = padding.upper() if isinstance(padding, str) else padding
    if padding not in ("SAME", "VALID"):
        raise GraphError(f"{what}: padding {padding!r} is not 'SAME' or 'VALID'")
    h, w, _ = _spatial(x, what)
    (kh, kw), (sh, sw), (dh, dw) = window, strides, dilations
    eff_h, eff_w = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    ho, top, bottom = _out_and_pads(h, eff_h, sh, padding)
    wo, left, right = _out_and_pads(w, eff_w, sw, padding)
    xp = _pad_axis(_pad_axis(x, 1, top, bottom, pad_value), 2, left, right, pad_value)
    views = []
    for i in range(kh):
        for j in range(kw):
            r0, c0 = i * dh, j * dw
            key = (slice(None), slice(r0, r0 + (ho - 1) * sh + 1, sh), slice(c0, c0 + (wo - 1) * sw + 1, sw))
            views.append(strided_slice(xp, key))
    return views, ho, wo


def _nhwc(x: Tensor, data_format: str) -> Tensor:
    if data_format == "NHWC":
        return x
    if data_format == "NCHW":
        return transpose(x, [0, 2, 3, 1])
    raise GraphError(f"data_format {data_format!r} is not 'NHWC' or 'NCHW'")


def _back(y: Tensor, data_format: str) -> Tensor:
    return y if data_format == "NHWC" else transpose(y, [0, 3, 1, 2])


def conv2d(
    input: Any,
    filter: Any = None,
    strides: Any = 1,
    padding: str = "VALID",
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = 1,
    name: str | None = None,
    filters: Any = None,
) -> Tensor:
    """2-D convolution (cross-correlation, as TF) of NHWC ``input`` with an HWIO ``filter``."""
    kernel_arg = filters if filter is None else filter
    if kernel_arg is None:
        raise GraphError("conv2d needs a filter")
    with get_default_graph().name_scope(name or "Conv2D"):
        x = _nhwc(convert_to_tensor(input), data_format)
        k = convert_to_tensor(kernel_arg, dtype=x.dtype)
        ks = k._shape
        if ks is None or len(ks) != 4 or not S.is_fully_defined(ks):
            raise GraphError(
                f"conv2d needs a filter of known shape (kh, kw, in, out), got {k.name} {k.shape}"
            )
        kh, kw, cin, cout = (int(d) for d in ks)
        _, _, c = _spatial(x, "conv2d")
        if c != cin:
            raise GraphError(f"conv2d: input {x.name} has {c} channels but filter {k.name} expects {cin}")
        views, ho, wo = _views(
            x, (kh, kw), _pair(strides, "strides"), padding, _pair(dilations, "dilations"), 0.0, "conv2d"
        )
        patches = views[0] if len(views) == 1 else concat(views, 3)
        flat = reshape(patches, [-1, kh * kw * cin])
        out = matmul(flat, reshape(k, [kh * kw * cin, cout]))
        return _back(reshape(out, [-1, ho, wo, cout]), data_format)


def _pool_args(
    ksize: Any, strides: Any, padding: str, data_format: str, x: Any
) -> tuple[Tensor, Sequence[Any]]:
    t = _nhwc(convert_to_tensor(x), data_format)
    if t.dtype.kind != "f":
        raise GraphError(f"pooling needs floating-point inputs, but {t.name} is {t.dtype.name}")
    return t, (_pair(ksize, "ksize"), _pair(strides, "strides"), padding)


def max_pool(
    value: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    name: str | None = None,
    input: Any = None,
) -> Tensor:
    """The maximum of each window (SAME pads with the dtype's lowest value, so pads never win)."""
    with get_default_graph().name_scope(name or "MaxPool"):
        x, (window, stride, pad) = _pool_args(
            ksize, strides, padding, data_format, value if input is None else input
        )
        views, _, _ = _views(x, window, stride, pad, (1, 1), float(np.finfo(x.dtype).min), "max_pool")
        out = views[0] if len(views) == 1 else reduce_max(stack(views, axis=4), axis=4)
        return _back(out, data_format)


def avg_pool(
    value: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    name: str | None = None,
    input: Any = None,
) -> Tensor:
    """The mean of each window over the input elements it covers (SAME padding is not counted, as TF)."""
    with get_default_graph().name_scope(name or "AvgPool"):
        x, (window, stride, pad) = _pool_args(
            ksize, strides, padding, data_format, value if input is None else input
        )
        views, ho, wo = _views(x, window, stride, pad, (1, 1), 0.0, "avg_pool")
        total = views[0] if len(views) == 1 else reduce_sum(stack(views, axis=4), axis=4)
        h, w, _ = _spatial(x, "avg_pool")
        counts = _window_counts(h, ho, window[0], stride[0], pad)[:, None] * _window_counts(
            w, wo, window[1], stride[1], pad
        )
        return _back(total / constant(counts.reshape(1, ho, wo, 1).astype(x.dtype)), data_format)


def _window_counts(size: int, out: int, window: int, stride: int, padding: str) -> np.ndarray:
    """How many real (unpadded) elements each output position's window covers along one axis."""
    _, before, _ = _out_and_pads(size, window, stride, padding.upper())
    starts = np.arange(out) * stride - before
    return (np.minimum(starts + window, size) - np.maximum(starts, 0)).astype(np.float64)
