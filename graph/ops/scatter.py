"""Scatter ops, as TF1: ``scatter_update/add/sub/mul/div/max/min`` on a variable's rows,
``scatter_nd_update/add/sub`` on its elements or slices, and the pure ``scatter_nd`` and
``gather_nd`` (each other's gradients).

The variable ops update the rows in place (the kernel copies first only while something else
holds the stored array), so their cost is the rows', not the variable's. Repeated indices
accumulate for add/sub/mul/div/max/min; for update one of them wins, as TF. The output is the
variable's value after the update.
"""

from __future__ import annotations

from typing import Any

from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import not_differentiable, register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from .state import _ref_of

__all__ = [
    "gather_nd",
    "scatter_add",
    "scatter_div",
    "scatter_max",
    "scatter_min",
    "scatter_mul",
    "scatter_nd",
    "scatter_nd_add",
    "scatter_nd_sub",
    "scatter_nd_update",
    "scatter_sub",
    "scatter_update",
]

SCATTER_OPS = (
    "ScatterUpdate",
    "ScatterAdd",
    "ScatterSub",
    "ScatterMul",
    "ScatterDiv",
    "ScatterMax",
    "ScatterMin",
)
SCATTER_ND_OPS = ("ScatterNdUpdate", "ScatterNdAdd", "ScatterNdSub")


def _scatter_shape(op: Operation) -> list:
    ref, indices, updates = op.inputs
    if indices.dtype.kind not in "iu":
        raise ValueError(f"indices {indices.name} must be integers, got {indices.dtype.name}")
    if updates.dtype != ref.dtype:
        raise ValueError(
            f"updates {updates.name} are {updates.dtype.name} but variable {ref.op.name} is {ref.dtype.name}"
        )
    rs, ix, up = ref._shape, indices._shape, updates._shape
    if rs is not None and ix is not None and up is not None and up != ():
        expected = (
            ix + rs[1:] if op.type in SCATTER_OPS else ix[:-1] + rs[ix[-1] :] if ix[-1] is not None else None
        )
        if expected is not None and not S.compatible(up, expected):
            raise ValueError(
                f"updates {updates.name} of shape {S.format_shape(up)} must have shape {S.format_shape(expected)} "
                f"for indices {indices.name} into variable {ref.op.name} of shape {S.format_shape(rs)}"
            )
    return [(ref.dtype, rs)]


for _t in SCATTER_OPS + SCATTER_ND_OPS:
    register_op(_t, stateful=True, ref_inputs=(0,))(_scatter_shape)
not_differentiable(*SCATTER_OPS, *SCATTER_ND_OPS)


def _scatter(
    op_type: str, ref: Any, indices: Any, updates: Any, use_locking: bool, name: str | None
) -> Tensor:
    r = _ref_of(ref)
    ix = convert_to_tensor(indices, graph=r.graph)
    up = (
        convert_to_tensor(updates, dtype=r.dtype, graph=r.graph)
        if not isinstance(updates, Tensor)
        else updates
    )
    return make_op(op_type, [r, ix, up], {"use_locking": use_locking}, name or op_type).outputs[0]


def scatter_update(
    ref: Any, indices: Any, updates: Any, use_locking: bool = True, name: str | None = None
) -> Tensor:
    """ref[indices] = updates (rows)."""
    return _scatter("ScatterUpdate", ref, indices, updates, use_locking, name)


def scatter_add(
    ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None
) -> Tensor:
    return _scatter("ScatterAdd", ref, indices, updates, use_locking, name)


def scatter_sub(
    ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None
) -> Tensor:
    return _scatter("ScatterSub", ref, indices, updates, use_locking, name)


def scatter_mul(
    ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None
) -> Tensor:
    return _scatter("ScatterMul", ref, indices, updates, use_locking, name)


def scatter_div(
    ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None
) -> Tensor:
    return _scatter("ScatterDiv", ref, indices, updates, use_locking, name)


def scatter_max(
    ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None
) -> Tensor:
    return _scatter("ScatterMax", ref, indices, updates, use_locking, name)


def scatter_min(
    ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None
) -> Tensor:
    return _scatter("ScatterMin", ref, indices, updates, use_locking, name)


def scatter_nd_update(
    ref: Any, indices: Any, updates: Any, use_locking: bool = True, name: str | None = None
) -> Tensor:
    """ref[indices[i]] = updates[i], each index a prefix (of length indices.shape[-1]) of ref's axes."""
    return _scatter("ScatterNdUpdate", ref, indices, updates, use_locking, name)


def scatter_nd_add(
    ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None
) -> Tensor:
    return _scatter("ScatterNdAdd", ref, indices, updates, use_locking, name)


def scatter_nd_sub(
    ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None
) -> Tensor:
    return _scatter("ScatterNdSub", ref, indices, updates, use_locking, name)


def _static_shape_value(t: Tensor) -> S.Shape:
    if t.op.type == "Const":
        return tuple(int(d) for d in t.op.attrs["value"].reshape(-1))
    n = t._shape[0] if t._shape else None
    return None if n is None else (None,) * n


@register_op("ScatterNd")
def _scatter_nd_shape(op: Operation) -> list:
    indices, updates, shape = op.inputs
    if indices.dtype.kind not in "iu":
        raise ValueError(f"indices {indices.name} must be integers, got {indices.dtype.name}")
    return [(updates.dtype, _static_shape_value(shape))]


def scatter_nd(indices: Any, updates: Any, shape: Any, name: str | None = None) -> Tensor:
    """A zero tensor of ``shape`` with ``updates`` added at ``indices`` (repeats add up)."""
    up = convert_to_tensor(updates)
    ix = convert_to_tensor(indices, graph=up.graph)
    sh = convert_to_tensor(shape, dtype=ix.dtype, graph=up.graph) if not isinstance(shape, Tensor) else shape
    return make_op("ScatterNd", [ix, up, sh], None, name or "ScatterNd").outputs[0]


@register_gradient("ScatterNd")
def _scatter_nd_grad(op: Operation, grad: Tensor) -> list:
    return [None, gather_nd(grad, op.inputs[0]), None]


@register_op("GatherNd")
def _gather_nd_shape(op: Operation) -> list:
    params, indices = op.inputs
    if indices.dtype.kind not in "iu":
        raise ValueError(f"indices {indices.name} must be integers, got {indices.dtype.name}")
    ps, ix = params._shape, indices._shape
    if ps is None or ix is None or ix[-1] is None:
        return [(params.dtype, None)]
    return [(params.dtype, ix[:-1] + ps[ix[-1] :])]


def gather_nd(params: Any, indices: Any, name: str | None = None, batch_dims: int = 0) -> Tensor:
    """out[i] = params[indices[i]], each index a prefix of params' axes."""
    if batch_dims:
        raise ValueError("gather_nd(batch_dims != 0) is not supported")
    p = convert_to_tensor(params)
    ix = convert_to_tensor(indices, graph=p.graph)
    return make_op("GatherNd", [p, ix], None, name or "GatherNd").outputs[0]


@register_gradient("GatherNd")
def _gather_nd_grad(op: Operation, grad: Tensor) -> list:
    from .array import shape

    params, indices = op.inputs
    if S.is_fully_defined(params._shape):
        dense: Any = list(params._shape)
    else:
        dense = shape(params, out_type=indices.dtype)
    return [scatter_nd(indices, grad, dense), None]
