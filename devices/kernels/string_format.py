"""Kernel of StringFormat (tf.strings.format), with TF1's summary of a tensor's values.

The layout (facts of TF1's output): a scalar is its value; an array nests ``[...]`` with values
joined by a space, rows by a newline and one more space of indent per level, blocks of rank 2 or
more by one blank line more per level; a dimension longer than ``2 * summarize`` shows its first
and last ``summarize`` entries around ``...``. Floats print with the fewest of 6 / 9 (float32) or
15 / 17 (float64) significant digits that read back the same value; bools as 1 / 0; strings in
double quotes, C-escaped except for bytes >= 0x80; an empty tensor as ``[]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .registry import Aliasing, Compute, KernelContext, register_kernel

_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord('"'): '\\"', ord("'"): "\\'"}
_ESCAPES[ord("\\")] = "\\\\"


def _escape(s: bytes) -> bytes:
    out = []
    for b in s:
        if b in _ESCAPES:
            out.append(_ESCAPES[b].encode())
        elif b < 0x20 or b == 0x7F:
            out.append(b"\\%03o" % b)
        else:
            out.append(bytes((b,)))
    return b'"' + b"".join(out) + b'"'


def _float(v: float, short: int, full: int, kind: Any) -> bytes:
    text = f"{v:.{short}g}"
    if not np.isnan(v) and kind(text) != kind(v):
        text = f"{v:.{full}g}"
    return text.encode()


def _element(v: Any, dtype: np.dtype) -> bytes:
    if dtype.kind in "OSU":
        return _escape(v if isinstance(v, bytes) else str(v).encode())
    if dtype.kind == "b":
        return b"1" if v else b"0"
    if dtype.kind == "f":
        if dtype == np.float64:
            return _float(float(v), 15, 17, float)
        return _float(float(v), 6, 9, np.float32)
    if dtype.kind in "iu":
        return str(int(v)).encode()
    return b"?"  # as TF1, for complex values


def summarize(value: Any, limit: int) -> bytes:
    """TF1's summary of ``value``: at most ``limit`` leading and trailing entries per dimension."""
    a = np.asarray(value)
    if a.ndim == 0:
        return _element(a[()], a.dtype)
    if a.size == 0:
        return b"[]"
    return _nested(a, 0, a.ndim, limit)


def _nested(a: np.ndarray, depth: int, rank: int, limit: int) -> bytes:
    n = a.shape[0]
    if limit >= 0 and 2 * limit < n:
        picks: list[int | None] = [*range(limit), None, *range(n - limit, n)]
    else:
        picks = list(range(n))
    if depth == rank - 1:
        parts = [b"..." if i is None else _element(a[i], a.dtype) for i in picks]
        sep = b" "
    else:
        parts = [b"..." if i is None else _nested(a[i], depth + 1, rank, limit) for i in picks]
        sep = b"\n" * (rank - 1 - depth) + b" " * (depth + 1)
    return b"[" + sep.join(parts) + b"]"


@register_kernel("StringFormat", devices=("CPU",), aliasing=Aliasing.FRESH)
def _string_format(ctx: KernelContext) -> Compute:
    pieces = [p.encode() for p in ctx.attr("template").split(ctx.attr("placeholder"))]
    limit = ctx.attr("summarize")

    def compute(*values: Any) -> Any:
        out = [pieces[0]]
        for value, piece in zip(values, pieces[1:], strict=True):
            out += [summarize(value, limit), piece]
        return b"".join(out)

    return compute
