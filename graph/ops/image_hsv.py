"""``tf.image`` colour spaces as TF1 computes them: ``rgb_to_hsv`` / ``hsv_to_rgb`` (all in
[0, 1]), ``adjust_hue`` / ``adjust_saturation`` and their ``random_*`` forms (the augmentations of
Inception-style input pipelines), ``rgb_to_yiq`` / ``yiq_to_rgb`` / ``rgb_to_yuv`` /
``yuv_to_rgb`` (TF's matrices), and ``psnr``. Built from registered ops over the last axis."""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import GraphError

from ..core import Tensor, get_default_graph
from ..op_builder import convert_to_tensor
from .array import stack, where
from .array_composite import unstack
from .constant import constant
from .image_color import _as_float, convert_image_dtype
from .math import abs, cast, equal, greater, less, log, maximum, minimum, reduce_mean, squared_difference
from .math_composite import tensordot
from .random import random_uniform
from .rounding import floor, floormod

__all__ = [
    "adjust_hue",
    "adjust_saturation",
    "hsv_to_rgb",
    "psnr",
    "random_hue",
    "random_saturation",
    "rgb_to_hsv",
    "rgb_to_yiq",
    "rgb_to_yuv",
    "yiq_to_rgb",
    "yuv_to_rgb",
]


def _channels(x: Tensor, what: str) -> list[Tensor]:
    if x._shape is not None and (not x._shape or x._shape[-1] not in (3, None)):
        raise GraphError(f"{what} needs images whose last dimension is 3, got {x.name} {x.shape}")
    return unstack(x, num=3, axis=-1)


def rgb_to_hsv(images: Any, name: str | None = None) -> Tensor:
    """RGB in [0, 1] to hue, saturation, value in [0, 1] (float images)."""
    with get_default_graph().name_scope(name or "rgb_to_hsv"):
        x = convert_to_tensor(images)
        r, g, b = _channels(x, "rgb_to_hsv")
        v = maximum(maximum(r, g), b)
        spread = v - minimum(minimum(r, g), b)
        s = where(greater(v, 0.0), spread / where(greater(v, 0.0), v, 1.0), 0.0 * v)
        safe = where(greater(spread, 0.0), spread, 1.0)
        norm = 1.0 / (6.0 * safe)
        h = where(
            equal(r, v),
            norm * (g - b),
            where(equal(g, v), norm * (b - r) + 2.0 / 6.0, norm * (r - g) + 4.0 / 6.0),
        )
        h = where(greater(spread, 0.0), h, 0.0 * h)
        h = where(less(h, 0.0), h + 1.0, h)
        return stack([h, s, v], axis=-1)


def hsv_to_rgb(images: Any, name: str | None = None) -> Tensor:
    """Hue, saturation, value in [0, 1] back to RGB."""
    with get_default_graph().name_scope(name or "hsv_to_rgb"):
        x = convert_to_tensor(images)
        h, s, v = _channels(x, "hsv_to_rgb")
        c = s * v
        m = v - c
        dh = h * 6.0
        sector = floor(dh)
        xc = c * (1.0 - abs(floormod(dh, 2.0) - 1.0))
        zero = 0.0 * c
        table = [(c, xc, zero), (xc, c, zero), (zero, c, xc), (zero, xc, c), (xc, zero, c), (c, zero, xc)]
        rgb = [zero, zero, zero]
        for k, triple in enumerate(table):
            here = equal(sector, float(k))
            rgb = [where(here, t, acc) for t, acc in zip(triple, rgb)]
        return stack([ch + m for ch in rgb], axis=-1)


def _in_hsv(image: Any, change: Any, name: str) -> Tensor:
    with get_default_graph().name_scope(name):
        x = convert_to_tensor(image)
        flt = _as_float(x)
        h, s, v = unstack(rgb_to_hsv(flt), num=3, axis=-1)
        h, s, v = change(h, s, v)
        return convert_image_dtype(hsv_to_rgb(stack([h, s, v], axis=-1)), x.dtype)


def adjust_hue(image: Any, delta: Any, name: str | None = None) -> Tensor:
    """Rotate the hue by ``delta`` (a fraction of the circle, in [-1, 1])."""

    def turn(h: Tensor, s: Tensor, v: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return floormod(h + delta, 1.0), s, v

    return _in_hsv(image, turn, name or "adjust_hue")


def adjust_saturation(image: Any, saturation_factor: Any, name: str | None = None) -> Tensor:
    """Scale the saturation by ``saturation_factor``, clipped to [0, 1]."""

    def scale(h: Tensor, s: Tensor, v: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return h, minimum(maximum(s * saturation_factor, 0.0), 1.0), v

    return _in_hsv(image, scale, name or "adjust_saturation")


def random_hue(image: Any, max_delta: float, seed: int | None = None) -> Tensor:
    """adjust_hue by a delta drawn uniformly from [-max_delta, max_delta] (max_delta <= 0.5)."""
    if not 0 <= max_delta <= 0.5:
        raise ValueError("max_delta must be in the interval [0, 0.5].")
    return adjust_hue(image, random_uniform([], -max_delta, max_delta, seed=seed))


def random_saturation(image: Any, lower: float, upper: float, seed: int | None = None) -> Tensor:
    """adjust_saturation by a factor drawn uniformly from [lower, upper)."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_saturation(image, random_uniform([], lower, upper, seed=seed))


# TF's colour matrices (rows: input channels r, g, b; columns: output channels)
_RGB_TO_YIQ = [
    [0.299, 0.59590059, 0.2115],
    [0.587, -0.27455667, -0.52273617],
    [0.114, -0.32134392, 0.31119955],
]
_YIQ_TO_RGB = [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021], [0.6208248, -0.64720424, 1.70423049]]
_RGB_TO_YUV = [
    [0.299, -0.14714119, 0.61497538],
    [0.587, -0.28886916, -0.51496512],
    [0.114, 0.43601035, -0.10001026],
]
_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def _linear(images: Any, matrix: Any, name: str) -> Tensor:
    with get_default_graph().name_scope(name):
        x = convert_to_tensor(images)
        _channels(x, name)
        k = constant(np.asarray(matrix, dtype=x.dtype))
        rank = len(x._shape) if x._shape is not None else None
        if rank is None:
            raise GraphError(f"{name} needs images of known rank, got {x.name}")
        return tensordot(x, k, [[rank - 1], [0]])


def rgb_to_yiq(images: Any) -> Tensor:
    return _linear(images, _RGB_TO_YIQ, "rgb_to_yiq")


def yiq_to_rgb(images: Any) -> Tensor:
    return _linear(images, _YIQ_TO_RGB, "yiq_to_rgb")


def rgb_to_yuv(images: Any) -> Tensor:
    return _linear(images, _RGB_TO_YUV, "rgb_to_yuv")


def yuv_to_rgb(images: Any) -> Tensor:
    return _linear(images, _YUV_TO_RGB, "yuv_to_rgb")


def psnr(a: Any, b: Any, max_val: Any, name: str | None = None) -> Tensor:
    """Peak signal-to-noise ratio in dB over each image's last three dimensions."""
    with get_default_graph().name_scope(name or "PSNR"):
        a_t = convert_to_tensor(a)
        x, y = _as_float(a_t), _as_float(convert_to_tensor(b))
        # as TF: max_val in the images' dtype, scaled as they are (255 for uint8 becomes 1.0)
        mv = _as_float(cast(convert_to_tensor(max_val), a_t.dtype))
        mse = reduce_mean(squared_difference(x, y), [-3, -2, -1])
        ln10 = float(np.log(10.0))
        return 20.0 * log(mv) / ln10 - 10.0 / ln10 * log(mse)
