"""Identity, NoOp, group, StopGradient."""

from __future__ import annotations

from typing import Any

from ..core import Operation, Tensor, get_default_graph
from ..gradients import not_differentiable, register_gradient
from ..op_builder import convert_to_tensor, graph_of, make_op
from ..registry import register_op


@register_op("Identity")
def _identity_shape(op: Operation) -> list:
    x = op.inputs[0]
    return [(x.dtype, x._shape)]


def identity(input: Any, name: str = "Identity") -> Tensor:
    return make_op("Identity", [convert_to_tensor(input)], None, name).outputs[0]


@register_gradient("Identity", passes_slices=True)
def _identity_grad(op: Operation, grad: Tensor) -> list:
    return [grad]


@register_op("StopGradient")
def _stop_gradient_shape(op: Operation) -> list:
    x = op.inputs[0]
    return [(x.dtype, x._shape)]


def stop_gradient(input: Any, name: str = "StopGradient") -> Tensor:
    return make_op("StopGradient", [convert_to_tensor(input)], None, name).outputs[0]


@register_op("NoOp")
def _noop_shape(op: Operation) -> list:
    return []


def no_op(name: str = "NoOp") -> Operation:
    return get_default_graph().create_op("NoOp", [], None, name)


def group(*inputs: Any, name: str = "group_deps") -> Operation:
    """An op that runs after all ``inputs`` (Operations, Tensors or nestings of them)."""
    flat: list[Any] = []
    stack = list(inputs)
    while stack:
        item = stack.pop(0)
        if isinstance(item, (list, tuple)):
            stack[0:0] = list(item)
        elif item is not None:
            flat.append(item)
    g = graph_of(flat)
    ops = []
    for item in flat:
        el = g.as_graph_element(item)
        ops.append(el.op if isinstance(el, Tensor) else el)
    return g.create_op("NoOp", [], None, name, control_inputs=ops)


not_differentiable("NoOp", "StopGradient")
