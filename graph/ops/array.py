"""Shape and array ops: shape, size, reshape, transpose, concat, stack, fill, zeros/ones(_like),
gather, where, broadcast."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import not_differentiable, register_gradient
from ..op_builder import convert_to_tensor, graph_of, holds_tensors, make_op
from ..registry import register_op
from ..static_value import partial_shape, static_ints


@register_op("Shape")
def _shape_shape(op: Operation) -> list:
    x = op.inputs[0]
    return [(op.attrs["out_type"], (None,) if x._shape is None else (len(x._shape),))]


def shape(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:
    x = convert_to_tensor(input)
    return make_op("Shape", [x], {"out_type": dtypes.as_dtype(out_type)}, name or "Shape").outputs[0]


def dims_of(t: Tensor) -> list[Any]:
    """Each dimension of ``t`` (of known rank): an int where known now, else a scalar tensor read
    from its shape at run time (composites that reshape an unknown batch)."""
    assert t._shape is not None
    dynamic = None if S.is_fully_defined(t._shape) else shape(t)
    return [d if d is not None else dynamic[i] for i, d in enumerate(t._shape)]  # type: ignore[index]


@register_op("Size")
def _size_shape(op: Operation) -> list:
    return [(dtypes.int32, ())]


def size(input: Any, name: str | None = None) -> Tensor:
    return make_op("Size", [convert_to_tensor(input)], None, name or "Size").outputs[0]


not_differentiable("Shape", "Size")


@register_op("Reshape")
def _reshape_shape(op: Operation) -> list:
    x = op.inputs[0]
    target = op.attrs["shape"]
    if len(op.inputs) == 2:
        # The target is a tensor (TF1's reshape(x, tf.shape(y)) or [tf.shape(x)[0], -1]): the
        # attribute holds what is known when the graph is built (an imported graph's: None, worked
        # out from the input now).
        return [(x.dtype, _reshaped(x, op.inputs[1]) if target is None else target)]
    n = S.num_elements(x._shape)
    unknown = [i for i, d in enumerate(target) if d == -1]
    if len(unknown) > 1:
        raise ValueError(f"shape {target} has more than one -1")
    known = int(np.prod([d for d in target if d != -1], dtype=np.int64))
    if n is not None:
        if unknown:
            if known == 0 or n % known:
                raise ValueError(
                    f"cannot reshape {x.name} of shape {S.format_shape(x._shape)} ({n} elements) to {target}"
                )
            target = tuple(n // known if d == -1 else d for d in target)
        elif known != n:
            raise ValueError(
                f"cannot reshape {x.name} of shape {S.format_shape(x._shape)} ({n} elements) to {target}"
            )
    return [(x.dtype, tuple(None if d == -1 else d for d in target))]


def reshape(tensor: Any, shape: Any, name: str | None = None) -> Tensor:
    """``tensor`` with the shape ``shape``: a list of ints (one may be -1), or, as TF1, an int
    tensor or a list mixing ints and scalar int tensors, whose values are read when the op runs."""
    x = convert_to_tensor(tensor)
    if holds_tensors(shape):
        return _reshape_to_tensor(x, shape, name)
    target = tuple(-1 if d is None else int(d) for d in shape)
    return make_op("Reshape", [x], {"shape": target}, name or "Reshape").outputs[0]


def _reshape_to_tensor(x: Tensor, shape: Any, name: str | None) -> Tensor:
    from .math import cast

    if isinstance(shape, Tensor):
        if shape.dtype not in (dtypes.int32, dtypes.int64) or (
            shape._shape is not None and len(shape._shape) != 1
        ):
            raise GraphError(f"reshape: the shape {shape.name} must be a vector of int32 or int64")
        target = shape
    else:
        dims = [
            cast(d, dtypes.int32) if isinstance(d, Tensor) else int(-1 if d is None else d) for d in shape
        ]
        target = stack([d if isinstance(d, Tensor) else convert_to_tensor(np.int32(d)) for d in dims])
    return make_op("Reshape", [x, target], {"shape": _reshaped(x, target)}, name or "Reshape").outputs[0]


def _reshaped(x: Tensor, target: Tensor) -> S.Shape:
    """The static shape of ``x`` reshaped to the tensor ``target``, as far as known now: its known
    entries, and a -1 among known ones worked out when ``x``'s size is known."""
    dims = partial_shape(target)
    if dims is None:
        return None
    n = S.num_elements(x._shape)
    if n is not None and None not in dims and dims.count(-1) <= 1:
        known = int(np.prod([int(d) for d in dims if d is not None and d != -1], dtype=np.int64))
        if (-1 not in dims and known != n) or (-1 in dims and (known == 0 or n % known)):
            raise ValueError(
                f"cannot reshape {x.name} of shape {S.format_shape(x._shape)} ({n} elements) to {list(dims)}"
            )
        return tuple(n // known if d == -1 else d for d in dims)
    return tuple(None if d is None or d < 0 else d for d in dims)


@register_gradient("Reshape")
def _reshape_grad(op: Operation, grad: Tensor) -> list:
    x = op.inputs[0]
    no_shape_grad = [None] * (len(op.inputs) - 1)
    if S.is_fully_defined(x._shape):
        return [reshape(grad, x._shape), *no_shape_grad]
    return [make_op("ReshapeLike", [grad, x], None, "ReshapeLike").outputs[0], *no_shape_grad]


@register_op("ReshapeLike")
def _reshape_like_shape(op: Operation) -> list:
    return [(op.inputs[0].dtype, op.inputs[1]._shape)]


@register_gradient("ReshapeLike")
def _reshape_like_grad(op: Operation, grad: Tensor) -> list:
    return [make_op("ReshapeLike", [grad, op.inputs[0]], None, "ReshapeLike").outputs[0], None]


@register_op("Transpose")
def _transpose_shape(op: Operation) -> list:
    x = op.inputs[0]
    perm = op.attrs["perm"]
    if x._shape is None:
        return [(x.dtype, None if perm is None else (None,) * len(perm))]
    if perm is None:
        return [(x.dtype, tuple(reversed(x._shape)))]
    if sorted(perm) != list(range(len(x._shape))):
        raise ValueError(f"perm {list(perm)} is not a permutation of the {len(x._shape)} axes of {x.name}")
    return [(x.dtype, tuple(x._shape[p] for p in perm))]


def transpose(a: Any, perm: Sequence[int] | None = None, name: str | None = None) -> Tensor:
    x = convert_to_tensor(a)
    perm = static_ints(perm, "transpose perm")
    attrs = {"perm": None if perm is None else tuple(int(p) for p in perm)}
    return make_op("Transpose", [x], attrs, name or "transpose").outputs[0]


@register_gradient("Transpose")
def _transpose_grad(op: Operation, grad: Tensor) -> list:
    perm = op.attrs["perm"]
    if perm is None:
        return [transpose(grad)]
    return [transpose(grad, [int(i) for i in np.argsort(perm)])]


@register_op("ConcatV2")
def _concat_shape(op: Operation) -> list:
    xs = op.inputs
    shapes = [t._shape for t in xs]
    if any(s is None for s in shapes):
        return [(xs[0].dtype, None)]
    known = [s for s in shapes if s is not None]
    nd = len(known[0])
    axis = S.normalize_axis(op.attrs["axis"], nd, xs[0].name)
    out = list(known[0])
    for t, shape in zip(xs[1:], known[1:]):
        if t.dtype != xs[0].dtype:
            raise ValueError(f"{t.name} is {t.dtype.name} but {xs[0].name} is {xs[0].dtype.name}")
        if len(shape) != nd:
            raise ValueError(
                f"ranks differ: {xs[0].name} {S.format_shape(known[0])}, {t.name} {S.format_shape(shape)}"
            )
        for i, (a, b) in enumerate(zip(out, shape)):
            if i == axis:
                out[i] = None if a is None or b is None else a + b
            elif a is not None and b is not None and a != b:
                raise ValueError(
                    f"dimension {i} differs: {S.format_shape(xs[0]._shape)} vs {S.format_shape(t._shape)}"
                )
            elif a is None:
                out[i] = b
    return [(xs[0].dtype, tuple(out))]


def concat(values: Sequence[Any], axis: int, name: str = "concat") -> Tensor:
    ts = [convert_to_tensor(v) for v in values]
    if len(ts) == 1:
        return ts[0]
    return make_op("ConcatV2", ts, {"axis": int(static_ints(axis, "concat axis"))}, name).outputs[0]


@register_gradient("ConcatV2")
def _concat_grad(op: Operation, grad: Tensor) -> list:
    return [
        make_op(
            "ConcatSlice", [grad, *list(op.inputs)], {"axis": op.attrs["axis"], "index": i}, "ConcatSlice"
        ).outputs[0]
        for i in range(len(op.inputs))
    ]


@register_op("ConcatSlice")
def _concat_slice_shape(op: Operation) -> list:
    part = op.inputs[1 + op.attrs["index"]]
    return [(op.inputs[0].dtype, part._shape)]


@register_gradient("ConcatSlice")
def _concat_slice_grad(op: Operation, grad: Tensor) -> list:
    parts = op.inputs[1:]
    index = op.attrs["index"]
    pieces = [grad if i == index else zeros_like(p) for i, p in enumerate(parts)]
    return [concat(pieces, op.attrs["axis"])] + [None] * len(parts)


@register_op("Pack")
def _pack_shape(op: Operation) -> list:
    xs = op.inputs
    shape = xs[0]._shape
    for t in xs[1:]:
        if t.dtype != xs[0].dtype:
            raise ValueError(f"{t.name} is {t.dtype.name} but {xs[0].name} is {xs[0].dtype.name}")
        if not S.compatible(shape, t._shape):
            raise ValueError(f"shapes differ: {S.format_shape(shape)} and {S.format_shape(t._shape)}")
        shape = S.merge(shape, t._shape)
    if shape is None:
        return [(xs[0].dtype, None)]
    axis = S.normalize_axis(op.attrs["axis"], len(shape) + 1, "the stacked result")
    out = list(shape)
    out.insert(axis, len(xs))
    return [(xs[0].dtype, tuple(out))]


def stack(values: Sequence[Any], axis: int = 0, name: str = "stack") -> Tensor:
    ts = [convert_to_tensor(v) for v in values]
    return make_op("Pack", ts, {"axis": int(axis)}, name).outputs[0]


@register_gradient("Pack")
def _pack_grad(op: Operation, grad: Tensor) -> list:
    return list(unstack_op(grad, len(op.inputs), op.attrs["axis"]))


@register_op("Unpack")
def _unpack_shape(op: Operation) -> list:
    x, num = op.inputs[0], op.attrs["num"]
    if x._shape is None:
        return [(x.dtype, None)] * num
    axis = S.normalize_axis(op.attrs["axis"], len(x._shape), x.name)
    if x._shape[axis] not in (None, num):
        raise ValueError(
            f"Unpack {op.name}: dimension {axis} of {x.name} {S.format_shape(x._shape)} is "
            f"{x._shape[axis]}, not num={num}"
        )
    return [(x.dtype, tuple(d for i, d in enumerate(x._shape) if i != axis))] * num


def unstack_op(x: Tensor, num: int, axis: int, name: str = "Unpack") -> list[Tensor]:
    """One Unpack op with ``num`` outputs, the slices of ``x`` along ``axis`` (as TF's)."""
    return list(make_op("Unpack", [x], {"axis": int(axis), "num": int(num)}, name).outputs)


@register_gradient("Unpack")
def _unpack_grad(op: Operation, *grads: Tensor) -> list:
    # One Pack of the slices' gradients (the missing ones arrive as zeros), as TF: no
    # input-sized array per slice and no sum of them.
    return [stack(list(grads), op.attrs["axis"])]


@register_op("Fill")
def _fill_shape(op: Operation) -> list:
    # attr "shape": the static shape (None where a dimension comes from the dims input at run time;
    # an imported graph's: None, worked out from the dims input now).
    shape = op.attrs["shape"]
    if shape is None and len(op.inputs) == 2:
        shape = partial_shape(op.inputs[1])
    return [(op.inputs[0].dtype, shape)]


def fill(dims: Any, value: Any, name: str | None = None) -> Tensor:
    """A tensor of shape ``dims`` filled with the scalar ``value``; ``dims`` may be a tensor or a
    list holding tensors (a shape known only at run time, e.g. ``[batch_size, 200]``)."""
    v = convert_to_tensor(value)
    if v._shape not in ((), None):
        raise ValueError(f"fill value {v.name} must be a scalar, got shape {S.format_shape(v._shape)}")
    if not holds_tensors(dims):
        return make_op("Fill", [v], {"shape": tuple(int(d) for d in dims)}, name or "Fill").outputs[0]
    d = convert_to_tensor(dims)
    if d.dtype.kind not in "iu" or d._shape is None or len(d._shape) != 1 or d._shape[0] is None:
        raise ValueError(f"fill dims {d.name} must be an integer vector of known length")
    static = partial_shape(d)  # what is known of it now: [batch_size, 200] is (?, 200)
    return make_op("Fill", [v, d], {"shape": static}, name or "Fill").outputs[0]


@register_gradient("Fill")
def _fill_grad(op: Operation, grad: Tensor) -> list:
    from .math import reduce_sum

    return [reduce_sum(grad), *([None] if len(op.inputs) > 1 else [])]


def zeros(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    from .constant import constant

    return fill(shape, constant(0, dtype=dtype), name=name or "zeros")


def ones(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    from .constant import constant

    return fill(shape, constant(1, dtype=dtype), name=name or "ones")


@register_op("ZerosLike")
def _zeros_like_shape(op: Operation) -> list:
    x = op.inputs[0]
    return [(op.attrs.get("dtype") or x.dtype, x._shape)]


register_op("OnesLike")(_zeros_like_shape)
not_differentiable("ZerosLike", "OnesLike")


def zeros_like(tensor: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    x = convert_to_tensor(tensor)
    attrs = {"dtype": dtypes.as_dtype(dtype) if dtype is not None else None}
    return make_op("ZerosLike", [x], attrs, name or "zeros_like").outputs[0]


def ones_like(tensor: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    x = convert_to_tensor(tensor)
    attrs = {"dtype": dtypes.as_dtype(dtype) if dtype is not None else None}
    return make_op("OnesLike", [x], attrs, name or "ones_like").outputs[0]


@register_op("BroadcastLike")
def _broadcast_like_shape(op: Operation) -> list:
    x, like = op.inputs
    return [(x.dtype, S.broadcast(x._shape, like._shape))]


def broadcast_like(x: Tensor, like: Tensor, name: str | None = None) -> Tensor:
    """``x`` broadcast to the shape of ``like`` (a no-op when already equal)."""
    if S.is_fully_defined(x._shape) and x._shape == like._shape:
        return x
    return make_op("BroadcastLike", [x, like], None, name or "BroadcastLike").outputs[0]


@register_gradient("BroadcastLike")
def _broadcast_like_grad(op: Operation, grad: Tensor) -> list:
    from .math import reduce_to

    return [reduce_to(grad, op.inputs[0]), None]


@register_op("GatherV2")
def _gather_shape(op: Operation) -> list:
    params, indices = op.inputs
    if indices.dtype.kind not in "iu":
        raise ValueError(f"indices {indices.name} must be integers, got {indices.dtype.name}")
    if params._shape is None or indices._shape is None:
        return [(params.dtype, None)]
    axis = S.normalize_axis(op.attrs["axis"], len(params._shape), params.name)
    out = params._shape[:axis] + indices._shape + params._shape[axis + 1 :]
    return [(params.dtype, out)]


def gather(params: Any, indices: Any, axis: int = 0, name: str | None = None) -> Tensor:
    p = convert_to_tensor(params)
    i = convert_to_tensor(indices)
    return make_op("GatherV2", [p, i], {"axis": int(axis)}, name or "GatherV2").outputs[0]


@register_gradient("GatherV2")
def _gather_grad(op: Operation, grad: Tensor) -> list:
    params, indices = op.inputs
    if op.attrs["axis"] == 0 and params._shape is not None and indices._shape is not None:
        return [_gather_slices(params, indices, grad), None]
    g = make_op("GatherGrad", [grad, indices, params], dict(op.attrs), "GatherGrad").outputs[0]
    return [g, None]


def _gather_slices(params: Tensor, indices: Tensor, grad: Tensor) -> Any:
    """The gradient of ``gather(params, indices)`` on axis 0: the incoming rows at the indices
    (an IndexedSlices, as TF), flattened to one row per index."""
    from ..indexed_slices import IndexedSlices
    from .constant import constant

    ps = params._shape
    if S.is_fully_defined(ps):
        # A constant: the shape costs no op reading the variable at run time.
        dense_shape = constant(np.asarray(ps, dtype=np.int32), name="dense_shape")
    else:
        dense_shape = shape(params)
    flat_indices = (
        indices if indices._shape is not None and len(indices._shape) == 1 else reshape(indices, [-1])
    )
    assert ps is not None and indices._shape is not None  # (checked by the caller)
    tail = ps[1:]
    if len(indices._shape) == 1:
        values = grad  # already one row per index
    elif all(d is not None for d in tail):
        values = reshape(grad, [-1, *tail])
    else:
        dims = shape(params)
        values = reshape(grad, [-1, *(d if d is not None else dims[i + 1] for i, d in enumerate(tail))])
    return IndexedSlices(values, flat_indices, dense_shape)


@register_op("GatherGrad")
def _gather_grad_shape(op: Operation) -> list:
    return [(op.inputs[0].dtype, op.inputs[2]._shape)]


@register_gradient("GatherGrad")
def _gather_grad_grad(op: Operation, grad: Tensor) -> list:
    return [gather(grad, op.inputs[1], axis=op.attrs["axis"]), None, None]


@register_op("Select")
def _select_shape(op: Operation) -> list:
    c, x, y = op.inputs
    if c.dtype != dtypes.bool_:
        raise ValueError(f"condition {c.name} must be bool, got {c.dtype.name}")
    if x.dtype != y.dtype:
        raise ValueError(f"branches differ in dtype: {x.name} {x.dtype.name}, {y.name} {y.dtype.name}")
    return [(x.dtype, S.broadcast_all([c._shape, x._shape, y._shape]))]


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """Elementwise choice (numpy broadcasting, as ``tf.where`` in TF2 / ``where_v2``); with the
    condition alone, the int64 [n, rank] coordinates of its true elements (graph/ops/masking.py)."""
    if x is None and y is None:
        from .masking import where_indices

        return where_indices(condition, name=name)
    if x is None or y is None:
        raise ValueError("where needs both x and y, or neither (for the coordinates of the true elements)")
    from ..op_builder import convert_pair

    c = convert_to_tensor(condition)
    xt, yt = convert_pair(x, y, name or "Select")
    return make_op("Select", [c, xt, yt], None, name or "Select").outputs[0]


@register_gradient("Select")
def _select_grad(op: Operation, grad: Tensor) -> list:
    from .math import reduce_to

    c, x, y = op.inputs
    z = zeros_like(grad)
    return [None, reduce_to(where(c, grad, z), x), reduce_to(where(c, z, grad), y)]


@register_op("ExpandDims")
def _expand_dims_shape(op: Operation) -> list:
    x = op.inputs[0]
    if x._shape is None:
        return [(x.dtype, None)]
    axis = S.normalize_axis(op.attrs["axis"], len(x._shape) + 1, x.name)
    out = list(x._shape)
    out.insert(axis, 1)
    return [(x.dtype, tuple(out))]


def expand_dims(input: Any, axis: int, name: str | None = None) -> Tensor:
    return make_op(
        "ExpandDims",
        [convert_to_tensor(input)],
        {"axis": int(static_ints(axis, "expand_dims axis"))},
        name or "ExpandDims",
    ).outputs[0]


@register_gradient("ExpandDims")
def _expand_dims_grad(op: Operation, grad: Tensor) -> list:
    return [make_op("ReshapeLike", [grad, op.inputs[0]], None, "ReshapeLike").outputs[0]]


@register_op("OneHot")
def _one_hot_shape(op: Operation) -> list:
    idx = op.inputs[0]
    shape = None if idx._shape is None else (*idx._shape, op.attrs["depth"])
    return [(op.attrs["dtype"], shape)]


def one_hot(indices: Any, depth: int, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    i = convert_to_tensor(indices)
    attrs = {"depth": int(depth), "dtype": dtypes.as_dtype(dtype)}
    return make_op("OneHot", [i], attrs, name or "one_hot").outputs[0]


not_differentiable("OneHot")

__all__ = [
    "broadcast_like",
    "concat",
    "expand_dims",
    "fill",
    "gather",
    "graph_of",
    "one_hot",
    "ones",
    "ones_like",
    "reshape",
    "shape",
    "size",
    "stack",
    "transpose",
    "where",
    "zeros",
    "zeros_like",
]
