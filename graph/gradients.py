"""The gradient registry and ``ac.gradients`` (reverse-mode, building graph ops).

A rule ``fn(op, *grads) -> sequence`` receives the forward Operation and one gradient Tensor per
output of ``op`` and returns exactly one entry per input of ``op``: a Tensor, an IndexedSlices (a
sparse gradient: the gather's), or None when that input gets no gradient. A rule receives an
IndexedSlices only when registered with ``passes_slices=True`` (it forwards it unchanged, as
ReadVariable's and Identity's); every other rule gets it made dense. Gradients of one tensor are
summed by AddN, or, when all are IndexedSlices, by concatenating their values and indices (as TF). ``not_differentiable(op_type)`` registers None for the whole op (its
inputs get no gradient); an op type with no entry at all is an error when a gradient must flow
through it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from antcolony.errors import GraphError

from .core import Operation, Tensor
from .indexed_slices import IndexedSlices
from .op_builder import convert_to_tensor, graph_of

GradFn = Callable[..., Sequence["Tensor | IndexedSlices | None"]]

GRADIENTS: dict[str, GradFn | None] = {}
# op types whose rule receives IndexedSlices gradients as they are
PASSES_SLICES: set[str] = set()


def register_gradient(op_type: str, passes_slices: bool = False) -> Callable[[GradFn], GradFn]:
    """Decorator: ``fn`` becomes the gradient rule of ``op_type``; ``passes_slices``: it takes
    IndexedSlices gradients without densifying them."""

    def deco(fn: GradFn) -> GradFn:
        if op_type in GRADIENTS:
            raise GraphError(f"gradient for op type {op_type!r} is registered twice")
        GRADIENTS[op_type] = fn
        if passes_slices:
            PASSES_SLICES.add(op_type)
        return fn

    return deco


def not_differentiable(*op_types: str) -> None:
    for t in op_types:
        if t in GRADIENTS:
            raise GraphError(f"gradient for op type {t!r} is registered twice")
        GRADIENTS[t] = None


def _differentiable(t: Tensor) -> bool:
    return t.dtype.kind in "fc" or t.op.op_def.ref_inputs != () or t.op.type == "VariableV2"


def _between(ys: list[Tensor], xs: list[Tensor]) -> tuple[list[Operation], set[int]]:
    """Ops on some path from an x to a y, in reverse creation (= reverse topological) order."""
    forward: set[int] = set()
    stack = [x.op for x in xs]
    while stack:
        op = stack.pop()
        if id(op) in forward:
            continue
        forward.add(id(op))
        for c in op._consumers:
            if any(t.op is op for t in c.inputs):
                stack.append(c)
    backward: set[int] = set()
    ordered: list[Operation] = []
    stack = [y.op for y in ys]
    while stack:
        op = stack.pop()
        if id(op) in backward:
            continue
        backward.add(id(op))
        if id(op) in forward:
            ordered.append(op)
        stack.extend(t.op for t in op.inputs)
    ordered.sort(key=lambda o: o._id, reverse=True)
    return ordered, {id(o) for o in ordered}


def gradients(
    ys: Any,
    xs: Any,
    grad_ys: Any = None,
    name: str = "gradients",
    stop_gradients: Any = None,
    colocate_gradients_with_ops: bool = False,
) -> list[Tensor | IndexedSlices | None]:
    """Symbolic d(sum ys)/d(x) for each x, as ``tf.gradients``; None where x does not affect ys;
    an IndexedSlices where x is only gathered from (an embedding table).
    ``colocate_gradients_with_ops``: each op's gradient ops are placed on that op's device (else
    they follow the device scope in force, as TF)."""
    from .ops.array import ones_like
    from .ops.math import add_n

    ys_l = [convert_to_tensor(y) for y in _as_list(ys)]
    xs_l = [_as_x(x) for x in _as_list(xs)]
    gys = _as_list(grad_ys) if grad_ys is not None else [None] * len(ys_l)
    if len(gys) != len(ys_l):
        raise GraphError(f"gradients: {len(gys)} grad_ys given for {len(ys_l)} ys")
    stops = {id(convert_to_tensor(s).op) for s in _as_list(stop_gradients or [])}
    g = graph_of(ys_l + xs_l)
    grads: dict[Tensor, list[Any]] = {}
    with g.as_default(), g.name_scope(name):
        for y, gy in zip(ys_l, gys):
            grads.setdefault(y, []).append(
                ones_like(y, name="grad_ys") if gy is None else convert_to_tensor(gy, y.dtype)
            )
        ordered, on_path = _between(ys_l, xs_l)
        x_ops = {id(x.op) for x in xs_l}
        index_concats: dict[tuple[int, ...], Tensor] = {}

        def visit(op: Operation) -> None:
            if id(op) in x_ops and not any(id(t.op) in on_path for t in op.inputs):
                return
            if id(op) in stops:
                return
            out_grads = [aggregate(grads.get(t), add_n, index_concats) for t in op.outputs]
            if all(gr is None for gr in out_grads):
                return
            with (
                g.device(op.device) if colocate_gradients_with_ops and op.device else contextlib.nullcontext()
            ):
                _backprop_op(op, out_grads, grads, on_path)

        # While loops are differentiated as units by backprop loops (graph/control_flow/grad_walk.py);
        # without loops this visits ``ordered`` in order.
        from .control_flow.grad_walk import backprop_walk

        backprop_walk(g, ordered, visit, grads, on_path, xs_l)
        return [aggregate(grads.get(x), add_n, index_concats) for x in xs_l]


def _backprop_op(
    op: Operation, out_grads: list[Any], grads: dict[Tensor, list[Any]], on_path: set[int]
) -> None:
    from .ops.array import zeros_like

    needs = [id(t.op) in on_path and _differentiable(t) for t in op.inputs]
    if not any(needs):
        return
    # gradient_override_map gives an op the gradient registered under another name (as TF).
    grad_type = op.attrs.get("_gradient_op_type", op.type)
    if grad_type not in GRADIENTS:
        raise GraphError(
            f"no gradient registered for op type {grad_type!r} (node '{op.name}'); register one with "
            "@register_gradient or mark it with not_differentiable"
        )
    rule = GRADIENTS[grad_type]
    if rule is None:
        return
    if grad_type not in PASSES_SLICES:
        out_grads = [densify(gr) for gr in out_grads]
    filled = [gr if gr is not None else zeros_like(t) for gr, t in zip(out_grads, op.outputs)]
    with op.graph.name_scope(op.name.rsplit("/", 1)[-1] + "_grad"):
        in_grads = list(rule(op, *filled))
    if len(in_grads) != len(op.inputs):
        raise GraphError(
            f"gradient rule for {op.type} returned {len(in_grads)} gradients for {len(op.inputs)} inputs "
            f"(node '{op.name}')"
        )
    for t, gr, need in zip(op.inputs, in_grads, needs):
        if gr is not None and need:
            grads.setdefault(t, []).append(gr)


def aggregate(
    items: list[Any] | None,
    add_n: Callable[..., Tensor],
    index_concats: dict[tuple[int, ...], Tensor] | None = None,
) -> Tensor | IndexedSlices | None:
    """The sum of one tensor's gradients: AddN (densifying slices) unless all are IndexedSlices,
    which are concatenated (no dense tensor; repeated indices add up where they are applied).
    A shared weight's per-use MatMul and BiasAddGrad gradients are summed as one op over stacked
    operands (graph/stacked_grads.py). ``index_concats`` (index tensors' ids -> their concat)
    lets tensors gathered at the same ids share one concat of the indices (nce_loss's weights
    and biases), within one ``gradients`` call."""
    if not items:
        return None
    if len(items) == 1:
        return items[0]
    if not all(isinstance(i, IndexedSlices) for i in items):
        from .stacked_grads import sum_stacked

        product, rest = sum_stacked(items)
        if product is None:
            return add_n(items)
        return product if not rest else add_n([product, *rest])
    from .ops.array import concat
    from .ops.math import cast

    index_dtypes = {i.indices.dtype for i in items}
    # TF casts mixed int32 / int64 indices to int64
    indices = [i.indices if len(index_dtypes) == 1 else cast(i.indices, "int64") for i in items]
    values = concat([i.values for i in items], 0)
    if index_concats is None:
        return IndexedSlices(values, concat(indices, 0), items[0].dense_shape)
    # The same ids in the same control-flow context and control dependencies: one concat. (The
    # keyed objects outlive the gradients() call that keeps the dict.)
    g = indices[0].graph
    scope = (id(g._control_flow_context), *(id(c) for c in g._control_stack))
    key = (*scope, -1, *(id(t) for t in indices))
    joined = index_concats.get(key)
    if joined is None:
        joined = index_concats[key] = concat(indices, 0)
    return IndexedSlices(values, joined, items[0].dense_shape)


def densify(grad: Any) -> Any:
    """A gradient as a Tensor (an IndexedSlices is made dense; None stays None)."""
    return grad._as_tensor() if isinstance(grad, IndexedSlices) else grad


def _as_list(v: Any) -> list[Any]:
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _as_x(x: Any) -> Tensor:
    if hasattr(x, "_ref"):
        return x._ref()
    return convert_to_tensor(x)
