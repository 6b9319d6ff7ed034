"""Reductions: reduce_sum / mean / max / min / prod, argmax; shape and gradient rules."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes
from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import not_differentiable, register_gradient
from ..legacy_args import resolve
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from ..static_value import static_ints
from .math import cast, equal, not_equal


def _reduce_shape(op: Operation) -> list:
    x = op.inputs[0]
    axes, keep = op.attrs["axis"], op.attrs["keepdims"]
    if x._shape is None:
        return [(x.dtype, None)]
    nd = len(x._shape)
    ax = range(nd) if axes is None else {S.normalize_axis(a, nd, x.name) for a in axes}
    if keep:
        shape = tuple(1 if i in ax else d for i, d in enumerate(x._shape))
    else:
        shape = tuple(d for i, d in enumerate(x._shape) if i not in ax)
    return [(x.dtype, shape)]


for _t in ("Sum", "Mean", "Max", "Min", "Prod"):
    register_op(_t)(_reduce_shape)


def _axes(axis: Any) -> tuple[int, ...] | None:
    if axis is None:
        return None
    axis = static_ints(axis, "reduction axis")
    if isinstance(axis, (int, np.integer)):
        return (int(axis),)
    return tuple(int(a) for a in axis)


def _legacy(
    axis: Any, keepdims: bool | None, reduction_indices: Any, keep_dims: bool | None
) -> tuple[Any, bool]:
    return (
        resolve(axis, reduction_indices, "axis", "reduction_indices"),
        bool(resolve(keepdims, keep_dims, "keepdims", "keep_dims", default=False)),
    )


def _reduce(op_type: str, x: Any, axis: Any, keepdims: bool, name: str | None) -> Tensor:
    xt = convert_to_tensor(x)
    attrs = {"axis": _axes(axis), "keepdims": bool(keepdims)}
    return make_op(op_type, [xt], attrs, name or op_type).outputs[0]


def reduce_sum(
    x: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    return _reduce("Sum", x, *_legacy(axis, keepdims, reduction_indices, keep_dims), name)


def reduce_mean(
    x: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    return _reduce("Mean", x, *_legacy(axis, keepdims, reduction_indices, keep_dims), name)


def reduce_max(
    x: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    return _reduce("Max", x, *_legacy(axis, keepdims, reduction_indices, keep_dims), name)


def reduce_min(
    x: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    return _reduce("Min", x, *_legacy(axis, keepdims, reduction_indices, keep_dims), name)


def reduce_prod(
    x: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    return _reduce("Prod", x, *_legacy(axis, keepdims, reduction_indices, keep_dims), name)


def _expand_reduced(grad: Tensor, op: Operation) -> Tensor:
    """Broadcast the gradient of a reduction back to the input's shape."""
    from .array import broadcast_like, reshape

    x = op.inputs[0]
    if not op.attrs["keepdims"] and x._shape is None and op.attrs["axis"] is not None:
        # Unknown rank: only the kernel can tell where the reduced axes go back in.
        grad = make_op("ExpandReduced", [grad, x], {"axis": op.attrs["axis"]}, "ExpandReduced").outputs[0]
    elif not op.attrs["keepdims"] and x._shape is not None:
        nd = len(x._shape)
        axes = (
            range(nd)
            if op.attrs["axis"] is None
            else {S.normalize_axis(a, nd, x.name) for a in op.attrs["axis"]}
        )
        kept = tuple(1 if i in axes else (-1 if d is None else d) for i, d in enumerate(x._shape))
        if sum(1 for d in kept if d == -1) <= 1:
            grad = reshape(grad, kept)
        else:
            grad = make_op("ExpandReduced", [grad, x], {"axis": op.attrs["axis"]}, "ExpandReduced").outputs[0]
    return broadcast_like(grad, x)


@register_op("ExpandReduced")
def _expand_reduced_shape(op: Operation) -> list:
    return [(op.inputs[0].dtype, None)]


@register_gradient("ExpandReduced")
def _expand_reduced_grad(op: Operation, grad: Tensor) -> list:
    return [make_op("ReshapeLike", [grad, op.inputs[0]], None, "ReshapeLike").outputs[0], None]


@register_gradient("Sum")
def _sum_grad(op: Operation, grad: Tensor) -> list:
    return [_expand_reduced(grad, op)]


@register_gradient("Mean")
def _mean_grad(op: Operation, grad: Tensor) -> list:
    from .array import size
    from .constant import constant

    x, y = op.inputs[0], op.outputs[0]
    n_in, n_out = S.num_elements(x._shape), S.num_elements(y._shape)
    if n_in is not None and n_out is not None:
        # Shapes known when building (TF1's rule too): the count is a constant, not four ops a
        # step, and the forward value is not read for its size.
        count = constant(np.asarray(n_in // max(n_out, 1), dtype=x.dtype), name="count")
    else:
        count = cast(size(x), x.dtype) / cast(size(y), x.dtype)
    return [_expand_reduced(grad / count, op)]


def _minmax_grad(op: Operation, grad: Tensor) -> list:
    from .array import broadcast_like

    x = op.inputs[0]
    y = _expand_reduced(op.outputs[0], op)
    mask = cast(equal(x, y), x.dtype)
    counts = broadcast_like(_reduce("Sum", mask, op.attrs["axis"], True, None), x)
    return [_expand_reduced(grad, op) * mask / counts]


register_gradient("Max")(_minmax_grad)
register_gradient("Min")(_minmax_grad)


@register_gradient("Prod")
def _prod_grad(op: Operation, grad: Tensor) -> list:
    # d/dx_i = product of the other elements, built without dividing by a zero x_i: with no zero in
    # the group it is prod/x_i; with one zero, only that element gets the product of the rest.
    from .array import ones_like, where, zeros_like

    x = op.inputs[0]
    axis = op.attrs["axis"]
    nonzero = not_equal(x, 0)
    safe = where(nonzero, x, ones_like(x))
    prod_nonzero = _reduce("Prod", safe, axis, True, None)
    zero_count = _reduce("Sum", cast(equal(x, 0), x.dtype), axis, True, None)
    zeros = zeros_like(x)
    others = where(
        nonzero,
        where(equal(zero_count, 0), prod_nonzero / safe, zeros),
        where(equal(zero_count, 1), prod_nonzero, zeros),
    )
    return [_expand_reduced(grad, op) * others]


@register_op("ArgMax")
def _argmax_shape(op: Operation) -> list:
    x = op.inputs[0]
    if x._shape is None:
        return [(op.attrs["output_type"], None)]
    a = S.normalize_axis(op.attrs["axis"], len(x._shape), x.name)
    return [(op.attrs["output_type"], tuple(d for i, d in enumerate(x._shape) if i != a))]


def argmax(
    input: Any,
    axis: int | None = None,
    name: str | None = None,
    dimension: int | None = None,
    output_type: Any = dtypes.int64,
) -> Tensor:
    axis = resolve(axis, dimension, "axis", "dimension")
    xt = convert_to_tensor(input)
    attrs = {"axis": 0 if axis is None else int(axis), "output_type": dtypes.as_dtype(output_type)}
    return make_op("ArgMax", [xt], attrs, name or "ArgMax").outputs[0]


not_differentiable("ArgMax")
