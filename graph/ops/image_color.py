"""``tf.image`` pixel-value functions as TF1 composes them: convert_image_dtype,
adjust_brightness / adjust_contrast and their random_* forms, per_image_standardization,
rgb_to_grayscale / grayscale_to_rgb.

Integer images hold values in [0, dtype max], float images in [0, 1]; the adjustments work on
float32 (or the float image's own dtype) and convert back to the image's dtype, saturating.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Tensor, get_default_graph
from ..op_builder import convert_to_tensor
from .array import concat, expand_dims
from .constant import constant
from .control import identity
from .math import cast, divide, maximum, minimum, multiply, rsqrt, sqrt, square
from .random import random_uniform
from .reduction import reduce_mean, reduce_sum
from .rounding import floordiv

__all__ = [
    "adjust_brightness",
    "adjust_contrast",
    "adjust_gamma",
    "convert_image_dtype",
    "grayscale_to_rgb",
    "per_image_standardization",
    "random_brightness",
    "random_contrast",
    "rgb_to_grayscale",
]


def _limits(dt: np.dtype) -> tuple[float, float]:
    info = np.iinfo(dt) if dt.kind in "iu" else np.finfo(dt)
    return float(info.min), float(info.max)


def _saturate_cast(x: Tensor, dt: np.dtype) -> Tensor:
    # clamp to the target's range first, as TF's saturate_cast, so the cast cannot wrap
    # (a bound not representable in x's dtype is moved inward: int32's max is 2**31 in float32)
    lo, hi = _limits(dt)
    xlo, xhi = _limits(x.dtype)
    if xlo < lo:
        low = np.asarray(lo, x.dtype)
        x = maximum(x, constant(np.nextafter(low, 0) if float(low) < lo else low))
    if xhi > hi:
        high = np.asarray(hi, x.dtype)
        x = minimum(x, constant(np.nextafter(high, 0) if float(high) > hi else high))
    return cast(x, dt)


def _check_image_dtype(dt: np.dtype, what: str) -> None:
    if dt.kind not in "fiu" or dt == dtypes.bool_:
        raise GraphError(f"{what}: images must be integer or float, got {dtypes.as_dtype(dt).name}")


def convert_image_dtype(image: Any, dtype: Any, saturate: bool = False, name: str | None = None) -> Tensor:
    """``image`` in ``dtype``, rescaled between integer ranges [0, max] and float range [0, 1]."""
    dt = dtypes.as_dtype(dtype)
    with get_default_graph().name_scope(name or "convert_image"):
        x = convert_to_tensor(image)
        _check_image_dtype(x.dtype, "convert_image_dtype")
        _check_image_dtype(dt, "convert_image_dtype")
        if x.dtype == dt:
            return identity(x)
        src_int, dst_int = x.dtype.kind in "iu", dt.kind in "iu"
        if src_int and dst_int:
            in_max, out_max = int(np.iinfo(x.dtype).max), int(np.iinfo(dt).max)
            if in_max > out_max:
                scaled = floordiv(x, constant(np.asarray((in_max + 1) // (out_max + 1), x.dtype)))
                return _saturate_cast(scaled, dt) if saturate else cast(scaled, dt)
            return multiply(cast(x, dt), constant(np.asarray((out_max + 1) // (in_max + 1), dt)))
        if not src_int and not dst_int:
            return cast(x, dt)
        if src_int:
            return multiply(cast(x, dt), constant(np.asarray(1.0 / np.iinfo(x.dtype).max, dt)))
        scaled = multiply(x, constant(np.asarray(np.iinfo(dt).max + 0.5, x.dtype)))
        return _saturate_cast(scaled, dt) if saturate else cast(scaled, dt)


def _as_float(x: Tensor) -> Tensor:
    return x if x.dtype in (dtypes.float16, dtypes.float32) else convert_image_dtype(x, dtypes.float32)


def adjust_brightness(image: Any, delta: Any) -> Tensor:
    """``image + delta`` on float values; integer images are converted to float and back."""
    with get_default_graph().name_scope("adjust_brightness"):
        x = convert_to_tensor(image)
        flt = _as_float(x)
        adjusted = flt + cast(convert_to_tensor(delta), flt.dtype)
        return convert_image_dtype(adjusted, x.dtype, saturate=True)


def adjust_contrast(images: Any, contrast_factor: Any) -> Tensor:
    """Per image and channel: ``(x - mean) * contrast_factor + mean``, the mean over height and width."""
    with get_default_graph().name_scope("adjust_contrast"):
        x = convert_to_tensor(images)
        flt = _as_float(x)
        if flt._shape is not None and len(flt._shape) < 3:
            raise GraphError(f"adjust_contrast: images {x.name} must be at least 3-D [..., h, w, c]")
        mean = reduce_mean(flt, axis=[-3, -2], keepdims=True)
        factor = cast(convert_to_tensor(contrast_factor), flt.dtype)
        adjusted = (flt - mean) * factor + mean
        return convert_image_dtype(adjusted, x.dtype, saturate=True)


def adjust_gamma(image: Any, gamma: Any = 1, gain: Any = 1) -> Tensor:
    """``gain * x ** gamma`` on float values; integer images are converted to float and back."""
    if not isinstance(gamma, Tensor) and gamma < 0:
        raise GraphError(f"adjust_gamma: gamma must be non-negative, got {gamma}")
    with get_default_graph().name_scope("adjust_gamma"):
        x = convert_to_tensor(image)
        flt = _as_float(x)
        g = cast(convert_to_tensor(gamma), flt.dtype)
        k = cast(convert_to_tensor(gain), flt.dtype)
        return convert_image_dtype(k * flt**g, x.dtype, saturate=True)


def random_brightness(image: Any, max_delta: float, seed: int | None = None) -> Tensor:
    """adjust_brightness by a delta drawn uniformly from [-max_delta, max_delta)."""
    if max_delta < 0:
        raise ValueError("random_brightness: max_delta must be non-negative")
    delta = random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


def random_contrast(image: Any, lower: float, upper: float, seed: int | None = None) -> Tensor:
    """adjust_contrast by a factor drawn uniformly from [lower, upper)."""
    if upper <= lower:
        raise ValueError("random_contrast: upper must be > lower")
    if lower < 0:
        raise ValueError("random_contrast: lower must be non-negative")
    factor = random_uniform([], lower, upper, seed=seed)
    return adjust_contrast(image, factor)


def per_image_standardization(image: Any) -> Tensor:
    """``(x - mean) / max(stddev, 1 / sqrt(num_pixels))`` per image, over height, width and
    channels; the result is float32 (integer images are cast, not rescaled)."""
    with get_default_graph().name_scope("per_image_standardization") as scope:
        x = convert_to_tensor(image)
        if x._shape is None or len(x._shape) < 3 or any(d is None for d in x._shape[-3:]):
            raise GraphError(
                f"per_image_standardization: image {x.name} needs a known [height, width, channels]"
            )
        flt = cast(x, dtypes.float32)
        pixels = int(np.prod([int(d or 0) for d in x._shape[-3:]]))
        mean = reduce_mean(flt, axis=[-1, -2, -3], keepdims=True)
        centred = flt - mean
        stddev = sqrt(reduce_mean(square(centred), axis=[-1, -2, -3], keepdims=True))
        min_stddev = rsqrt(cast(constant(np.int32(pixels)), flt.dtype))
        return divide(centred, maximum(stddev, min_stddev), name=scope)


_RGB_WEIGHTS = (0.2989, 0.5870, 0.1140)


def rgb_to_grayscale(images: Any, name: str | None = None) -> Tensor:
    """The weighted sum 0.2989 R + 0.5870 G + 0.1140 B, as a last axis of size 1."""
    with get_default_graph().name_scope(name or "rgb_to_grayscale"):
        x = convert_to_tensor(images)
        if x._shape is not None and x._shape[-1] not in (3, None):
            raise GraphError(f"rgb_to_grayscale: images {x.name} must have 3 channels (last axis)")
        flt = convert_image_dtype(x, dtypes.float32)
        gray = reduce_sum(flt * constant(np.asarray(_RGB_WEIGHTS, np.float32)), axis=-1)
        return convert_image_dtype(expand_dims(gray, -1), x.dtype)


def grayscale_to_rgb(images: Any, name: str | None = None) -> Tensor:
    """The single channel repeated three times."""
    with get_default_graph().name_scope(name or "grayscale_to_rgb"):
        x = convert_to_tensor(images)
        if x._shape is not None and x._shape[-1] not in (1, None):
            raise GraphError(f"grayscale_to_rgb: images {x.name} must have 1 channel (last axis)")
        return concat([x, x, x], -1)
