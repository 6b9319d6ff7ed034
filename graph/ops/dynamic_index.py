"""Slicing, padding and tiling whose bounds are tensors, as TF1's ops take them: Slice (begin,
size), Pad / PadV2 (paddings [rank, 2], a constant value), Tile (multiples) and
DynamicStridedSlice (TF's StridedSlice with begin / end / strides inputs and its five bit masks;
antcolony's StridedSlice holds a key known when the graph is built). ``x[:, i]``, ``x[i:j]``,
``tf.slice(x, [0, i], [-1, 1])``, ``tf.pad(x, [[0, 0], [0, n - len]])`` and ``tf.tile(v, [batch,
1])`` build them. Static shapes take what is known of the bounds (graph/static_value.py).
Kernels: devices/kernels/dynamic_index.py.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes
from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import not_differentiable, register_gradient
from ..op_builder import _is_symbolic, convert_to_tensor, make_op
from ..registry import register_op
from ..static_value import partial_value

__all__ = ["MASKS", "dynamic_strided_slice", "pad_op", "slice_op", "strided_slice", "tile_op"]

MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _int_vector(value: Any, what: str) -> Tensor:
    t = convert_to_tensor(value, dtype=None if _is_symbolic(value) else dtypes.int32)
    if t.dtype.kind not in "iu":
        raise ValueError(f"{what} {t.name} must be integers, got {t.dtype.name}")
    return t


def _entries(t: Tensor, n: int) -> list[Any]:
    value = partial_value(t)
    return list(value) if isinstance(value, list) and len(value) == n else [None] * n


@register_op("Slice")
def _slice_shape(op: Operation) -> list:
    x = op.inputs[0]
    if x._shape is None:
        return [(x.dtype, None)]
    n = len(x._shape)
    begins, sizes = _entries(op.inputs[1], n), _entries(op.inputs[2], n)
    out = []
    for d, b, s in zip(x._shape, begins, sizes, strict=True):
        if s is not None and s != -1:
            out.append(s)
        else:
            out.append(d - b if s == -1 and d is not None and b is not None else None)
    return [(x.dtype, tuple(out))]


@register_op("Pad")
@register_op("PadV2")
def _pad_shape(op: Operation) -> list:
    x = op.inputs[0]
    if x._shape is None:
        return [(x.dtype, None)]
    pads = partial_value(op.inputs[1])
    rows = pads if isinstance(pads, list) and len(pads) == len(x._shape) else [None] * len(x._shape)
    out = []
    for d, row in zip(x._shape, rows, strict=True):
        known = d is not None and isinstance(row, list) and None not in row
        out.append(d + row[0] + row[1] if known else None)
    return [(x.dtype, tuple(out))]


@register_op("Tile")
def _tile_shape(op: Operation) -> list:
    x = op.inputs[0]
    if x._shape is None:
        return [(x.dtype, None)]
    multiples = _entries(op.inputs[1], len(x._shape))
    return [(x.dtype, tuple(None if d is None or m is None else d * m for d, m in zip(x._shape, multiples)))]


@register_op("DynamicStridedSlice")
def _dynamic_strided_slice_shape(op: Operation) -> list:
    x = op.inputs[0]
    if x._shape is None:
        return [(x.dtype, None)]
    n = op.inputs[1]._shape[0] if op.inputs[1]._shape else None
    if n is None:
        return [(x.dtype, None)]
    begin, end, strides = (_entries(op.inputs[i], n) for i in (1, 2, 3))
    return [(x.dtype, _dynamic_sliced_shape(x, op.attrs, begin, end, strides))]


def _dynamic_sliced_shape(x: Tensor, masks: dict, begin: list, end: list, strides: list) -> tuple:
    assert x._shape is not None
    dims, out, pos = list(x._shape), [], 0
    all_known = {k: None not in v for k, v in (("begin", begin), ("end", end), ("strides", strides))}
    consuming = sum(
        1 for i in range(len(begin)) if not (masks["new_axis_mask"] | masks["ellipsis_mask"]) >> i & 1
    )
    for i in range(len(begin)):
        bit = 1 << i
        if masks["ellipsis_mask"] & bit:
            span = len(dims) - consuming
            out.extend(dims[pos : pos + span])
            pos += span
        elif masks["new_axis_mask"] & bit:
            out.append(1)
        elif masks["shrink_axis_mask"] & bit:
            pos += 1
        else:
            start = None if masks["begin_mask"] & bit else begin[i]
            stop = None if masks["end_mask"] & bit else end[i]
            d = dims[pos] if pos < len(dims) else None
            # as TF: a bound vector not wholly known leaves every position it bounds unknown
            known = d is not None and all_known["strides"]
            known = known and bool(masks["begin_mask"] & bit or all_known["begin"])
            known = known and bool(masks["end_mask"] & bit or all_known["end"])
            out.append(len(range(*slice(start, stop, strides[i]).indices(d))) if known else None)  # type: ignore[arg-type]
            pos += 1
    return (*out, *dims[pos:])


@register_gradient("Slice")
def _slice_grad(op: Operation, grad: Tensor) -> list:
    g = make_op("SliceGrad", [grad, op.inputs[0], op.inputs[1]], None, "SliceGrad").outputs[0]
    return [g, None, None]


@register_op("SliceGrad")
@register_op("DynamicStridedSliceGrad")
def _like_input_shape(op: Operation) -> list:
    return [(op.inputs[0].dtype, op.inputs[1]._shape)]


@register_gradient("Pad")
@register_gradient("PadV2")
def _pad_grad(op: Operation, grad: Tensor) -> list:
    g = make_op("PadGrad", [grad, op.inputs[1]], None, "PadGrad").outputs[0]
    return [g, None] + ([None] if op.type == "PadV2" else [])


@register_op("PadGrad")
def _pad_grad_shape(op: Operation) -> list:
    return [(op.inputs[0].dtype, None if op.inputs[0]._shape is None else (None,) * len(op.inputs[0]._shape))]


@register_gradient("Tile")
def _tile_grad(op: Operation, grad: Tensor) -> list:
    return [make_op("TileGrad", [grad, op.inputs[0], op.inputs[1]], None, "TileGrad").outputs[0], None]


@register_op("TileGrad")
def _tile_grad_shape(op: Operation) -> list:
    return [(op.inputs[0].dtype, op.inputs[1]._shape)]


@register_gradient("DynamicStridedSlice")
def _dynamic_strided_slice_grad(op: Operation, grad: Tensor) -> list:
    inputs = [grad, op.inputs[0], *op.inputs[1:]]
    attrs = {k: op.attrs[k] for k in MASKS}
    g = make_op("DynamicStridedSliceGrad", inputs, attrs, "StridedSliceGrad").outputs[0]
    return [g, None, None, None]


# second derivatives: each is linear in its first input; their inputs' bounds are not differentiable
@register_gradient("SliceGrad")
def _slice_grad_grad(op: Operation, grad: Tensor) -> list:
    return [slice_op(grad, op.inputs[2], _shape_of(op.inputs[0]), "Slice"), None, None]


@register_gradient("PadGrad")
def _pad_grad_grad(op: Operation, grad: Tensor) -> list:
    return [pad_op(grad, op.inputs[1], None, "Pad"), None]


not_differentiable("TileGrad", "DynamicStridedSliceGrad")


def _shape_of(t: Tensor) -> Tensor:
    from .array import shape

    return shape(t)


def slice_op(x: Any, begin: Any, size: Any, name: str | None) -> Tensor:
    """TF's Slice: ``x[begin[i] : begin[i] + size[i]]`` on every axis, size -1 to the end."""
    xt = convert_to_tensor(x)
    b, s = _int_vector(begin, "slice begin"), _int_vector(size, "slice size")
    if b.dtype != s.dtype:
        from .math import cast

        b, s = cast(b, dtypes.int32), cast(s, dtypes.int32)
    return make_op("Slice", [xt, b, s], None, name or "Slice").outputs[0]


def pad_op(x: Any, paddings: Any, constant_values: Any, name: str | None) -> Tensor:
    """TF's Pad (PadV2 with a non-zero ``constant_values``): ``paddings[i] = [before, after]``."""
    xt = convert_to_tensor(x)
    p = _int_vector(paddings, "paddings")
    if p._shape is not None and (len(p._shape) != 2 or p._shape[1] not in (None, 2)):
        raise ValueError(f"paddings {p.name} must be [rank, 2], got shape {S.format_shape(p._shape)}")
    if constant_values is None or (not _is_symbolic(constant_values) and constant_values == 0):
        return make_op("Pad", [xt, p], None, name or "Pad").outputs[0]
    c = convert_to_tensor(constant_values, dtype=xt.dtype)
    return make_op("PadV2", [xt, p, c], None, name or "Pad").outputs[0]


def tile_op(x: Any, multiples: Any, name: str | None) -> Tensor:
    """TF's Tile: ``x`` repeated ``multiples[i]`` times along axis i."""
    xt = convert_to_tensor(x)
    return make_op("Tile", [xt, _int_vector(multiples, "tile multiples")], None, name or "Tile").outputs[0]


def dynamic_strided_slice(
    x: Any, begin: Any, end: Any, strides: Any, masks: dict[str, int], name: str | None
) -> Tensor:
    """TF's StridedSlice with tensor bounds (``masks``: its five bit masks)."""
    xt = convert_to_tensor(x)
    vectors = [_int_vector(v, what) for v, what in ((begin, "begin"), (end, "end"), (strides, "strides"))]
    if len({v.dtype for v in vectors}) > 1:
        from .math import cast

        vectors = [cast(v, dtypes.int32) for v in vectors]
    attrs = {k: int(masks.get(k, 0)) for k in MASKS}
    return make_op("DynamicStridedSlice", [xt, *vectors], attrs, name or "strided_slice").outputs[0]


def strided_slice(
    input_: Any,
    begin: Any,
    end: Any,
    strides: Any = None,
    begin_mask: int = 0,
    end_mask: int = 0,
    ellipsis_mask: int = 0,
    new_axis_mask: int = 0,
    shrink_axis_mask: int = 0,
    var: Any = None,
    name: str | None = None,
) -> Tensor:
    """TF1's ``tf.strided_slice``: bounds (tensors or lists, which may hold tensors) and bit masks
    as TF takes them; ``strides`` default to ones."""
    if strides is None:
        from .array import ones_like

        strides = ones_like(_int_vector(begin, "begin")) if _is_symbolic(begin) else [1] * len(begin)
    masks = {
        "begin_mask": begin_mask,
        "end_mask": end_mask,
        "ellipsis_mask": ellipsis_mask,
        "new_axis_mask": new_axis_mask,
        "shrink_axis_mask": shrink_axis_mask,
    }
    return dynamic_strided_slice(input_, begin, end, strides, masks, name)
