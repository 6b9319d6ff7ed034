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
        if bad_kind and _whole_floats_for_ints(t, arr):
            # One-hot labels as floats fed to an int placeholder (MNIST's loader gives floats):
            # TF1 casts; so do we while nothing is lost. 1.5 is refused where TF1 truncates.
            bad_kind = False
        if bad_kind and not both_int:
            why = (
                " (values that are not whole numbers, or out of range: TF1 would truncate or wrap them "
                "silently)"
                if arr.dtype.kind == "f" and t.dtype.kind in "iu"
                else ""
            )
            raise InvalidArgumentError(
                None,
                t.op,
                f"Cannot feed a value of dtype {arr.dtype.name} for tensor '{t.name}', which has dtype "
                f"{t.dtype.name}{why}; cast it first",
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


def _whole_floats_for_ints(t: Tensor, arr: np.ndarray) -> bool:
    if arr.dtype.kind != "f" or t.dtype.kind not in "iu":
        return False
    if arr.size == 0:
        return True
    info = np.iinfo(t.dtype)
    with np.errstate(invalid="ignore"):
        whole = bool(np.all(np.isfinite(arr)) and np.all(arr == np.trunc(arr)))
    return whole and bool(arr.min() >= info.min and arr.max() <= info.max)


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
