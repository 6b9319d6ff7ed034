"""Kernel of ImageSummary (``tf.summary.image``): up to ``max_images`` PNGs of a batch.

Float images are scaled one at a time as TF1 scales them: over the finite values, when none is
negative the largest becomes 255; otherwise 0.0 maps to 128 and the largest magnitude to 127 away
from it (then truncated to uint8). A pixel with a non-finite channel is left out of the range and
painted red. The PNGs are 8-bit grey, RGB or RGBA, written here
(zlib and the format's chunks: no image library needed).
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np

from antcolony.errors import InvalidArgumentError

from .registry import Compute, KernelContext, register_kernel
from .summary import _encoded, _host, _tensorboardx

_COLOR_TYPE = {1: 0, 3: 2, 4: 6}  # grey, RGB, RGBA
_BAD_COLOR = np.array([255, 0, 0, 255], dtype=np.uint8)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )


def encode_png(pixels: np.ndarray) -> bytes:
    """``pixels`` ([height, width, channels] uint8) as a PNG file's bytes."""
    height, width, channels = pixels.shape
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOR_TYPE[channels], 0, 0, 0)
    rows = np.concatenate([np.zeros((height, 1), np.uint8), pixels.reshape(height, width * channels)], axis=1)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows.tobytes()))
        + _chunk(b"IEND", b"")
    )


def to_uint8(image: np.ndarray) -> np.ndarray:
    """One image ([h, w, c]) as TF1's image summary shows it."""
    if image.dtype == np.uint8:
        return image
    # In the image's own precision, as TF1 (min and max in float32; below 1e-6 counts as zero),
    # truncated to uint8: the largest value of a non-negative image lands exactly on 255.
    t = image.dtype.type
    finite = np.isfinite(image).all(axis=-1, keepdims=True)  # a pixel with one bad channel is bad
    values = image[np.broadcast_to(finite, image.shape)].astype(np.float32)
    lo, hi = (float(values.min()), float(values.max())) if values.size else (0.0, 0.0)
    if lo < 0:
        bound = np.float32(max(-lo, hi))
        scale, offset = t(0.0 if bound < 1e-6 else np.float32(127.0) / bound), t(128.0)
    else:
        scale, offset = t(0.0 if hi < 1e-6 else np.float32(255.0) / np.float32(hi)), t(0.0)
    out = (np.where(finite, image, t(0)) * scale + offset).astype(np.uint8)
    bad = ~finite[..., 0]
    if bad.any():
        out[bad] = _BAD_COLOR[: image.shape[-1]]
    return out


@register_kernel("ImageSummary", devices=("CPU",), expensive=True)
def _image_summary(ctx: KernelContext) -> Compute:
    tbx, tag, limit, op = _tensorboardx(ctx), ctx.attr("tag"), ctx.attr("max_images"), ctx.op

    def compute(x: Any) -> bytes:
        batch = _host(x)
        if batch.ndim != 4 or batch.shape[-1] not in _COLOR_TYPE:
            raise InvalidArgumentError(
                None, op, f"{op.name}: images must be [batch, height, width, 1|3|4], got shape {batch.shape}"
            )
        values = []
        for i, image in enumerate(batch[:limit]):
            h, w, c = image.shape
            picture = tbx.Summary.Image(
                height=h, width=w, colorspace=c, encoded_image_string=encode_png(to_uint8(image))
            )
            name = f"{tag}/image" if limit == 1 else f"{tag}/image/{i}"
            values.append(tbx.Summary.Value(tag=name, image=picture))
        return _encoded(tbx.Summary(value=values))

    return compute
