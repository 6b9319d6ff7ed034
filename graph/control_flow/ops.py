"""Control-flow op types (Switch, Merge, Enter, Exit, NextIteration, LoopCond, ControlTrigger), the accumulator
ops while-loop gradients use, their low-level builders and the cond gradient rules.

The six control-flow types have no kernels: the executor implements them natively (frames,
iterations, dead tensors). The accumulator ops are ordinary stateful CPU kernels
(devices/kernels/control_flow.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from .. import shapes as S
from ..core import Operation, Tensor, get_default_graph
from ..gradients import not_differentiable, register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op

CONTROL_FLOW_OPS = frozenset(
    {"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond", "ControlTrigger"}
)
ACCUMULATOR_OPS = frozenset({"Accumulator", "AccumulatorPush", "AccumulatorPop", "AccumulatorConcat"})
HANDLE_DTYPE = np.dtype(object)


def most_specific_compatible_shape(a: S.Shape, b: S.Shape) -> S.Shape:
    """The most specific shape both ``a`` and ``b`` are instances of (differing dims become None)."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


def shape_at_most(specific: S.Shape, general: S.Shape) -> bool:
    """True when every value of shape ``specific`` also has shape ``general``."""
    if general is None:
        return True
    if specific is None or len(specific) != len(general):
        return False
    return all(g is None or s == g for s, g in zip(specific, general))


def _check_bool_scalar(t: Tensor, what: str) -> None:
    if t.dtype != dtypes.bool_:
        raise ValueError(f"{what} {t.name} must be a bool tensor, got {t.dtype.name}")
    if not S.compatible(t._shape, ()):
        raise ValueError(f"{what} {t.name} must be a scalar, got shape {S.format_shape(t._shape)}")


@register_op("Switch")
def _switch_shape(op: Operation) -> list:
    data, pred = op.inputs
    _check_bool_scalar(pred, "the predicate")
    return [(data.dtype, data._shape), (data.dtype, data._shape)]


@register_op("Merge")
def _merge_shape(op: Operation) -> list:
    if not op.inputs:
        raise ValueError("Merge needs at least one input")
    first = op.inputs[0]
    shape = first._shape
    for t in op.inputs[1:]:
        if t.dtype != first.dtype:
            raise ValueError(
                f"Merge inputs {first.name} ({first.dtype.name}) and {t.name} ({t.dtype.name}) differ in dtype"
            )
        shape = most_specific_compatible_shape(shape, t._shape)
    return [(first.dtype, shape), (dtypes.int32, ())]


@register_op("Enter")
def _enter_shape(op: Operation) -> list:
    for key, kind in (("frame_name", str), ("is_constant", bool), ("parallel_iterations", int)):
        if not isinstance(op.attrs.get(key), kind):
            raise TypeError(f"Enter needs attr {key!r} of type {kind.__name__}")
    if not op.attrs["frame_name"]:
        raise ValueError("Enter needs a non-empty frame_name")
    x = op.inputs[0]
    return [(x.dtype, x._shape)]


def _pass_through_shape(op: Operation) -> list:
    x = op.inputs[0]
    return [(x.dtype, x._shape)]


register_op("Exit")(_pass_through_shape)
register_op("NextIteration")(_pass_through_shape)


@register_op("LoopCond")
def _loop_cond_shape(op: Operation) -> list:
    _check_bool_scalar(op.inputs[0], "the loop condition")
    return [(dtypes.bool_, ())]


@register_op("Accumulator", stateful=True)
def _accumulator_shape(op: Operation) -> list:
    return [(HANDLE_DTYPE, ())]


@register_op("AccumulatorPush", stateful=True)
def _push_shape(op: Operation) -> list:
    handle, index, _ = op.inputs
    if handle.dtype != HANDLE_DTYPE or index.dtype != dtypes.int32:
        raise ValueError("AccumulatorPush takes (handle, int32 index, value)")
    return []


@register_op("AccumulatorPop", stateful=True)
def _pop_shape(op: Operation) -> list:
    handle, index = op.inputs
    if handle.dtype != HANDLE_DTYPE or index.dtype != dtypes.int32:
        raise ValueError("AccumulatorPop takes (handle, int32 index)")
    return [(op.attrs["dtype"], op.attrs["shape"])]


@register_op("AccumulatorConcat", stateful=True)
def _acc_concat_shape(op: Operation) -> list:
    (handle,) = op.inputs
    if handle.dtype != HANDLE_DTYPE:
        raise ValueError("AccumulatorConcat takes an accumulator handle")
    shape = op.attrs["element_shape"]
    return [(op.attrs["dtype"], None if shape is None else (None, *shape[1:]))]


@register_op("ControlTrigger")
def _control_trigger_shape(op: Operation) -> list:
    if op.inputs:
        raise ValueError("ControlTrigger takes control inputs only")
    return []


# -- builders (they add to the default graph or the graph of their inputs, in the current context) --
def switch(data: Any, pred: Any, name: str = "Switch") -> tuple[Tensor, Tensor]:
    """(output_false, output_true): ``data`` on the output selected by ``pred``; the other is dead."""
    op = make_op("Switch", [convert_to_tensor(data), convert_to_tensor(pred)], None, name)
    return op.outputs[0], op.outputs[1]


def merge(
    inputs: Sequence[Any], name: str = "Merge", attrs: dict[str, Any] | None = None
) -> tuple[Tensor, Tensor]:
    """(output, value_index): the first input that is alive, and its index."""
    op = make_op("Merge", [convert_to_tensor(t) for t in inputs], attrs, name)
    return op.outputs[0], op.outputs[1]


def control_trigger(name: str = "ControlTrigger") -> Operation:
    """An op that runs once all its control inputs (from ``control_dependencies``) arrived, dead or
    alive, and is never dead itself: ops after it run even when what it waited for was on an
    untaken branch (TF's ControlTrigger)."""
    return get_default_graph().create_op("ControlTrigger", [], None, name)


def enter(
    data: Tensor,
    frame_name: str,
    is_constant: bool,
    parallel_iterations: int,
    name: str = "Enter",
    control_inputs: Sequence[Operation] = (),
) -> Tensor:
    attrs = {
        "frame_name": frame_name,
        "is_constant": bool(is_constant),
        "parallel_iterations": int(parallel_iterations),
    }
    return make_op("Enter", [data], attrs, name, control_inputs).outputs[0]


def exit_(data: Tensor, name: str = "Exit") -> Tensor:
    return make_op("Exit", [data], None, name).outputs[0]


def next_iteration(data: Tensor, name: str = "NextIteration") -> Tensor:
    return make_op("NextIteration", [data], None, name).outputs[0]


def loop_cond(pred: Tensor, name: str = "LoopCond") -> Tensor:
    return make_op("LoopCond", [pred], None, name).outputs[0]


def accumulator(name: str = "Accumulator") -> Tensor:
    return get_default_graph().create_op("Accumulator", [], None, name).outputs[0]


def accumulator_push(
    handle: Tensor, index: Tensor, value: Tensor, name: str = "AccumulatorPush"
) -> Operation:
    return make_op("AccumulatorPush", [handle, index, value], None, name)


def accumulator_pop(
    handle: Tensor, index: Tensor, dtype: np.dtype, shape: S.Shape, name: str = "AccumulatorPop"
) -> Tensor:
    return make_op("AccumulatorPop", [handle, index], {"dtype": dtype, "shape": shape}, name).outputs[0]


# -- gradients ------------------------------------------------------------------------------
@register_gradient("Switch")
def _switch_grad(op: Operation, grad_false: Tensor, grad_true: Tensor) -> list:
    # Only the taken output's gradient is alive; the other (zeros of a dead output) is dead.
    from .context import is_ref

    grads = [grad_false, grad_true]
    if is_ref(op.inputs[0]):
        # Zeros like a variable reference must be zeros like the variable's value.
        for b, g in enumerate(grads):
            if g.op.type == "ZerosLike" and g.op.inputs[0] is op.outputs[b]:
                grads[b] = _zeros_like_ref(op, b)
    return [merge(grads, name="cond_grad")[0], None]


def _zeros_like_ref(op: Operation, b: int) -> Tensor:
    """Zeros shaped like the variable behind ref Switch ``op``, alive exactly when output ``b`` is."""
    from ..ops.array import zeros_like

    ref = op.inputs[0]
    if S.is_fully_defined(ref._shape):
        arr = np.zeros(ref._shape, dtype=ref.dtype)
        arr.setflags(write=False)
        zeros = make_op("Const", [], {"value": arr, "dtype": ref.dtype}, "zeros").outputs[0]
        return switch(zeros, op.inputs[1])[b]
    return zeros_like(make_op("ReadVariable", [op.outputs[b]], None, "read").outputs[0])


@register_gradient("Merge")
def _merge_grad(op: Operation, grad: Tensor, _index_grad: Tensor) -> list:
    from ..ops.math import equal
    from .context import state_of

    state = state_of(op.graph, create=False)
    record = state.merge_cond.get(op) if state is not None else None
    if state is not None and op in state.loop_merges:
        raise GraphError(
            f"gradients cannot flow through the back edge of a while loop (Merge '{op.name}') from inside "
            "its own body; differentiate the loop's results from outside the loop instead"
        )
    if record is not None:
        if len(op.inputs) != 2:
            raise GraphError(f"cond Merge {op.name} has {len(op.inputs)} inputs, expected 2")
        false_g, true_g = switch(grad, record.pred_id, name="cond_grad")
        return [false_g, true_g]
    # A Merge not built by cond: route the gradient to whichever input was taken.
    return [switch(grad, equal(op.outputs[1], i))[1] for i in range(len(op.inputs))]


@register_gradient("Enter")
def _enter_grad(op: Operation, grad: Tensor) -> list:
    # Reached only by gradients taken inside the loop's own body (a loop invariant of this
    # iteration); loops on the gradient path are differentiated whole by grad_walk.py.
    return [grad]


def _loop_op_grad(op: Operation, *grads: Tensor) -> list:
    raise GraphError(
        f"gradients cannot flow through {op.type} op '{op.name}' from inside its own while loop; "
        "differentiate the loop's results from outside the loop instead"
    )


for _t in ("Exit", "NextIteration"):
    register_gradient(_t)(_loop_op_grad)
not_differentiable("LoopCond", "ControlTrigger", *ACCUMULATOR_OPS)
