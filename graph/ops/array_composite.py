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
from ..op_builder import _is_symbolic, convert_to_tensor, holds_tensors, make_op
from ..static_value import static_ints
from . import squeeze_op as _squeeze_op  # noqa: F401 - registers the Squeeze op
from .array import expand_dims, reshape, transpose, unstack_op
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
    num_or_size_splits = static_ints(num_or_size_splits, "split sizes")
    axis = S.normalize_axis(int(static_ints(axis, "split axis")), len(shape), x.name)
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


def slice(input_: Any, begin: Any, size: Any, name: str | None = None) -> Tensor:
    """``input_[begin[i] : begin[i] + size[i]]`` on every axis (size -1: to the end); ``begin`` and
    ``size`` may be tensors or lists holding tensors (TF's Slice op then)."""
    x = convert_to_tensor(input_)
    if holds_tensors(begin) or holds_tensors(size):
        from .dynamic_index import slice_op

        return slice_op(x, begin, size, name)
    key = tuple(
        _builtin_slice(int(b), None if int(s) == -1 else int(b) + int(s)) for b, s in zip(begin, size)
    )
    return strided_slice(x, key, name=name or "Slice")


def tile(input: Any, multiples: Any, name: str | None = None) -> Tensor:
    """Repeat ``input`` ``multiples[i]`` times along axis i (TF's Tile; multiples may be a tensor
    or a list holding tensors, ``[batch_size, 1]``)."""
    from .dynamic_index import tile_op

    x = convert_to_tensor(input)
    if not holds_tensors(multiples):
        shape = _known(x, "tile")
        if len(multiples) != len(shape):
            raise GraphError(f"tile: {len(multiples)} multiples for {x.name} of rank {len(shape)}")
        if any(int(m) < 0 for m in multiples):
            raise GraphError(f"tile: multiples {list(multiples)} must be non-negative")
    return tile_op(x, multiples, name)


def pad(
    tensor: Any, paddings: Any, mode: str = "CONSTANT", name: str | None = None, constant_values: Any = 0
) -> Tensor:
    """Pad with ``constant_values``: ``paddings[i] = [before, after]`` for axis i (CONSTANT mode);
    ``paddings`` may be a tensor or nested lists holding tensors (TF's Pad / PadV2 op)."""
    from .dynamic_index import pad_op

    if mode.upper() != "CONSTANT":
        raise GraphError(f"pad mode {mode!r} is not supported; only CONSTANT")
    x = convert_to_tensor(tensor)
    if not holds_tensors(paddings):
        pads = np.asarray(paddings, dtype=np.int64)
        shape = _known(x, "pad")
        if pads.shape != (len(shape), 2) or np.any(pads < 0):
            raise GraphError(
                f"pad: paddings must be non-negative [before, after] pairs, one per axis of {x.name}"
            )
        paddings = pads.astype(np.int32)
    elif isinstance(paddings, (list, tuple)):
        from .array import stack

        paddings = stack(
            [stack(list(row)) if holds_tensors(row) else np.asarray(row, np.int32) for row in paddings]
        )
    return pad_op(x, paddings, constant_values, name)


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
        out = (
            _one_hot_of_tensor_depth(indices, depth, dt)
            if _is_symbolic(depth)
            else _one_hot(indices, depth, dtype=dt)
        )
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


def _one_hot_of_tensor_depth(indices: Any, depth: Any, dt: Any) -> Tensor:
    """One-hot rows whose depth is known only at run time (``depth`` a scalar tensor, as TF takes it)."""
    from .math import equal

    i = convert_to_tensor(indices)
    classes = range_op(0, cast(convert_to_tensor(depth), i.dtype), 1, i.dtype, "range")
    return cast(equal(expand_dims(i, -1), classes), dt)


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
    if holds_tensors(num_rows) or holds_tensors(num_columns) or holds_tensors(batch_shape):
        return _eye_of_tensors(num_rows, num_columns, batch_shape, dtype, name)
    m = np.eye(
        int(num_rows), int(num_columns) if num_columns is not None else None, dtype=dtypes.as_dtype(dtype)
    )
    if batch_shape:
        m = np.broadcast_to(m, (*batch_shape, *m.shape)).copy()
    return constant(m, name=name)


def _eye_of_tensors(rows: Any, columns: Any, batch_shape: Any, dtype: Any, name: str) -> Tensor:
    """An identity of a size known at run time: row index == column index, cast to ``dtype``."""
    from .math import equal

    with get_default_graph().name_scope(name):
        r = convert_to_tensor(rows, dtype=dtypes.int32)
        c = r if columns is None else convert_to_tensor(columns, dtype=dtypes.int32)
        rows_at, columns_at = (range_op(0, n, 1, dtypes.int32, "range") for n in (r, c))
        m = cast(equal(expand_dims(rows_at, 1), expand_dims(columns_at, 0)), dtypes.as_dtype(dtype))
        if batch_shape is not None and len(batch_shape):
            m = tile(reshape(m, [*([1] * len(batch_shape)), r, c]), [*batch_shape, 1, 1])
        return m


def sequence_mask(
    lengths: Any, maxlen: Any = None, dtype: Any = dtypes.bool_, name: str | None = None
) -> Tensor:
    """``mask[..., j] = j < lengths[...]`` for j < maxlen."""
    with get_default_graph().name_scope(name or "SequenceMask"):
        lt = convert_to_tensor(lengths)
        if maxlen is None and _is_symbolic(lengths):
            from .reduction import reduce_max

            maxlen = reduce_max(lt)  # as TF: the longest length, computed at run time
        if maxlen is None:
            maxlen = int(np.max(lengths)) if np.size(lengths) else 0
        if _is_symbolic(maxlen):
            positions = range_op(0, cast(convert_to_tensor(maxlen), lt.dtype), 1, lt.dtype, "Range")
        else:
            positions = constant(np.arange(int(maxlen), dtype=lt.dtype))
        mask = less(positions, expand_dims(lt, -1))
        dt = dtypes.as_dtype(dtype)
        return mask if dt == dtypes.bool_ else cast(mask, dt)
