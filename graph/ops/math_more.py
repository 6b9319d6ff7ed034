"""More of TF1's math as its programs spell it: ``realdiv``, ``truncatediv`` / ``truncatemod``
(rounding toward zero, C's ``/`` and ``%``, where ``floordiv`` / ``floormod`` round down),
``saturate_cast`` and ``clip_by_average_norm``, composed from registered ops."""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Tensor, get_default_graph
from ..op_builder import convert_to_tensor
from .array import size, where
from .clip import clip_by_value
from .math import abs, cast, divide, less, minimum, multiply, not_equal, reduce_sum, rsqrt, sign
from .math_composite import logical_and
from .rounding import floordiv

__all__ = ["clip_by_average_norm", "realdiv", "saturate_cast", "truncatediv", "truncatemod"]


def realdiv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x / y`` of floating-point tensors (TF's RealDiv)."""
    xt = convert_to_tensor(x)
    if xt.dtype.kind not in "fc":
        raise GraphError(
            f"realdiv needs floating-point tensors, but {xt.name} is {xt.dtype.name}; use truncatediv"
        )
    return divide(xt, convert_to_tensor(y, dtype=xt.dtype), name=name)


def truncatediv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x / y`` rounded toward zero (C's integer division; for floats, the truncated quotient)."""
    with get_default_graph().name_scope(name or "TruncateDiv"):
        xt = convert_to_tensor(x)
        yt = convert_to_tensor(y, dtype=xt.dtype)
        if xt.dtype.kind == "f":
            q = divide(xt, yt)
            return sign(q) * floordiv(abs(q), 1.0)
        # floor and truncation differ when the signs differ and the division is inexact
        down = floordiv(xt, yt)
        inexact = not_equal(down * yt, xt)
        return where(logical_and(less(xt * sign(yt), 0), inexact), down + 1, down)


def truncatemod(x: Any, y: Any, name: str | None = None) -> Tensor:
    """The remainder of ``truncatediv``: its sign follows ``x`` (C's ``%``, ``fmod``)."""
    with get_default_graph().name_scope(name or "TruncateMod"):
        xt = convert_to_tensor(x)
        yt = convert_to_tensor(y, dtype=xt.dtype)
        return xt - truncatediv(xt, yt) * yt


def saturate_cast(value: Any, dtype: Any, name: str | None = None) -> Tensor:
    """``value`` cast to ``dtype``, clamped to the range ``dtype`` can hold first."""
    with get_default_graph().name_scope(name or "saturate_cast"):
        x = convert_to_tensor(value)
        want = dtypes.as_dtype(dtype)
        if want.kind in "iu" or (
            want.kind == "f" and x.dtype.kind == "f" and want.itemsize < x.dtype.itemsize
        ):
            info = np.iinfo(want) if want.kind in "iu" else np.finfo(want)
            lo = max(
                float(info.min),
                float(np.finfo(x.dtype).min if x.dtype.kind == "f" else np.iinfo(x.dtype).min),
            )
            hi = min(
                float(info.max),
                float(np.finfo(x.dtype).max if x.dtype.kind == "f" else np.iinfo(x.dtype).max),
            )
            x = clip_by_value(x, np.asarray(lo, x.dtype), np.asarray(hi, x.dtype))
        return cast(x, want)


def clip_by_average_norm(t: Any, clip_norm: Any, name: str | None = None) -> Tensor:
    """``t`` scaled so that its L2 norm divided by its number of elements is at most ``clip_norm``."""
    with get_default_graph().name_scope(name or "clip_by_average_norm"):
        x = convert_to_tensor(t)
        inv = rsqrt(reduce_sum(x * x))
        n = cast(size(x), x.dtype)
        c = convert_to_tensor(clip_norm, dtype=x.dtype)
        return multiply(x * c, minimum(inv * n, divide(1.0, c)))
