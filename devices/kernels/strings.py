"""Kernels of the string ops (CPU only: string tensors are object arrays of ``bytes``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from .registry import Aliasing, Compute, KernelContext, register_kernel

_CPU = ("CPU",)


def _scalar(out: np.ndarray) -> Any:
    # a 0-d result is returned as its element: a scalar string is fetched as ``bytes``, as TF's
    return out[()] if out.ndim == 0 else out


def _map(fn: Callable[[Any], Any], x: Any, dtype: Any = object) -> np.ndarray:
    arr = np.asarray(x, dtype=object)
    out = np.empty(arr.shape, dtype=dtype)
    flat_in, flat_out = arr.reshape(-1), out.reshape(-1)
    for i, item in enumerate(flat_in):
        flat_out[i] = fn(item)
    return _scalar(out)


def _elementwise(fn: Callable[[KernelContext], Callable[[bytes], Any]], dtype: Any = object) -> Any:
    def factory(ctx: KernelContext) -> Compute:
        one = fn(ctx)
        return lambda x: _map(one, x, dtype)

    return factory


register_kernel("StringStrip", devices=_CPU, aliasing=Aliasing.FRESH)(_elementwise(lambda ctx: bytes.strip))


def _case(upper: bool) -> Callable[[KernelContext], Callable[[bytes], bytes]]:
    def one(ctx: KernelContext) -> Callable[[bytes], bytes]:
        if ctx.attr("encoding").lower().replace("-", "") == "utf8":
            return lambda s: (s.decode().upper() if upper else s.decode().lower()).encode()
        return bytes.upper if upper else bytes.lower  # ASCII letters only

    return one


register_kernel("StringUpper", devices=_CPU, aliasing=Aliasing.FRESH)(_elementwise(_case(True)))
register_kernel("StringLower", devices=_CPU, aliasing=Aliasing.FRESH)(_elementwise(_case(False)))


def _rewrite(rewrite: str) -> bytes:
    # RE2 writes the whole match as \0; Python's re spells it \g<0>
    return re.sub(r"\\0", r"\\g<0>", rewrite).encode()


@register_kernel("RegexReplace", devices=_CPU, aliasing=Aliasing.FRESH)
def _regex_replace(ctx: KernelContext) -> Compute:
    pattern = re.compile(ctx.attr("pattern").encode())
    rewrite = _rewrite(ctx.attr("rewrite"))
    count = 0 if ctx.attr("replace_global") else 1
    return lambda x: _map(lambda s: pattern.sub(rewrite, s, count=count), x)


@register_kernel("RegexFullMatch", devices=_CPU, aliasing=Aliasing.FRESH)
def _regex_full_match(ctx: KernelContext) -> Compute:
    pattern = re.compile(ctx.attr("pattern").encode())
    return lambda x: _map(lambda s: pattern.fullmatch(s) is not None, x, np.bool_)


@register_kernel("StringLength", devices=_CPU, aliasing=Aliasing.FRESH)
def _length(ctx: KernelContext) -> Compute:
    count: Callable[[bytes], int] = len if ctx.attr("unit") == "BYTE" else lambda s: len(s.decode())
    return lambda x: _map(count, x, np.int32)


_INT_TYPES = {np.dtype(np.int32): (-(2**31), 2**31 - 1), np.dtype(np.int64): (-(2**63), 2**63 - 1)}


@register_kernel("StringToNumber", devices=_CPU, aliasing=Aliasing.FRESH)
def _to_number(ctx: KernelContext) -> Compute:
    dt = np.dtype(ctx.attr("out_type"))

    def one(s: bytes) -> Any:
        text = s.decode(errors="replace").strip()
        try:
            if dt.kind == "f":
                return float(text)
            value = int(text, 10)
        except ValueError:
            raise ValueError(
                f"StringToNumberOp could not correctly convert string: {s!r} to {dt.name}"
            ) from None
        lo, hi = _INT_TYPES[dt]
        if not lo <= value <= hi:
            raise ValueError(f"StringToNumberOp: {s!r} is out of the range of {dt.name}")
        return value

    return lambda x: _map(one, x, dt)


@register_kernel("AsString", devices=_CPU, aliasing=Aliasing.FRESH)
def _as_string(ctx: KernelContext) -> Compute:
    spec = ctx.attr("format")
    convert: dict[str, Callable[[Any], Any]] = {"b": lambda v: "true" if v else "false", "f": float}

    def compute(x: Any) -> Any:
        arr = np.asarray(x)
        as_arg = convert.get(arr.dtype.kind, int)
        return _map(lambda v: (spec % as_arg(v)).encode(), arr)

    return compute


@register_kernel("Substr", devices=_CPU, aliasing=Aliasing.FRESH)
def _substr(ctx: KernelContext) -> Compute:
    chars = ctx.attr("unit") == "UTF8_CHAR"

    def one(s: bytes, pos: int, n: int) -> bytes:
        text: Any = s.decode() if chars else s
        size = len(text)
        if pos > size or pos < -size:
            raise ValueError(f"Substr: pos {pos} is out of range for {s!r} of length {size}")
        if n < 0:
            raise ValueError(f"Substr: len {n} is negative")
        start = pos if pos >= 0 else size + pos
        piece = text[start : start + n]
        return piece.encode() if chars else piece

    def compute(x: Any, pos: Any, n: Any) -> Any:
        xs, ps, ns = np.broadcast_arrays(np.asarray(x, dtype=object), np.asarray(pos), np.asarray(n))
        strs: Any = xs
        out = np.empty(xs.shape, dtype=object)
        for idx in np.ndindex(xs.shape):
            out[idx] = one(strs[idx], int(ps[idx]), int(ns[idx]))
        return _scalar(out)

    return compute


@register_kernel("StringJoin", devices=_CPU, aliasing=Aliasing.FRESH)
def _join(ctx: KernelContext) -> Compute:
    sep = ctx.attr("separator").encode()

    def compute(*xs: Any) -> Any:
        parts = np.broadcast_arrays(*[np.asarray(x, dtype=object) for x in xs])
        out = np.empty(parts[0].shape, dtype=object)
        for idx in np.ndindex(out.shape):
            out[idx] = sep.join(p[idx] for p in parts)
        return _scalar(out)

    return compute


@register_kernel("ReduceJoin", devices=_CPU, aliasing=Aliasing.FRESH)
def _reduce_join(ctx: KernelContext) -> Compute:
    axes, keep = ctx.attr("axes"), ctx.attr("keep_dims")
    sep = ctx.attr("separator").encode()

    def compute(x: Any) -> Any:
        arr = np.asarray(x, dtype=object)
        kept = [i for i in range(arr.ndim) if i not in axes]
        moved = arr.transpose(kept + list(axes))
        rows = moved.reshape(*moved.shape[: len(kept)], -1)
        out = np.empty(rows.shape[:-1], dtype=object)
        for idx in np.ndindex(out.shape):
            out[idx] = sep.join(rows[idx])
        if keep:
            out = out.reshape([1 if i in axes else d for i, d in enumerate(arr.shape)])
        return _scalar(out)

    return compute


def _to_sparse(tokens: list[list[bytes]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    indices = [(i, j) for i, row in enumerate(tokens) for j in range(len(row))]
    values = np.empty(len(indices), dtype=object)
    values[:] = [t for row in tokens for t in row]
    width = max((len(row) for row in tokens), default=0)
    return (
        np.asarray(indices, dtype=np.int64).reshape(-1, 2),
        values,
        np.asarray([len(tokens), width], dtype=np.int64),
    )


@register_kernel("StringSplit", devices=_CPU, aliasing=Aliasing.FRESH)
def _string_split(ctx: KernelContext) -> Compute:
    delimiter = ctx.attr("delimiter").encode()
    skip_empty = ctx.attr("skip_empty")
    # every byte of the delimiter separates tokens; an empty delimiter splits into single bytes
    splitter = re.compile(b"[" + re.escape(delimiter) + b"]") if delimiter else None

    def one(s: bytes) -> list[bytes]:
        if not s:
            return []  # an empty string has no tokens, even when empty tokens are kept
        parts = [s[i : i + 1] for i in range(len(s))] if splitter is None else splitter.split(s)
        return [p for p in parts if p] if skip_empty else parts

    return lambda x: _to_sparse([one(s) for s in np.asarray(x, dtype=object).reshape(-1)])


@register_kernel("StringSplitV2", devices=_CPU, aliasing=Aliasing.FRESH)
def _string_split_v2(ctx: KernelContext) -> Compute:
    sep = ctx.attr("sep").encode() or None
    maxsplit = ctx.attr("maxsplit")

    def one(s: bytes) -> list[bytes]:
        if sep is not None:
            return s.split(sep, maxsplit) if s else [b""]
        return _whitespace_split(s, maxsplit)

    return lambda x: _to_sparse([one(s) for s in np.asarray(x, dtype=object).reshape(-1)])


_SPACE = re.compile(rb"\s")


def _whitespace_split(s: bytes, maxsplit: int) -> list[bytes]:
    """Tokens between runs of ASCII whitespace, as TF's StringSplitV2 without a separator: once
    ``maxsplit`` tokens are taken, the rest (even empty) is one more token."""
    tokens: list[bytes] = []
    rest = s.lstrip()
    while rest and (maxsplit < 0 or len(tokens) < maxsplit):
        m = _SPACE.search(rest)
        end = m.start() if m else len(rest)
        tokens.append(rest[:end])
        rest = rest[end:].lstrip()
    if 0 <= maxsplit == len(tokens):
        tokens.append(rest)
    return tokens
