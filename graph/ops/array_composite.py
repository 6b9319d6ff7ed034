"""Array functions of TF1 built from registered ops (Reshape, StridedSlice, Unpack, ConcatV2,
OneHot, Const): squeeze, unstack, split, slice, tile, pad, one_hot with on/off values and axis,
range, linspace, eye, sequence_mask. Their gradients are the parts' gradients.

Reshape and the slicing ops take static attributes, so these functions need the shapes they
cut or repeat along to be known when the graph is built; they say so when one is not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from .. import shapes as S
from ..core import Tensor, get_default_graph
from ..legacy_args import resolve
from ..op_builder import _is_symbolic, convert_to_tensor, make_op
from . import squeeze_op as _squeeze_op  # noqa: F401 - registers the Squeeze op
from .array import concat, expand_dims, fill, reshape, transpose, unstack_op
from .array import one_hot as _one_hot
from .constant import constant
from .math import cast, less
from .range_ops import linspace_op, range_op
from .slicing import strided_slice

__all__ = [
    "eye",
    "linspace",
    "one_hot",
    "pad",
    "range",
    "sequence_mask",
    "slice",
    "split",
    "squeeze",
    "tile",
    "unstack",
]

_builtin_range = range
_builtin_slice = slice


def _known(x: Tensor, what: str) -> tuple[int | None, ...]:
    if x._shape is None:
        raise GraphError(f"{what} needs {x.name} to have a known rank")
    return x._shape


def _static_dim(x: Tensor, axis: int, what: str) -> int:
    shape = _known(x, what)
    d = shape[S.normalize_axis(axis, len(shape), x.name)]
    if d is None:
        raise GraphError(f"{what} needs dimension {axis} of {x.name} (shape {x.shape}) to be known")
    return int(d)


def squeeze(input: Any, axis: Any = None, name: str | None = None, squeeze_dims: Any = None) -> Tensor:
    """Remove dimensions of size 1 (all of them, or those in ``axis``)."""
    x = convert_to_tensor(input)
    ax = resolve(axis, squeeze_dims, "axis", "squeeze_dims")
    if x._shape is None:  # unknown rank: which dimensions go is known only when it runs
        listed = [] if ax is None else [int(a) for a in ([ax] if isinstance(ax, int) else ax)]
        return make_op("Squeeze", [x], {"squeeze_dims": listed}, name or "Squeeze").outputs[0]
    shape = _known(x, "squeeze")
    if ax is None:
        drop = {i for i, d in enumerate(shape) if d == 1}
        if any(d is None for d in shape):  # which dimensions are 1 is known only when it runs
            return make_op("Squeeze", [x], {"squeeze_dims": []}, name or "Squeeze").outputs[0]
    else:
        drop = {S.normalize_axis(a, len(shape), x.name) for a in ([ax] if isinstance(ax, int) else ax)}
        for i in drop:
            if shape[i] not in (1, None):
                raise GraphError(f"squeeze: dimension {i} of {x.name} has size {shape[i]}, not 1")
    kept = [d for i, d in enumerate(shape) if i not in drop]
    if sum(d is None for d in kept) > 1:
        return make_op("Squeeze", [x], {"squeeze_dims": sorted(drop)}, name or "Squeeze").outputs[0]
    return reshape(x, [-1 if d is None else d for d in kept], name=name or "Squeeze")


def unstack(value: Any, num: int | None = None, axis: int = 0, name: str = "unstack") -> list[Tensor]:
    """The slices of ``value`` along ``axis``, as a list."""
    x = convert_to_tensor(value)
    n = num if num is not None else _static_dim(x, axis, "unstack")
    return unstack_op(x, n, axis, name)


def _cut(x: Tensor, axis: int, start: int, stop: int) -> Tensor:
    nd = len(_known(x, "split"))
    a = S.normalize_axis(axis, nd, x.name)
    key = tuple([_builtin_slice(None)] * a + [_builtin_slice(start, stop)])
    return strided_slice(x, key)


def split(
    value: Any, num_or_size_splits: Any, axis: int = 0, num: int | None = None, name: str = "split"
) -> list[Tensor]:
    """Split along ``axis`` into equal parts (an int) or parts of the given sizes (one may be -1)."""
    x = convert_to_tensor(value)
    shape = _known(x, "split")
    axis = S.normalize_axis(axis, len(shape), x.name)
    if shape[axis] is None and isinstance(num_or_size_splits, (int, np.integer)):
        return _split_unknown(x, int(num_or_size_splits), axis, name)
    total = _static_dim(x, axis, "split")
    if isinstance(num_or_size_splits, (int, np.integer)):
        parts = int(num_or_size_splits)
        if parts <= 0 or total % parts:
            raise GraphError(
                f"split: dimension {axis} of {x.name} has size {total}, not divisible into {parts} parts"
            )
        sizes = [total // parts] * parts
    else:
        sizes = [int(s) for s in num_or_size_splits]
        if sizes.count(-1) > 1:
            raise GraphError("split: at most one size may be -1")
        if -1 in sizes:
            sizes[sizes.index(-1)] = total - sum(s for s in sizes if s != -1)
        if sum(sizes) != total or any(s < 0 for s in sizes):
            raise GraphError(
                f"split: sizes {list(num_or_size_splits)} do not add up to dimension {axis} ({total})"
            )
    out, start = [], 0
    with get_default_graph().name_scope(name):
        for s in sizes:
            out.append(_cut(x, axis, start, start + s))
            start += s
    return out


def _split_unknown(x: Tensor, parts: int, axis: int, name: str) -> list[Tensor]:
    """Equal parts of a dimension known only at run time, as TF's Split: the axis moved first,
    reshaped to ``[parts, -1, ...]`` and unstacked (a size not divisible by ``parts`` fails the
    reshape when the step runs). The other dimensions must be known."""
    shape = x._shape
    assert shape is not None
    if parts <= 0:
        raise GraphError(f"split: {parts} parts of {x.name}; give a positive number")
    rest = [d for i, d in enumerate(shape) if i != axis]
    if not S.is_fully_defined(tuple(rest)):
        raise GraphError(
            f"split of {x.name} (shape {x.shape}) into {parts} along unknown dimension {axis} needs "
            "the other dimensions known"
        )
    perm = [axis, *(i for i in _builtin_range(len(shape)) if i != axis)]
    with get_default_graph().name_scope(name):
        front = x if axis == 0 else transpose(x, perm)
        pieces = unstack(reshape(front, [parts, -1, *rest]), num=parts, axis=0)
        if axis == 0:
            return pieces
        back = [perm.index(i) for i in _builtin_range(len(shape))]
        return [transpose(piece, back) for piece in pieces]


def slice(input_: Any, begin: Sequence[int], size: Sequence[int], name: str | None = None) -> Tensor:
    """``input_[begin[i] : begin[i] + size[i]]`` on every axis (size -1: to the end)."""
    x = convert_to_tensor(input_)
    if _is_symbolic(begin) or _is_symbolic(size):
        raise GraphError("slice: begin and size must be Python ints (tensors are not supported)")
    key = tuple(
        _builtin_slice(int(b), None if int(s) == -1 else int(b) + int(s)) for b, s in zip(begin, size)
    )
    return strided_slice(x, key, name=name or "Slice")


def tile(input: Any, multiples: Sequence[int], name: str | None = None) -> Tensor:
    """Repeat ``input`` ``multiples[i]`` times along axis i."""
    x = convert_to_tensor(input)
    if _is_symbolic(multiples):
        raise GraphError("tile: multiples must be Python ints (tensors are not supported)")
    shape = _known(x, "tile")
    if len(multiples) != len(shape):
        raise GraphError(f"tile: {len(multiples)} multiples for {x.name} of rank {len(shape)}")
    with get_default_graph().name_scope(name or "Tile"):
        out = x
        for axis, m in enumerate(int(m) for m in multiples):
            if m < 0:
                raise GraphError(f"tile: multiple {m} is negative")
            if m != 1:
                out = concat([out] * m, axis) if m > 0 else _cut(out, axis, 0, 0)
        return out


def pad(
    tensor: Any, paddings: Any, mode: str = "CONSTANT", name: str | None = None, constant_values: Any = 0
) -> Tensor:
    """Pad with ``constant_values``: ``paddings[i] = [before, after]`` for axis i (CONSTANT mode)."""
    if mode.upper() != "CONSTANT":
        raise GraphError(f"pad mode {mode!r} is not supported; only CONSTANT")
    x = convert_to_tensor(tensor)
    pads = np.asarray(paddings, dtype=np.int64)
    shape = _known(x, "pad")
    if pads.shape != (len(shape), 2) or np.any(pads < 0):
        raise GraphError(
            f"pad: paddings must be non-negative [before, after] pairs, one per axis of {x.name}"
        )
    with get_default_graph().name_scope(name or "Pad"):
        value = constant(np.asarray(constant_values, dtype=x.dtype))
        out, current = x, list(shape)
        for axis, (before, after) in enumerate(pads.tolist()):
            if not before and not after:
                continue
            others = [d for i, d in enumerate(current) if i != axis]
            if any(d is None for d in others):
                raise GraphError(
                    f"pad: padding axis {axis} of {x.name} needs its other dimensions known, got {x.shape}"
                )
            parts = []
            for n in (before, after):
                block: list[Any] = list(current)  # known but the padded axis, which is n
                block[axis] = n
                parts.append(fill(block, value) if n else None)
            out = concat([p for p in (parts[0], out, parts[1]) if p is not None], axis)
            if current[axis] is not None:
                current[axis] += before + after
        return out


def one_hot(
    indices: Any,
    depth: int,
    on_value: Any = None,
    off_value: Any = None,
    axis: int | None = None,
    dtype: Any = None,
    name: str | None = None,
) -> Tensor:
    """One-hot rows of ``depth``; ``on_value`` / ``off_value`` default to 1 / 0; ``axis`` places the new axis."""
    if dtype is not None:
        dt = dtypes.as_dtype(dtype)
    elif on_value is not None:
        dt = _dtype_of(on_value)
    elif off_value is not None:
        dt = _dtype_of(off_value)
    else:
        dt = dtypes.float32
    with get_default_graph().name_scope(name or "one_hot"):
        out = _one_hot(indices, depth, dtype=dt)
        if on_value is not None or off_value is not None:
            on = convert_to_tensor(1 if on_value is None else on_value, dtype=dt)
            off = convert_to_tensor(0 if off_value is None else off_value, dtype=dt)
            out = out * (on - off) + off
        if axis is not None and axis != -1:
            nd = len(_known(out, "one_hot"))
            a = S.normalize_axis(axis, nd, out.name)
            perm = [*_builtin_range(a), nd - 1, *_builtin_range(a, nd - 1)]
            out = transpose(out, perm)
        return out


def _dtype_of(value: Any) -> np.dtype:
    """The dtype TF gives a value: a tensor's own; Python floats float32, Python ints int32."""
    if _is_symbolic(value):
        return convert_to_tensor(value).dtype
    if isinstance(value, bool):
        return dtypes.bool_
    if isinstance(value, int):
        return dtypes.int32
    if isinstance(value, float):
        return dtypes.float32
    return np.asarray(value).dtype


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None, name: str = "range") -> Tensor:
    """``[start, start + delta, ...)`` up to ``limit`` (Python numbers: the values are a constant)."""
    if limit is None:
        start, limit = 0, start
    if any(_is_symbolic(v) for v in (start, limit, delta)):
        return range_op(start, limit, delta, dtype, name)  # the values are known only at run time
    values = np.arange(start, limit, delta)
    dt = (
        dtypes.as_dtype(dtype)
        if dtype is not None
        else max((_dtype_of(v) for v in (start, limit, delta)), key=lambda d: (d.kind == "f", d.itemsize))
    )
    values = values.astype(dt)
    return constant(values, name=name)


def linspace(start: Any, stop: Any, num: int, name: str = "LinSpace") -> Tensor:
    if any(_is_symbolic(v) for v in (start, stop, num)):
        return linspace_op(start, stop, num, name)
    dt = _dtype_of(start) if _dtype_of(start).kind == "f" else dtypes.float32
    return constant(np.linspace(start, stop, int(num)).astype(dt), name=name)


def eye(
    num_rows: int,
    num_columns: int | None = None,
    batch_shape: Sequence[int] | None = None,
    dtype: Any = dtypes.float32,
    name: str = "eye",
) -> Tensor:
    m = np.eye(
        int(num_rows), int(num_columns) if num_columns is not None else None, dtype=dtypes.as_dtype(dtype)
    )
    if batch_shape:
        m = np.broadcast_to(m, (*batch_shape, *m.shape)).copy()
    return constant(m, name=name)


def sequence_mask(
    lengths: Any, maxlen: int | None = None, dtype: Any = dtypes.bool_, name: str | None = None
) -> Tensor:
    """``mask[..., j] = j < lengths[...]`` for j < maxlen."""
    with get_default_graph().name_scope(name or "SequenceMask"):
        if maxlen is None:
            if _is_symbolic(lengths):
                raise GraphError("sequence_mask needs maxlen when lengths is a tensor")
            maxlen = int(np.max(lengths)) if np.size(lengths) else 0
        lt = convert_to_tensor(lengths)
        positions = constant(np.arange(int(maxlen), dtype=lt.dtype))
        mask = less(positions, expand_dims(lt, -1))
        dt = dtypes.as_dtype(dtype)
        return mask if dt == dtypes.bool_ else cast(mask, dt)
