"""``while_loop(cond, body, loop_vars)``: one frame of Enter / Merge / Switch / NextIteration / Exit
ops per loop variable, as TF1's while_loop builds it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from antcolony.errors import GraphError

from .. import dtypes
from .. import shapes as S
from ..core import Graph, Tensor
from ..op_builder import convert_to_tensor, graph_of, make_op
from ..ops.array import where
from ..ops.control import identity
from ..ops.math import add, less
from ..ops.tensor_array import TensorArray
from ..tensor_shape import TensorShape
from . import nest
from .context import WhileContext, entered, state_of
from .grad_state import register_loop_ops
from .ops import shape_at_most

_UNSET = object()
_MAX_SHAPE_PASSES = 64


def while_loop(
    cond: Callable[..., Any],
    body: Callable[..., Any],
    loop_vars: Any,
    shape_invariants: Any = None,
    parallel_iterations: int = 10,
    maximum_iterations: Any = None,
    name: str | None = None,
    return_same_structure: bool = False,
) -> Any:
    """Repeat ``body`` while ``cond`` is true, as ``tf.compat.v1.while_loop``.

    ``cond(*loop_vars)`` returns a bool scalar, ``body(*loop_vars)`` new values of the same
    structure and dtypes. Both are called once, at build time, inside the loop's frame: tensors
    from outside are entered as loop invariants (``Enter(is_constant=True)``), ops without data
    inputs run once per iteration (a control input from the loop's pivot). At most
    ``parallel_iterations`` iterations run at once. ``maximum_iterations`` adds a hidden counter
    loop variable and ``counter < maximum_iterations`` to the condition.

    A loop variable whose shape changes across iterations gets the most specific shape covering
    all iterations, unless ``shape_invariants`` (a shape per loop variable, same structure) fixes
    it; a body result not matching its invariant is an error. Returns the final values in the
    structure of ``loop_vars``; as TF1, a single loop variable is returned unwrapped unless
    ``return_same_structure=True``.
    """
    if not callable(cond) or not callable(body):
        raise TypeError("while_loop: cond and body must be callables")
    if not isinstance(parallel_iterations, int) or parallel_iterations < 1:
        raise ValueError(
            f"while_loop: parallel_iterations must be a positive int, got {parallel_iterations!r}"
        )
    packed = not nest.is_sequence(loop_vars)
    if packed:
        loop_vars = (loop_vars,)
        if shape_invariants is not None:
            shape_invariants = (shape_invariants,)
    loop_vars, cond, body, as_arrays = _carry_tensor_arrays(loop_vars, cond, body)
    flat_user = nest.flatten(loop_vars)
    if not flat_user:
        raise GraphError("while_loop: loop_vars is empty")
    g = graph_of(flat_user + ([maximum_iterations] if maximum_iterations is not None else []))
    invariants = _flat_invariants(loop_vars, shape_invariants)
    outer = g._control_flow_context
    outer_control = g._current_control_inputs()
    with g.as_default(), g.name_scope(name or "while") as scope:
        flat = [convert_to_tensor(v) for v in flat_user]
        offset = 0
        if maximum_iterations is not None:
            limit = convert_to_tensor(maximum_iterations, name="maximum_iterations")
            if limit.dtype.kind not in "iu" or not S.compatible(limit._shape, ()):
                raise GraphError(f"while_loop: maximum_iterations must be an integer scalar, got {limit!r}")
            with g.control_dependencies(None):
                counter = make_op(
                    "Const", [], {"value": _zero(limit.dtype), "dtype": limit.dtype}, "iteration_counter"
                )
            flat = [counter.outputs[0], *flat]
            invariants = [_UNSET, *invariants]
            offset = 1
        ctx = WhileContext(g, outer, scope[:-1], parallel_iterations, outer_control)
        with g.control_dependencies(None):
            exits = _build(
                g,
                ctx,
                cond,
                body,
                loop_vars,
                flat,
                invariants,
                offset,
                limit if maximum_iterations is not None else None,
            )
    result = as_arrays(nest.pack_as(loop_vars, exits[offset:]))
    if packed or (not return_same_structure and len(flat_user) == 1):
        return result[0]
    return result


def _build(
    g: Graph,
    ctx: WhileContext,
    cond: Callable[..., Any],
    body: Callable[..., Any],
    loop_vars: Any,
    flat: list[Tensor],
    invariants: list[Any],
    offset: int,
    limit: Tensor | None,
) -> list[Tensor]:
    st = state_of(g)
    outer = ctx.outer
    real = [outer.add_value(v) for v in flat] if outer is not None else flat
    enters = [ctx.make_enter(v, is_constant=False) for v in real]
    for e, inv, v in zip(enters, invariants, flat):
        if inv is not _UNSET:
            if not shape_at_most(v._shape, inv):
                raise GraphError(
                    f"while_loop: {v.name} has shape {S.format_shape(v._shape)}, which does not fit its shape "
                    f"invariant {S.format_shape(inv)}"
                )
            e._shape = inv
            st.enter_shapes[e.op] = inv
    with entered(g, ctx):
        merges = [make_op("Merge", [e, e], None, "Merge").outputs[0] for e in enters]
        ctx.merges = [m.op for m in merges]
        ctx.pivot_for_pred = merges[0]
        pred = cond(*nest.pack_as(loop_vars, merges[offset:]))
        pred = convert_to_tensor(pred)
        if pred.dtype != dtypes.bool_ or not S.compatible(pred._shape, ()):
            raise GraphError(f"while_loop: cond must return a bool scalar, got {pred!r}")
        if limit is not None:
            below = less(merges[0], limit, name="below_maximum_iterations")
            pred = where(below, pred, below, name="and_below_maximum")
        ctx.loop_cond = make_op("LoopCond", [pred], None, "LoopCond").outputs[0]
        ctx.switches = [make_op("Switch", [m, ctx.loop_cond], None, "Switch") for m in merges]
        ctx.identities = [identity(sw.outputs[1], name="Identity") for sw in ctx.switches]
        ctx.pivot_for_body = ctx.identities[0]
        result = body(*nest.pack_as(loop_vars, ctx.identities[offset:]))
        if not isinstance(result, (list, tuple)) or (
            len(loop_vars) == 1
            and not nest.same_structure(list(loop_vars), list(result))
            and nest.same_structure(loop_vars[0], result)
        ):
            result = [result]  # the body of a single loop variable may return it unwrapped
        nest.assert_same_structure(
            list(loop_vars), list(result), "while_loop: body must return the structure of loop_vars"
        )
        flat_res = [convert_to_tensor(r) for r in nest.flatten(result)]
        if limit is not None:
            flat_res = [add(ctx.identities[0], _one(limit.dtype), name="next_iteration_counter"), *flat_res]
        for k, (m, r) in enumerate(zip(merges, flat_res)):
            if r.dtype != m.dtype:
                raise GraphError(
                    f"while_loop: loop variable {k - offset} enters as {m.dtype.name} but body returns {r.dtype.name}"
                )
        ctx.next_iterations = [make_op("NextIteration", [r], None, "NextIteration") for r in flat_res]
        for m, n in zip(merges, ctx.next_iterations):
            m.op._update_input(1, n.outputs[0])
    _settle_shapes(g, ctx, invariants, offset)
    with entered(g, ctx):
        ctx.exits = [make_op("Exit", [sw.outputs[0]], None, "Exit") for sw in ctx.switches]
    for parts in zip(ctx.merges, ctx.switches, ctx.next_iterations, ctx.exits):
        register_loop_ops(ctx, *parts)
    return [x.outputs[0] for x in ctx.exits]


def _carry_tensor_arrays(
    loop_vars: Any, cond: Callable[..., Any], body: Callable[..., Any]
) -> tuple[Any, Callable[..., Any], Callable[..., Any], Callable[[Any], Any]]:
    """TensorArrays among ``loop_vars`` travel as their flows (as TF1): the loop carries the flow,
    ``cond`` and ``body`` see TensorArrays again, and so does the caller. Returns the loop
    variables, wrapped ``cond`` and ``body``, and the function rebuilding the loop's results."""
    arrays: list[Any] = [v if isinstance(v, TensorArray) else None for v in nest.flatten(loop_vars)]
    if not any(a is not None for a in arrays):
        return loop_vars, cond, body, lambda result: result

    def as_arrays(values: Any) -> Any:
        flat = [a._with_flow(v) if a is not None else v for a, v in zip(arrays, nest.flatten(values))]
        return nest.pack_as(values, flat)

    def as_flows(values: Any) -> Any:
        return nest.map_structure(lambda v: v.flow if isinstance(v, TensorArray) else v, values)

    def body_of_flows(*args: Any) -> Any:
        result = body(*as_arrays(list(args)))
        for k, v in enumerate(nest.flatten(result)):
            if isinstance(v, TensorArray) and k < len(arrays):
                arrays[k] = v  # the body's writes may have given the elements a static shape
        return as_flows(result)

    return (
        as_flows(loop_vars),
        lambda *args: cond(*as_arrays(list(args))),
        body_of_flows,
        as_arrays,
    )


def _settle_shapes(g: Graph, ctx: WhileContext, invariants: list[Any], offset: int) -> None:
    """Give loop variables whose shape changes across iterations the shape covering all of them.

    The body was built for the entering shapes; when a NextIteration brings a shape that is not an
    instance of its Merge's shape, the Merges relax and every op built since is re-inferred, until
    nothing changes (shapes only get less specific, so this ends).
    """
    relax = False
    for k, (m, n) in enumerate(zip(ctx.merges, ctx.next_iterations)):
        body_shape, loop_shape = n.outputs[0]._shape, m.outputs[0]._shape
        if shape_at_most(body_shape, loop_shape):
            continue
        if invariants[k] is not _UNSET:
            raise GraphError(
                f"while_loop '{ctx.name}': loop variable {k - offset} has shape invariant "
                f"{S.format_shape(invariants[k])} but the body returns shape {S.format_shape(body_shape)}"
            )
        relax = True
    if not relax:
        return
    st = state_of(g)
    first = ctx.merges[0]._id
    for _ in range(_MAX_SHAPE_PASSES):
        changed = False
        for op in g._ops[first:]:
            try:
                specs = op.op_def.shape_fn(op)
            except (ValueError, TypeError) as exc:
                raise GraphError(
                    f"while_loop '{ctx.name}': loop variable shapes change across iterations and {op.type} op "
                    f"'{op.name}' cannot take the relaxed shapes ({exc}); pass shape_invariants"
                ) from None
            fixed = st.enter_shapes.get(op)
            for t, (_, shape) in zip(op.outputs, specs):
                shape = fixed if fixed is not None else shape
                if t._shape != shape:
                    t._shape = shape
                    changed = True
        if not changed:
            return
    raise GraphError(f"while_loop '{ctx.name}': loop variable shapes did not settle; pass shape_invariants")


def _flat_invariants(loop_vars: Any, shape_invariants: Any) -> list[Any]:
    """One shape (or _UNSET) per flattened loop variable."""
    n = len(nest.flatten(loop_vars))
    if shape_invariants is None:
        return [_UNSET] * n
    out: list[Any] = []
    stack = [(loop_vars, shape_invariants)]
    while stack:
        lv, inv = stack.pop()
        if nest.is_sequence(lv):
            if isinstance(lv, dict):
                if not isinstance(inv, dict) or sorted(inv) != sorted(lv):
                    raise GraphError("while_loop: shape_invariants must have the structure of loop_vars")
                stack.extend((lv[k], inv[k]) for k in sorted(lv, reverse=True))
            else:
                if not isinstance(inv, (list, tuple)) or len(inv) != len(lv):
                    raise GraphError("while_loop: shape_invariants must have the structure of loop_vars")
                stack.extend(reversed(list(zip(lv, inv))))
        else:
            out.append(TensorShape(inv).dims)
    return out


def _zero(dtype: Any) -> Any:
    import numpy as np

    arr = np.zeros((), dtype=dtype)
    arr.setflags(write=False)
    return arr


def _one(dtype: Any) -> Tensor:
    from ..ops.constant import constant

    return constant(1, dtype=dtype, name="one")
