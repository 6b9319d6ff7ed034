"""Window helpers the convolution and pooling kernels share, on NHWC arrays of any array module.

A window op reads, for each output pixel, the kh x kw input pixels at ``out * stride - pad +
tap * dilation``. ``patches`` is that as one strided view (N, out_h, out_w, kh, kw, C) of the
padded input, with no copy; ``tap`` is the (N, out_h, out_w, C) view of one filter tap, which
col2im-style gradients accumulate into, one tap at a time (never one pixel at a time).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.graph.ops.conv_geometry import Window, spatial_axes, window_of

__all__ = ["Geometry", "covered", "from_nhwc", "padded", "patches", "tap", "to_nhwc", "unpadded"]


def to_nhwc(x: Any, data_format: str) -> Any:
    return x if data_format == "NHWC" else x.transpose(0, 2, 3, 1)


def from_nhwc(xp: Any, y: Any, data_format: str) -> Any:
    """``y`` (NHWC) in ``data_format``, contiguous (a kernel's result never aliases a padded buffer)."""
    return xp.ascontiguousarray(y if data_format == "NHWC" else y.transpose(0, 3, 1, 2))


class Geometry:
    """The Window of a kernel's op for each input size seen (a step reuses its shapes)."""

    def __init__(self, attrs: dict[str, Any]) -> None:
        self.attrs = attrs
        self.data_format = str(attrs.get("data_format", "NHWC"))
        self.axes = spatial_axes(self.data_format)
        self._cache: dict[tuple[int, int, int, int], Window] = {}

    def window(self, h: int, w: int, kh: int, kw: int) -> Window:
        key = (h, w, kh, kw)
        win = self._cache.get(key)
        if win is None:
            win = self._cache[key] = window_of(self.attrs, h, w, kh, kw)
        return win

    def nhwc_sizes(self, sizes: Any) -> tuple[int, int, int, int]:
        """(N, H, W, C) of a 4-vector of sizes in the op's data_format."""
        s = [int(v) for v in (sizes.tolist() if hasattr(sizes, "tolist") else sizes)]
        ah, aw, ac = self.axes
        return s[0], s[ah], s[aw], s[ac]


def padded(xp: Any, x: Any, win: Window, fill: float = 0.0) -> Any:
    """``x`` (NHWC) with the window's padding around its spatial dimensions (``x`` itself when none)."""
    if not win.padded:
        return x
    (top, bottom), (left, right) = win.pads
    n, h, w, c = x.shape
    out = xp.full((n, h + top + bottom, w + left + right, c), fill, dtype=x.dtype)
    out[:, top : top + h, left : left + w] = x
    return out


def unpadded(xpad: Any, win: Window, h: int, w: int) -> Any:
    if not win.padded:
        return xpad
    top, left = win.pads[0][0], win.pads[1][0]
    return xpad[:, top : top + h, left : left + w]


def patches(xp: Any, xpad: Any, win: Window) -> Any:
    """The (N, out_h, out_w, kh, kw, C) strided view of every window of the padded input."""
    sn, sh, sw, sc = xpad.strides
    shape = (xpad.shape[0], win.out_h, win.out_w, win.kh, win.kw, xpad.shape[3])
    strides = (sn, sh * win.sh, sw * win.sw, sh * win.dh, sw * win.dw, sc)
    return xp.lib.stride_tricks.as_strided(xpad, shape, strides)


def tap(xpad: Any, win: Window, i: int, j: int) -> Any:
    """The (N, out_h, out_w, C) view of tap (i, j) of every window of the padded input."""
    r, c = i * win.dh, j * win.dw
    return xpad[
        :, r : r + (win.out_h - 1) * win.sh + 1 : win.sh, c : c + (win.out_w - 1) * win.sw + 1 : win.sw
    ]


def covered(size: int, out: int, k: int, s: int, before: int) -> Any:
    """Along one axis of ``size`` padded by ``before``: how many real input elements each of the
    ``out`` windows (``k`` wide, stride ``s``) covers (average pooling's divisor, padding not
    counted)."""
    start = np.arange(out) * s - before
    return np.minimum(start + k, size) - np.maximum(start, 0)
