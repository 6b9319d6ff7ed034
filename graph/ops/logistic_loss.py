"""``ac.nn.sigmoid_cross_entropy_with_logits`` as one op, ``SigmoidCrossEntropyWithLogits``, and its
gradient as one op, ``SigmoidCrossEntropyWithLogitsGrad`` (TF composes both of ~10 elementwise ops
each; nce_loss runs them every step on [batch, 1 + num_sampled]).

The loss is TF's ``max(x, 0) - x * z + log1p(exp(-|x|))``, in that order; the logits' gradient is
the derivative of TF's composite, ``[x >= 0] - z -+ e / (1 + e)`` with ``e = exp(-|x|)`` (so
``sigmoid(x) - z`` without rounding sigmoid(x) to 1 for large x), summed in TF's order; the
labels' ``-x``. Exported to
TF GraphDefs as TF's ops (TF has neither op type).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from ..tf_op_table import Node, _const_node, _export
from .nn import sigmoid

__all__ = ["sigmoid_cross_entropy_with_logits"]


def _same_shape(op: Operation, a: Tensor, b: Tensor) -> Any:
    if a.dtype.kind != "f":
        raise ValueError(f"{op.type} needs floating-point logits, but {a.name} is {a.dtype.name}")
    if b.dtype != a.dtype:
        raise ValueError(f"{op.type}: {b.name} is {b.dtype.name}, logits {a.name} {a.dtype.name}")
    if not S.compatible(a._shape, b._shape):
        raise ValueError(
            f"{op.type}: logits {a.name} and {b.name} must have the same shape, got "
            f"{S.format_shape(a._shape)} and {S.format_shape(b._shape)}"
        )
    return S.merge(a._shape, b._shape)


@register_op("SigmoidCrossEntropyWithLogits")
def _loss_shape(op: Operation) -> list:
    logits, labels = op.inputs
    return [(logits.dtype, _same_shape(op, logits, labels))]


@register_op("SigmoidCrossEntropyWithLogitsGrad")
def _grad_shape(op: Operation) -> list:
    grad, logits, labels = op.inputs
    shape = _same_shape(op, logits, labels)
    return [(logits.dtype, S.merge(shape, _same_shape(op, logits, grad)))]


def sigmoid_cross_entropy_with_logits(
    labels: Any = None, logits: Any = None, name: str | None = None
) -> Tensor:
    """Elementwise -z*log(sigmoid(x)) - (1-z)*log(1-sigmoid(x)), as TF's max(x, 0) - x*z +
    log1p(exp(-|x|)); the result op is named ``name`` (default "logistic_loss"), as TF's."""
    if labels is None or logits is None:
        raise GraphError("sigmoid_cross_entropy_with_logits needs labels= and logits=")
    x = convert_to_tensor(logits)
    z = convert_to_tensor(labels, dtype=x.dtype)
    if not S.compatible(x._shape, z._shape):
        raise GraphError(
            f"logits {x.name} and labels {z.name} must have the same shape, got {S.format_shape(x._shape)} "
            f"and {S.format_shape(z._shape)}"
        )
    return make_op("SigmoidCrossEntropyWithLogits", [x, z], None, name or "logistic_loss").outputs[0]


@register_gradient("SigmoidCrossEntropyWithLogits")
def _loss_grad(op: Operation, grad: Tensor) -> list:
    x, z = op.inputs
    g_x = make_op(
        "SigmoidCrossEntropyWithLogitsGrad", [grad, x, z], None, "SigmoidCrossEntropyWithLogitsGrad"
    )
    return [g_x.outputs[0], -grad * x]


@register_gradient("SigmoidCrossEntropyWithLogitsGrad")
def _grad_grad(op: Operation, gg: Tensor) -> list:
    # out = grad * (sigmoid(x) - z): its second derivatives (rounding aside)
    grad, x, z = op.inputs
    s = sigmoid(x)
    return [gg * (s - z), gg * grad * s * (1.0 - s), -gg * grad]


# -- TF GraphDef export: TF's composite ops ----------------------------------------------------------


class _Nodes:
    """TF nodes named under ``base``, on ``device``, of float dtype ``dtype``."""

    def __init__(self, base: str, device: str, dtype: Any) -> None:
        self.base, self.device, self.dtype = base, device, dtype
        self.nodes: list[Node] = []

    def const(self, key: str, value: float) -> str:
        self.nodes.append(_const_node(f"{self.base}/{key}", value, self.dtype, self.device))
        return f"{self.base}/{key}:0"

    def op(self, key: str, op_type: str, *inputs: str, name: str | None = None) -> str:
        attr: dict[str, Any] = {"T": self.dtype}
        node_name = name or f"{self.base}/{key}"
        self.nodes.append(
            {"name": node_name, "op": op_type, "input": list(inputs), "device": self.device, "attr": attr}
        )
        return f"{node_name}:0"


def _split(node: Node) -> tuple[list[str], list[str]]:
    return [s for s in node["input"] if not s.startswith("^")], [
        s for s in node["input"] if s.startswith("^")
    ]


@_export("SigmoidCrossEntropyWithLogits")
def _loss_export(node: Node, op: Operation) -> list[Node]:
    (x, z), ctrl = _split(node)
    n = _Nodes(node["name"], node["device"], np.dtype(op.outputs[0].dtype))
    relu = n.op("Maximum", "Maximum", x, n.const("zero", 0.0))
    linear = n.op("sub", "Sub", relu, n.op("mul", "Mul", x, z))
    soft = n.op("Log1p", "Log1p", n.op("Exp", "Exp", n.op("Neg", "Neg", n.op("Abs", "Abs", x))))
    n.op("", "AddV2", linear, soft, name=node["name"])
    n.nodes[-1]["input"] += ctrl
    return n.nodes


@_export("SigmoidCrossEntropyWithLogitsGrad")
def _grad_export(node: Node, op: Operation) -> list[Node]:
    (grad, x, z), ctrl = _split(node)
    n = _Nodes(node["name"], node["device"], np.dtype(op.outputs[0].dtype))
    e = n.op("Exp", "Exp", n.op("Neg", "Neg", n.op("Abs", "Abs", x)))
    inverse = n.op("Reciprocal", "Reciprocal", n.op("one_plus_e", "AddV2", n.const("one", 1.0), e))
    q = n.op("q", "Mul", n.op("g_inverse", "Mul", grad, inverse), e)
    gz = n.op("gz", "Mul", n.op("neg_g", "Neg", grad), z)
    above = n.op("above", "AddV2", n.op("g_minus_q", "Sub", grad, q), gz)
    below = n.op("below", "AddV2", q, gz)
    cond = n.op("cond", "GreaterEqual", x, n.const("zero", 0.0))
    n.op("", "Select", cond, above, below, name=node["name"])
    n.nodes[-1]["input"] += ctrl
    return n.nodes
