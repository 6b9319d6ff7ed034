"""Basic indexing of tensors (``t[1:3, None, 0]``) as a StridedSlice op."""

from __future__ import annotations

from typing import Any

from ..core import Operation, Tensor
from ..gradients import register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op


def _normalize_key(key: Any) -> tuple:
    if not isinstance(key, tuple):
        key = (key,)
    out: list[Any] = []
    for k in key:
        if isinstance(k, slice):
            out.append(("slice", k.start, k.stop, k.step))
        elif k is None:
            out.append(("newaxis",))
        elif k is Ellipsis:
            out.append(("ellipsis",))
        elif isinstance(k, int) or hasattr(k, "__index__"):
            out.append(("index", int(k)))
        else:
            raise TypeError(
                f"index {k!r} is not supported: use ints, slices, None or ...; for tensors use ac.gather"
            )
    return tuple(out)


def to_numpy_key(spec: tuple) -> tuple:
    key: list[Any] = []
    for item in spec:
        kind = item[0]
        if kind == "slice":
            key.append(slice(item[1], item[2], item[3]))
        elif kind == "newaxis":
            key.append(None)
        elif kind == "ellipsis":
            key.append(Ellipsis)
        else:
            key.append(item[1])
    return tuple(key)


@register_op("StridedSlice")
def _strided_slice_shape(op: Operation) -> list:
    x = op.inputs[0]
    if x._shape is None:
        return [(x.dtype, None)]
    return [(x.dtype, _sliced_shape(x, op.attrs["spec"]))]


def _sliced_shape(x: Tensor, spec: tuple) -> tuple:
    assert x._shape is not None  # the caller handles an unknown rank
    dims = list(x._shape)
    consuming = sum(1 for item in spec if item[0] in ("slice", "index"))
    if consuming > len(dims):
        raise ValueError(f"too many indices ({consuming}) for {x.name} of rank {len(dims)}")
    items = list(spec)
    if not any(item[0] == "ellipsis" for item in items):
        items.append(("ellipsis",))
    out: list[int | None] = []
    pos = 0
    for item in items:
        kind = item[0]
        if kind == "newaxis":
            out.append(1)
        elif kind == "ellipsis":
            n = len(dims) - consuming
            out.extend(dims[pos : pos + n])
            pos += n
        elif kind == "index":
            d = dims[pos]
            if d is not None and not -d <= item[1] < d:
                raise ValueError(
                    f"index {item[1]} is out of range for dimension {pos} of {x.name} (size {d})"
                )
            pos += 1
        else:
            d = dims[pos]
            out.append(None if d is None else len(range(*slice(item[1], item[2], item[3]).indices(d))))
            pos += 1
    return tuple(out)


def strided_slice(x: Any, key: Any, name: str = "strided_slice") -> Tensor:
    """``x[key]``: a StridedSlice of the key's spec, or, where an index or a slice bound is a
    tensor (``x[:, i]``, ``x[i : i + 2]``), TF's StridedSlice with tensor bounds."""
    xt = convert_to_tensor(x)
    items = key if isinstance(key, tuple) else (key,)
    if any(_symbolic_item(k) for k in items):
        return _dynamic_slice_of_key(xt, items, name)
    return make_op("StridedSlice", [xt], {"spec": _normalize_key(key)}, name).outputs[0]


def _symbolic_item(k: Any) -> bool:
    parts = (k.start, k.stop, k.step) if isinstance(k, slice) else (k,)
    return any(isinstance(p, Tensor) or hasattr(p, "_as_tensor") for p in parts)


def _dynamic_slice_of_key(x: Tensor, items: tuple, name: str) -> Tensor:
    from .dynamic_index import dynamic_strided_slice

    begin: list[Any] = []
    end: list[Any] = []
    strides: list[Any] = []
    masks = dict.fromkeys(("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"), 0)
    for i, k in enumerate(items):
        bit = 1 << i
        b, e, s = 0, 0, 1
        if k is Ellipsis:
            masks["ellipsis_mask"] |= bit
        elif k is None:
            masks["new_axis_mask"] |= bit
        elif isinstance(k, slice):
            s = 1 if k.step is None else k.step
            if k.start is None:
                masks["begin_mask"] |= bit
            else:
                b = k.start
            if k.stop is None:
                masks["end_mask"] |= bit
            else:
                e = k.stop
        else:
            b, e = k, k + 1
            masks["shrink_axis_mask"] |= bit
        begin.append(b)
        end.append(e)
        strides.append(s)
    return dynamic_strided_slice(x, _vector(begin), _vector(end), _vector(strides), masks, name)


def _vector(items: list[Any]) -> Tensor:
    from .. import dtypes
    from .array import stack
    from .math import cast

    if not any(isinstance(v, Tensor) or hasattr(v, "_as_tensor") for v in items):
        return convert_to_tensor(items, dtype=dtypes.int32)
    parts = [convert_to_tensor(v, dtype=None if hasattr(v, "dtype") else dtypes.int32) for v in items]
    return stack([p if p.dtype == dtypes.int32 else cast(p, dtypes.int32) for p in parts])


@register_gradient("StridedSlice")
def _strided_slice_grad(op: Operation, grad: Tensor) -> list:
    g = make_op("StridedSliceGrad", [grad, op.inputs[0]], dict(op.attrs), "StridedSliceGrad").outputs[0]
    return [g]


@register_op("StridedSliceGrad")
def _ssg_shape(op: Operation) -> list:
    return [(op.inputs[0].dtype, op.inputs[1]._shape)]


@register_gradient("StridedSliceGrad")
def _strided_slice_grad_grad(op: Operation, grad: Tensor) -> list:
    return [make_op("StridedSlice", [grad], dict(op.attrs), "StridedSlice").outputs[0], None]
