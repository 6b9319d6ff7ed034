"""``cond(pred, true_fn, false_fn)``: both branches built once, joined by Merge (TF1's cond)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from .. import shapes as S
from ..core import Operation, Tensor
from ..op_builder import convert_to_tensor, make_op
from ..ops.control import identity
from . import nest
from .context import CondContext, CondRecord, entered, state_of
from .ops import merge


def cond(
    pred: Any,
    true_fn: Callable[[], Any],
    false_fn: Callable[[], Any],
    name: str | None = None,
    *,
    strict: bool = False,
) -> Any:
    """``true_fn()`` if ``pred`` is true at run time, else ``false_fn()``, as ``tf.compat.v1.cond``.

    Both functions are called once, at build time, each inside its branch context: tensors from
    outside a branch reach it through a ``Switch(tensor, pred)``, ops without data inputs get a
    control input from the branch's pivot, so the untaken branch is dead at run time. The two
    results must have the same structure (Tensors, Operations, nested lists/tuples/dicts) and
    dtypes; each pair is joined with ``Merge([false, true])`` and the same structure is returned.
    As TF1, a one-element list or tuple result is unpacked unless ``strict=True``.
    """
    if isinstance(pred, (bool, np.bool_)):
        raise TypeError("cond: pred must be a bool Tensor, not a Python bool; use an if statement instead")
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("cond: true_fn and false_fn must be callables")
    p = convert_to_tensor(pred)
    if p.dtype != dtypes.bool_ or not S.compatible(p._shape, ()):
        raise GraphError(
            f"cond: pred {p.name} must be a bool scalar, got {p.dtype.name} of shape {S.format_shape(p._shape)}"
        )
    g = p.graph
    outer = g._control_flow_context
    outer_control = g._current_control_inputs()
    with g.name_scope(name or "cond"), g.control_dependencies(None):
        # Control dependencies around the cond go on pred_id: everything in both branches waits for it.
        pred_id = make_op("Identity", [p], None, "pred_id", control_inputs=outer_control).outputs[0]
        record = CondRecord(p, pred_id, outer)
        record.branches = [CondContext(g, outer, record, 0), CondContext(g, outer, record, 1)]
        pivot_switch = record.switch_for(pred_id)
        pivots = {}
        for branch, pivot_name in ((1, "switch_t"), (0, "switch_f")):
            with entered(g, record.branches[branch]):
                pivots[branch] = identity(pivot_switch.outputs[branch], name=pivot_name)
        record.pivots = [pivots[0], pivots[1]]
        res_t, flat_t = _build_branch(record.branches[1], true_fn)
        res_f, flat_f = _build_branch(record.branches[0], false_fn)
        nest.assert_same_structure(res_t, res_f, "cond: true_fn and false_fn return different structures")
        merged: list[Any] = []
        st = state_of(g)
        for i, (t, f) in enumerate(zip(flat_t, flat_f)):
            is_op = isinstance(t[1], Operation)
            if is_op != isinstance(f[1], Operation):
                raise GraphError(f"cond: result {i} is an Operation in one branch and a Tensor in the other")
            if t[0].dtype != f[0].dtype:
                raise GraphError(
                    f"cond: result {i} has dtype {t[0].dtype.name} in true_fn and {f[0].dtype.name} in false_fn"
                )
            out, _ = merge([f[0], t[0]], name="Merge", attrs={"_cond_pred": pred_id.name})
            st.merge_cond[out.op] = record
            merged.append(out.op if is_op else out)
    result = nest.pack_as(res_t, merged)
    if not strict and isinstance(result, (list, tuple)) and len(result) == 1:
        return result[0]
    return result


def _build_branch(ctx: CondContext, fn: Callable[[], Any]) -> tuple[Any, list[tuple[Tensor, Any]]]:
    """Call ``fn`` in ``ctx``; returns its result and, per leaf, (tensor to merge, original leaf)."""
    g = ctx.graph
    which = "true_fn" if ctx.branch else "false_fn"
    with entered(g, ctx):
        res = fn()
        if res is None:
            raise GraphError(f"cond: {which} returned None; both branches must return Tensors or Operations")
        flat: list[tuple[Tensor, Any]] = []
        for leaf in nest.flatten(res):
            if isinstance(leaf, Operation):
                # An op result becomes a bool tensor available once the op ran on the taken branch.
                with g.control_dependencies([leaf]):
                    t = identity(ctx.control_pivot(), name="op_done")
            else:
                if leaf is None:
                    raise GraphError(f"cond: {which} returned None inside its result")
                # "lambda: x" with x from outside: the result must still come through the branch's Switch.
                t = ctx.add_value(convert_to_tensor(leaf))
            flat.append((t, leaf))
    return res, flat
