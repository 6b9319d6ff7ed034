"""Feed values: converted and checked against the fed tensor before anything runs."""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import InvalidArgumentError
from antcolony.graph import dtypes
from antcolony.graph import shapes as S
from antcolony.graph.core import Tensor


def convert_feed(t: Tensor, value: Any) -> Any:
    """``value`` as fed to ``t``: same-kind casts allowed; wrong dtype or shape names ``t`` and both."""
    try:
        arr = np.asarray(value)
    except Exception as exc:
        raise InvalidArgumentError(
            None, t.op, f"Cannot convert the value fed for '{t.name}' to an array: {exc}"
        ) from None
    if t.dtype == dtypes.string and arr.dtype.kind in "OUS":
        try:
            # From the value itself: numpy's fixed-width "S" dtype drops trailing NUL bytes, which
            # serialized protos may end with.
            arr = dtypes.as_string_array(value)
        except TypeError as exc:
            raise InvalidArgumentError(None, t.op, f"Cannot feed '{t.name}' (string): {exc}") from None
    if arr.dtype != t.dtype:
        # Integer to integer (signed or not) is allowed when every value fits, as TF converts feeds.
        both_int = arr.dtype.kind in "iu" and t.dtype.kind in "iu"
        bad_kind = arr.dtype.kind in "OUSV" or not np.can_cast(arr.dtype, t.dtype, casting="same_kind")
        if bad_kind and not both_int:
            raise InvalidArgumentError(
                None,
                t.op,
                f"Cannot feed a value of dtype {arr.dtype.name} for tensor '{t.name}', which has dtype "
                f"{t.dtype.name}; cast it first",
            )
        _check_range(t, arr)
        arr = arr.astype(t.dtype)
    if not S.compatible(t._shape, arr.shape):
        raise InvalidArgumentError(
            None,
            t.op,
            f"Cannot feed value of shape {S.format_shape(arr.shape)} for tensor '{t.name}', which has "
            f"shape {S.format_shape(t._shape)}",
        )
    # A fed scalar becomes a numpy scalar (as constants are): scalar arithmetic then takes numpy's
    # fast path instead of a ufunc call on a 0-d array.
    return arr[()] if arr.ndim == 0 else arr


def _check_range(t: Tensor, arr: np.ndarray) -> None:
    """A narrowing integer feed must fit: numpy's astype would silently wrap 300 to 44 in int8."""
    if arr.dtype.kind not in "iu" or t.dtype.kind not in "iu" or arr.size == 0:
        return
    info = np.iinfo(t.dtype)
    lo, hi = arr.min(), arr.max()
    if lo < info.min or hi > info.max:
        bad = lo if lo < info.min else hi
        raise InvalidArgumentError(
            None,
            t.op,
            f"Cannot feed {bad} for tensor '{t.name}' of dtype {t.dtype.name}: it is outside "
            f"[{info.min}, {info.max}]; feed values in range or use a wider dtype",
        )
