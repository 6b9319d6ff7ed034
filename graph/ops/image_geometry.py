"""``tf.image`` geometry as TF1 composes it: flips (and their seeded random forms), transpose,
rot90, the crops and pads, random_crop.

Images are 3-D [height, width, channels] or 4-D [batch, height, width, channels]; offsets and
sizes are Python ints checked against the image's static shape when the graph is built.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from ..control_flow import cond
from ..core import Tensor, get_default_graph
from ..op_builder import convert_to_tensor
from .array import gather, reshape, transpose
from .array_composite import pad, slice
from .constant import constant
from .control import identity
from .math import cast, greater, less
from .random import random_uniform
from .rounding import floormod
from .sequence import reverse

__all__ = [
    "central_crop",
    "crop_to_bounding_box",
    "flip_left_right",
    "flip_up_down",
    "pad_to_bounding_box",
    "random_crop",
    "random_flip_left_right",
    "random_flip_up_down",
    "resize_image_with_crop_or_pad",
    "rot90",
    "transpose_image",
]


def _image(image: Any, what: str) -> tuple[Tensor, bool]:
    """The image as a tensor and whether it is a batch (4-D)."""
    x = convert_to_tensor(image)
    if x._shape is None or len(x._shape) not in (3, 4):
        raise GraphError(f"{what}: image {x.name} must be 3-D [h, w, c] or 4-D [n, h, w, c] of known rank")
    return x, len(x._shape) == 4


def _hw(x: Tensor, batched: bool, what: str) -> tuple[int, int]:
    h, w = x._shape[1:3] if batched else x._shape[0:2]  # type: ignore[index]
    if h is None or w is None:
        raise GraphError(f"{what}: image {x.name} needs a static height and width, got {x.shape}")
    return h, w


def _flip(image: Any, axis: int, what: str) -> Tensor:
    with get_default_graph().name_scope(what):
        x, batched = _image(image, what)
        return reverse(x, [axis + int(batched)])


def flip_left_right(image: Any) -> Tensor:
    """The image mirrored along its width."""
    return _flip(image, 1, "flip_left_right")


def flip_up_down(image: Any) -> Tensor:
    """The image mirrored along its height."""
    return _flip(image, 0, "flip_up_down")


def _random_flip(image: Any, axis: int, seed: int | None, what: str) -> Tensor:
    with get_default_graph().name_scope(what):
        x, batched = _image(image, what)
        if not batched:
            mirror = less(random_uniform([], 0, 1.0, seed=seed), 0.5)
            return cond(mirror, lambda: reverse(x, [axis]), lambda: identity(x))
        n = x._shape[0]  # type: ignore[index]
        if n is None:
            raise GraphError(f"{what}: a batch of images {x.name} needs a static batch size")
        # per image: flip where round(draw) is 1 (TF rounds half to even: draw > 0.5)
        flips = reshape(cast(greater(random_uniform([n], 0, 1.0, seed=seed), 0.5), x.dtype), [n, 1, 1, 1])
        return flips * reverse(x, [axis + 1]) + (1 - flips) * x


def random_flip_left_right(image: Any, seed: int | None = None) -> Tensor:
    """flip_left_right with probability 1/2 (per image of a batch)."""
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image: Any, seed: int | None = None) -> Tensor:
    """flip_up_down with probability 1/2 (per image of a batch)."""
    return _random_flip(image, 0, seed, "random_flip_up_down")


def transpose_image(image: Any) -> Tensor:
    """Height and width swapped."""
    with get_default_graph().name_scope("transpose_image"):
        x, batched = _image(image, "transpose_image")
        return transpose(x, [0, 2, 1, 3] if batched else [1, 0, 2])


def rot90(image: Any, k: int = 1, name: str | None = None) -> Tensor:
    """The image rotated counter-clockwise by ``k`` quarter turns (``k`` a Python int)."""
    if isinstance(k, Tensor):
        raise GraphError("rot90: k must be a Python int here (a tensor k is not supported)")
    with get_default_graph().name_scope(name or "rot90"):
        x, batched = _image(image, "rot90")
        b = int(batched)
        perm = [0, 2, 1, 3] if batched else [1, 0, 2]
        turns = int(k) % 4
        if turns == 0:
            return x
        if turns == 1:
            return transpose(reverse(x, [1 + b]), perm)
        if turns == 2:
            return reverse(x, [b, 1 + b])
        return reverse(transpose(x, perm), [1 + b])


def crop_to_bounding_box(
    image: Any, offset_height: int, offset_width: int, target_height: int, target_width: int
) -> Tensor:
    """The ``target_height`` x ``target_width`` window whose top-left corner is at the offsets."""
    with get_default_graph().name_scope("crop_to_bounding_box"):
        x, batched = _image(image, "crop_to_bounding_box")
        h, w = _hw(x, batched, "crop_to_bounding_box")
        if offset_height < 0 or offset_width < 0 or target_height <= 0 or target_width <= 0:
            raise GraphError("crop_to_bounding_box: offsets must be >= 0 and target sizes > 0")
        if offset_height + target_height > h or offset_width + target_width > w:
            raise GraphError(
                f"crop_to_bounding_box: the box [{offset_height}:{offset_height + target_height}, "
                f"{offset_width}:{offset_width + target_width}] does not fit in {x.name} of {h}x{w}"
            )
        begin = [offset_height, offset_width, 0]
        size = [target_height, target_width, -1]
        if batched:
            begin, size = [0, *begin], [-1, *size]
        return slice(x, begin, size)


def pad_to_bounding_box(
    image: Any, offset_height: int, offset_width: int, target_height: int, target_width: int
) -> Tensor:
    """The image placed at the offsets on a zero ``target_height`` x ``target_width`` canvas."""
    with get_default_graph().name_scope("pad_to_bounding_box"):
        x, batched = _image(image, "pad_to_bounding_box")
        h, w = _hw(x, batched, "pad_to_bounding_box")
        after_h, after_w = target_height - offset_height - h, target_width - offset_width - w
        if offset_height < 0 or offset_width < 0 or after_h < 0 or after_w < 0:
            raise GraphError(
                f"pad_to_bounding_box: {x.name} of {h}x{w} at offset ({offset_height}, {offset_width}) "
                f"does not fit in {target_height}x{target_width}"
            )
        pads = [[offset_height, after_h], [offset_width, after_w], [0, 0]]
        return pad(x, [[0, 0], *pads] if batched else pads)


def resize_image_with_crop_or_pad(image: Any, target_height: int, target_width: int) -> Tensor:
    """Centre-crop the dimensions that are too large, zero-pad (centred) those too small."""
    with get_default_graph().name_scope("resize_image_with_crop_or_pad"):
        x, batched = _image(image, "resize_image_with_crop_or_pad")
        h, w = _hw(x, batched, "resize_image_with_crop_or_pad")
        if target_height <= 0 or target_width <= 0:
            raise GraphError("resize_image_with_crop_or_pad: target sizes must be > 0")
        dh, dw = target_height - h, target_width - w
        cropped = crop_to_bounding_box(
            x, max(-dh // 2, 0), max(-dw // 2, 0), min(target_height, h), min(target_width, w)
        )
        return pad_to_bounding_box(cropped, max(dh // 2, 0), max(dw // 2, 0), target_height, target_width)


def central_crop(image: Any, central_fraction: float) -> Tensor:
    """The central ``central_fraction`` of the height and width (offsets rounded down as TF1)."""
    if not 0.0 < central_fraction <= 1.0:
        raise ValueError("central_crop: central_fraction must be within (0, 1]")
    with get_default_graph().name_scope("central_crop"):
        x, batched = _image(image, "central_crop")
        if central_fraction == 1.0:
            return x
        h, w = _hw(x, batched, "central_crop")
        top = int((float(h) - float(h) * central_fraction) / 2)
        left = int((float(w) - float(w) * central_fraction) / 2)
        return crop_to_bounding_box(x, top, left, h - 2 * top, w - 2 * left)


def random_crop(value: Any, size: Any, seed: int | None = None, name: str | None = None) -> Tensor:
    """A window of shape ``size`` (Python ints) at an offset drawn uniformly on every axis."""
    with get_default_graph().name_scope(name or "random_crop"):
        x = convert_to_tensor(value)
        sizes = [int(s) for s in np.asarray(size).reshape(-1)]
        shape = x._shape
        if shape is None or len(shape) != len(sizes) or any(d is None for d in shape):
            raise GraphError(
                f"random_crop: {x.name} needs a static shape of rank {len(sizes)}, got {x.shape}"
            )
        limits = [d - s + 1 for d, s in zip(shape, sizes)]  # type: ignore[operator]
        if any(lim <= 0 for lim in limits):
            raise GraphError(f"random_crop: size {sizes} is larger than {x.name}'s shape {x.shape}")
        draw = random_uniform([len(sizes)], 0, np.iinfo(np.int32).max, dtype=dtypes.int32, seed=seed)
        offsets = floormod(draw, constant(np.asarray(limits, np.int32)))
        out = x
        for axis, s in enumerate(sizes):
            if s != shape[axis]:
                idx = constant(np.arange(s, dtype=np.int32)) + offsets[axis]
                out = gather(out, idx, axis=axis)
        return out
