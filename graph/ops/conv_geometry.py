"""Window geometry of convolution and pooling, shared by the ops' shape rules and the kernels.

TF's rules: attrs hold 4-vectors in data_format order (``strides``, ``dilations``, ``ksize``);
``padding`` is "SAME", "VALID" or "EXPLICIT" (then ``explicit_paddings`` holds 8 ints, a
(before, after) pair per dimension in data_format order). SAME gives ``ceil(size / stride)``
outputs and pads ``total // 2`` before, the rest after; VALID pads nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "PADDINGS",
    "Window",
    "axis_geometry",
    "explicit_paddings_attr",
    "four",
    "spatial_axes",
    "window_of",
]

PADDINGS = ("SAME", "VALID", "EXPLICIT")


def spatial_axes(data_format: str) -> tuple[int, int, int]:
    """(height, width, channel) axes of a 4-D tensor in ``data_format``."""
    if data_format == "NHWC":
        return 1, 2, 3
    if data_format == "NCHW":
        return 2, 3, 1
    raise ValueError(f"data_format {data_format!r} is not 'NHWC' or 'NCHW'")


def four(value: Any, data_format: str, what: str) -> list[int]:
    """TF's 4-vector attr in ``data_format`` order from an int, a (h, w) pair, or a 4-vector whose
    batch and channel entries are 1."""
    h, w, c = spatial_axes(data_format)
    v = [int(value)] * 2 if isinstance(value, (int, np.integer)) else [int(x) for x in value]
    if len(v) == 1:
        v = v * 2
    if len(v) == 2:
        out = [1, 1, 1, 1]
        out[h], out[w] = v
        return out
    if len(v) == 4:
        if v[0] != 1 or v[c] != 1:
            raise ValueError(
                f"{what} {v}: the batch and channel entries must be 1 (data_format {data_format})"
            )
        return v
    raise ValueError(f"{what} {v} must be an int, a pair or a 4-vector")


def explicit_paddings_attr(padding: Any, data_format: str) -> tuple[str, list[int]]:
    """(padding attr, explicit_paddings attr) from TF's ``padding`` argument: a string, or a list
    of four (before, after) pairs in data_format order (batch and channel pairs must be 0)."""
    if isinstance(padding, str):
        p = padding.upper()
        if p not in ("SAME", "VALID"):
            raise ValueError(f"padding {padding!r} is not 'SAME', 'VALID' or a list of (before, after) pairs")
        return p, []
    pairs = [[int(a) for a in pair] for pair in padding]
    if len(pairs) != 4 or any(len(p) != 2 for p in pairs):
        raise ValueError(f"explicit padding {padding!r} must be 4 (before, after) pairs")
    _, _, c = spatial_axes(data_format)
    if pairs[0] != [0, 0] or pairs[c] != [0, 0]:
        raise ValueError(f"explicit padding {padding!r} must not pad the batch or channel dimension")
    if any(a < 0 for p in pairs for a in p):
        raise ValueError(f"explicit padding {padding!r} must not be negative")
    return "EXPLICIT", [a for p in pairs for a in p]


def axis_geometry(
    size: int, window: int, stride: int, dilation: int, padding: str, explicit: Sequence[int] = (0, 0)
) -> tuple[int, int, int]:
    """(output size, pad before, pad after) along one spatial axis."""
    eff = (window - 1) * dilation + 1
    if padding == "SAME":
        out = -(-size // stride)
        total = max((out - 1) * stride + eff - size, 0)
        return out, total // 2, total - total // 2
    before, after = (0, 0) if padding == "VALID" else (int(explicit[0]), int(explicit[1]))
    out = (size + before + after - eff) // stride + 1
    if out < 0:
        out = 0
    return out, before, after


@dataclass(frozen=True)
class Window:
    """The geometry of one windowed op on concrete spatial sizes (NHWC view)."""

    kh: int
    kw: int
    sh: int
    sw: int
    dh: int
    dw: int
    out_h: int
    out_w: int
    pads: tuple[tuple[int, int], tuple[int, int]]  # (top, bottom), (left, right)

    @property
    def padded(self) -> bool:
        return any(self.pads[0]) or any(self.pads[1])


def window_of(attrs: dict[str, Any], h: int, w: int, kh: int, kw: int) -> Window:
    """The Window of an op with TF's attrs (``strides``, ``padding``, ``data_format``, optional
    ``dilations``, ``explicit_paddings``) over an h x w input and a kh x kw window."""
    fmt = attrs.get("data_format", "NHWC")
    ah, aw, _ = spatial_axes(fmt)
    strides = attrs["strides"]
    dil = attrs.get("dilations") or [1, 1, 1, 1]
    padding = attrs["padding"]
    ex = attrs.get("explicit_paddings") or [0] * 8
    oh, top, bottom = axis_geometry(h, kh, strides[ah], dil[ah], padding, ex[2 * ah : 2 * ah + 2])
    ow, left, right = axis_geometry(w, kw, strides[aw], dil[aw], padding, ex[2 * aw : 2 * aw + 2])
    return Window(kh, kw, strides[ah], strides[aw], dil[ah], dil[aw], oh, ow, ((top, bottom), (left, right)))
