"""Neural-network ops (exported by ``ac.nn``, antcolony/nn.py): activations, softmax, bias_add, cross-entropies, l2_loss.

Op types and input orders follow TF: ``ReluGrad(gradients, features)``, ``SigmoidGrad(y, dy)``,
``SoftmaxCrossEntropyWithLogits(features, labels)`` with two outputs (loss, backprop), and so on.
"""

from __future__ import annotations

from typing import Any

from .. import shapes as S
from ..core import Operation, Tensor
from ..gradients import register_gradient
from ..legacy_args import resolve
from ..op_builder import _is_symbolic, convert_to_tensor, make_op, unary
from ..registry import register_op
from .array import broadcast_like, expand_dims, reshape, shape, transpose
from .control import stop_gradient
from .math import reduce_sum

__all__ = [
    "bias_add",
    "l2_loss",
    "log_softmax",
    "relu",
    "sigmoid",
    "softmax",
    "softmax_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits_v2",
    "sparse_softmax_cross_entropy_with_logits",
    "tanh",
]


def _need_float(t: Tensor, what: str) -> None:
    if t.dtype.kind != "f":
        raise ValueError(f"{what} needs a floating-point input, but {t.name} is {t.dtype.name}")


def _float_unary_shape(op: Operation) -> list:
    x = op.inputs[0]
    _need_float(x, op.type)
    return [(x.dtype, x._shape)]


@register_op("Relu")
def _relu_shape(op: Operation) -> list:
    x = op.inputs[0]
    if x.dtype.kind not in "fiu":
        raise ValueError(f"Relu needs a real numeric input, but {x.name} is {x.dtype.name}")
    return [(x.dtype, x._shape)]


for _t in ("Sigmoid", "Tanh"):
    register_op(_t)(_float_unary_shape)


def _grad_pair_shape(op: Operation) -> list:
    a, b = op.inputs
    if a.dtype != b.dtype:
        raise ValueError(f"{a.name} is {a.dtype.name} but {b.name} is {b.dtype.name}")
    if not S.compatible(a._shape, b._shape):
        raise ValueError(
            f"shapes differ: {a.name} {S.format_shape(a._shape)}, {b.name} {S.format_shape(b._shape)}"
        )
    return [(a.dtype, S.merge(a._shape, b._shape))]


for _t in ("ReluGrad", "SigmoidGrad", "TanhGrad"):
    register_op(_t)(_grad_pair_shape)


def relu(features: Any, name: str | None = None) -> Tensor:
    return unary("Relu", features, name)


def sigmoid(x: Any, name: str | None = None) -> Tensor:
    return unary("Sigmoid", x, name)


def tanh(x: Any, name: str | None = None) -> Tensor:
    return unary("Tanh", x, name)


def _pair(op_type: str, a: Tensor, b: Tensor) -> Tensor:
    return make_op(op_type, [a, b], None, op_type).outputs[0]


@register_gradient("Relu")
def _relu_grad(op: Operation, grad: Tensor) -> list:
    return [_pair("ReluGrad", grad, op.inputs[0])]


@register_gradient("ReluGrad")
def _relu_grad_grad(op: Operation, grad: Tensor) -> list:
    # ReluGrad is linear in its gradients input and piecewise constant in the features.
    return [_pair("ReluGrad", grad, op.inputs[1]), None]


@register_gradient("Sigmoid")
def _sigmoid_grad(op: Operation, grad: Tensor) -> list:
    return [_pair("SigmoidGrad", op.outputs[0], grad)]


@register_gradient("SigmoidGrad")
def _sigmoid_grad_grad(op: Operation, grad: Tensor) -> list:
    y, dy = op.inputs
    gdy = grad * dy
    return [gdy - 2.0 * gdy * y, _pair("SigmoidGrad", y, grad)]


@register_gradient("Tanh")
def _tanh_grad(op: Operation, grad: Tensor) -> list:
    return [_pair("TanhGrad", op.outputs[0], grad)]


@register_gradient("TanhGrad")
def _tanh_grad_grad(op: Operation, grad: Tensor) -> list:
    y, dy = op.inputs
    return [grad * -2.0 * dy * y, _pair("TanhGrad", y, grad)]


# -- softmax ------------------------------------------------------------------------------


def _softmax_shape(op: Operation) -> list:
    x = op.inputs[0]
    _need_float(x, op.type)
    if x._shape is not None and len(x._shape) < 1:
        raise ValueError(f"{op.type} needs an input of rank >= 1, but {x.name} is a scalar")
    return [(x.dtype, x._shape)]


for _t in ("Softmax", "LogSoftmax"):
    register_op(_t)(_softmax_shape)


def _last_axis(op_type: str, x: Any, axis: int, name: str | None) -> Tensor:
    """Apply a last-axis op along ``axis`` by moving that axis last and back (as TF does)."""
    xt = convert_to_tensor(x)
    nd = S.rank(xt._shape)
    if axis in (-1, None) or (nd is not None and S.normalize_axis(axis, nd, xt.name) == nd - 1):
        return make_op(op_type, [xt], None, name or op_type).outputs[0]
    if nd is None:
        raise ValueError(f"{op_type} along axis {axis} needs {xt.name} to have a known rank")
    a = S.normalize_axis(axis, nd, xt.name)
    perm = list(range(nd))
    perm[a], perm[-1] = perm[-1], perm[a]
    out = make_op(op_type, [transpose(xt, perm)], None, op_type).outputs[0]
    return transpose(out, perm, name=name)


def softmax(logits: Any, axis: int | None = None, name: str | None = None, dim: int | None = None) -> Tensor:
    """exp(logits) / sum(exp(logits), axis), computed stably (``dim`` is TF1's old name of ``axis``)."""
    return _last_axis("Softmax", logits, resolve(axis, dim, "axis", "dim", default=-1), name)


def log_softmax(
    logits: Any, axis: int | None = None, name: str | None = None, dim: int | None = None
) -> Tensor:
    """logits - log(sum(exp(logits), axis)), computed stably."""
    return _last_axis("LogSoftmax", logits, resolve(axis, dim, "axis", "dim", default=-1), name)


@register_gradient("Softmax")
def _softmax_grad(op: Operation, grad: Tensor) -> list:
    y = op.outputs[0]
    return [(grad - reduce_sum(grad * y, axis=-1, keepdims=True)) * y]


@register_gradient("LogSoftmax")
def _log_softmax_grad(op: Operation, grad: Tensor) -> list:
    from .math import exp

    return [grad - reduce_sum(grad, axis=-1, keepdims=True) * exp(op.outputs[0])]


# -- bias_add -----------------------------------------------------------------------------


def _channel_axis(data_format: str, rank: int) -> int:
    return 1 if data_format.startswith("NC") and rank > 2 else rank - 1


@register_op("BiasAdd")
def _bias_add_shape(op: Operation) -> list:
    value, bias = op.inputs
    if value.dtype != bias.dtype:
        raise ValueError(
            f"value {value.name} is {value.dtype.name} but bias {bias.name} is {bias.dtype.name}"
        )
    vs, bs = value._shape, bias._shape
    if bs is not None and len(bs) != 1:
        raise ValueError(f"bias {bias.name} must be rank 1, but has shape {S.format_shape(bs)}")
    if vs is None:
        return [(value.dtype, None)]
    if len(vs) < 2:
        raise ValueError(f"value {value.name} must be at least rank 2, but has shape {S.format_shape(vs)}")
    c = _channel_axis(op.attrs["data_format"], len(vs))
    if bs is not None and vs[c] is not None and bs[0] is not None and vs[c] != bs[0]:
        raise ValueError(
            f"bias {bias.name} of shape {S.format_shape(bs)} does not match dimension {c} of value "
            f"{value.name} of shape {S.format_shape(vs)} ({bs[0]} != {vs[c]})"
        )
    if bs is not None and vs[c] is None:
        vs = (*vs[:c], bs[0], *vs[c + 1 :])
    return [(value.dtype, vs)]


@register_op("BiasAddGrad")
def _bias_add_grad_shape(op: Operation) -> list:
    g = op.inputs[0]
    if g._shape is None:
        return [(g.dtype, (None,))]
    return [(g.dtype, (g._shape[_channel_axis(op.attrs["data_format"], len(g._shape))],))]


def bias_add(value: Any, bias: Any, data_format: str | None = None, name: str | None = None) -> Tensor:
    """``value + bias`` with a rank-1 ``bias`` along the channel (last, or 1 for "NC..") dimension."""
    fmt = data_format or "NHWC"
    if fmt not in ("NHWC", "NCHW", "NDHWC", "NCDHW", "NC", "NWC", "NCW"):
        raise ValueError(f"bias_add: unknown data_format {data_format!r}; use 'NHWC' or 'NCHW'")
    v = convert_to_tensor(value)
    b = convert_to_tensor(bias) if _is_symbolic(bias) else convert_to_tensor(bias, dtype=v.dtype)
    return make_op("BiasAdd", [v, b], {"data_format": fmt}, name or "BiasAdd").outputs[0]


@register_gradient("BiasAdd")
def _bias_add_grad(op: Operation, grad: Tensor) -> list:
    gb = make_op("BiasAddGrad", [grad], dict(op.attrs), "BiasAddGrad").outputs[0]
    return [grad, gb]


@register_gradient("BiasAddGrad")
def _bias_add_grad_grad(op: Operation, grad: Tensor) -> list:
    g = op.inputs[0]
    nd = S.rank(g._shape)
    c = None if nd is None else _channel_axis(op.attrs["data_format"], nd)
    if nd is not None and c is not None and c != nd - 1:
        from .array import reshape

        grad = reshape(grad, [-1] + [1] * (nd - 1 - c))
    return [broadcast_like(grad, g)]


# -- cross-entropies ----------------------------------------------------------------------


def _xent_common(logits: Tensor) -> None:
    _need_float(logits, "cross-entropy")
    if logits._shape is not None and len(logits._shape) < 1:
        raise ValueError(f"logits {logits.name} must have rank >= 1, but is a scalar")


@register_op("SoftmaxCrossEntropyWithLogits")
def _xent_shape(op: Operation) -> list:
    logits, labels = op.inputs
    _xent_common(logits)
    if labels.dtype != logits.dtype:
        raise ValueError(
            f"labels {labels.name} are {labels.dtype.name} but logits {logits.name} are {logits.dtype.name}"
        )
    if not S.compatible(logits._shape, labels._shape):
        raise ValueError(
            f"labels {labels.name} of shape {S.format_shape(labels._shape)} and logits {logits.name} of "
            f"shape {S.format_shape(logits._shape)} must have the same shape"
        )
    shape = S.merge(logits._shape, labels._shape)
    return [(logits.dtype, None if shape is None else shape[:-1]), (logits.dtype, shape)]


@register_op("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_xent_shape(op: Operation) -> list:
    logits, labels = op.inputs
    _xent_common(logits)
    if labels.dtype.kind not in "iu":
        raise ValueError(
            f"labels {labels.name} must be int32 or int64 class indices, got {labels.dtype.name}"
        )
    ls, gs = labels._shape, logits._shape
    if ls is not None and gs is not None:
        if len(ls) != len(gs) - 1 or not S.compatible(ls, gs[:-1]):
            raise ValueError(
                f"labels {labels.name} of shape {S.format_shape(ls)} must have rank {len(gs) - 1} and match "
                f"the leading dimensions of logits {logits.name} of shape {S.format_shape(gs)}"
            )
        gs = S.merge(gs[:-1], ls) + gs[-1:]
    return [(logits.dtype, None if gs is None else gs[:-1]), (logits.dtype, gs)]


def _softmax_grad_of_backprop(logits: Tensor, grad_grad: Tensor) -> Tensor:
    """The logits part of d(backprop)/d(logits) applied to the gradient of the backprop output."""
    p = softmax(logits)
    return (grad_grad - reduce_sum(grad_grad * p, axis=-1, keepdims=True)) * p


def _is_zero(t: Tensor) -> bool:
    return t.op.type == "ZerosLike"


@register_gradient("SoftmaxCrossEntropyWithLogits")
def _xent_grad(op: Operation, grad_loss: Tensor, grad_grad: Tensor) -> list:
    logits = op.inputs[0]
    g = expand_dims(grad_loss, -1)
    g_logits = g * op.outputs[1]
    g_labels = g * -log_softmax(logits)
    if not _is_zero(grad_grad):
        g_logits = g_logits + _softmax_grad_of_backprop(logits, grad_grad)
        g_labels = g_labels - grad_grad
    return [g_logits, g_labels]


@register_gradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_xent_grad(op: Operation, grad_loss: Tensor, grad_grad: Tensor) -> list:
    g_logits = expand_dims(grad_loss, -1) * op.outputs[1]
    if not _is_zero(grad_grad):
        g_logits = g_logits + _softmax_grad_of_backprop(op.inputs[0], grad_grad)
    return [g_logits, None]


def _move_last(t: Tensor, axis: int) -> Tensor:
    nd = S.rank(t._shape)
    if axis == -1 or (nd is not None and S.normalize_axis(axis, nd, t.name) == nd - 1):
        return t
    if nd is None:
        raise ValueError(f"cross-entropy along axis {axis} needs {t.name} to have a known rank")
    perm = [i for i in range(nd) if i != S.normalize_axis(axis, nd, t.name)] + [
        S.normalize_axis(axis, nd, t.name)
    ]
    return transpose(t, perm)


def softmax_cross_entropy_with_logits_v2(
    labels: Any = None,
    logits: Any = None,
    axis: int = -1,
    name: str | None = None,
) -> Tensor:
    """Per-example -sum(labels * log_softmax(logits)); gradients flow into labels too."""
    if labels is None or logits is None:
        raise ValueError("softmax_cross_entropy_with_logits needs labels= and logits=")
    lg = convert_to_tensor(logits)
    lb = convert_to_tensor(labels) if _is_symbolic(labels) else convert_to_tensor(labels, dtype=lg.dtype)
    lg, lb = _move_last(lg, axis), _move_last(lb, axis)
    outer, depth = (lg._shape[:-1], lg._shape[-1]) if lg._shape else ((), None)
    if depth is None or lb._shape is None or len(lb._shape) == len(lg._shape or ()):
        op = make_op("SoftmaxCrossEntropyWithLogits", [lg, lb], None, name or "SoftmaxCrossEntropyWithLogits")
        return op.outputs[0]
    # TF1 flattens the outer dimensions of both to [-1, classes]: labels of another rank (a
    # program's [one_hot] list around a [batch, classes] tensor) pair up row for row.
    flat = [reshape(t, [-1, depth]) for t in (lg, lb)]
    op = make_op("SoftmaxCrossEntropyWithLogits", flat, None, name or "SoftmaxCrossEntropyWithLogits")
    cost = reshape(op.outputs[0], shape(lg)[:-1])
    cost.set_shape(outer)
    return cost


def softmax_cross_entropy_with_logits(
    labels: Any = None,
    logits: Any = None,
    axis: int = -1,
    name: str | None = None,
    dim: int | None = None,
) -> Tensor:
    """As TF1's (deprecated) version: like ``_v2`` but no gradient flows into ``labels``."""
    if labels is None or logits is None:
        raise ValueError("softmax_cross_entropy_with_logits needs labels= and logits=")
    lb = stop_gradient(labels) if _is_symbolic(labels) else labels
    return softmax_cross_entropy_with_logits_v2(lb, logits, axis if dim is None else dim, name)


def sparse_softmax_cross_entropy_with_logits(
    labels: Any = None,
    logits: Any = None,
    name: str | None = None,
) -> Tensor:
    """Per-example -log_softmax(logits)[label]; labels are class indices of rank ``rank(logits) - 1``."""
    if labels is None or logits is None:
        raise ValueError("sparse_softmax_cross_entropy_with_logits needs labels= and logits=")
    lg = convert_to_tensor(logits)
    lb = convert_to_tensor(labels)
    op = make_op(
        "SparseSoftmaxCrossEntropyWithLogits", [lg, lb], None, name or "SparseSoftmaxCrossEntropyWithLogits"
    )
    return op.outputs[0]


# -- l2_loss ------------------------------------------------------------------------------


@register_op("L2Loss")
def _l2_loss_shape(op: Operation) -> list:
    x = op.inputs[0]
    _need_float(x, "L2Loss")
    return [(x.dtype, ())]


def l2_loss(t: Any, name: str | None = None) -> Tensor:
    """sum(t ** 2) / 2."""
    return unary("L2Loss", t, name)


@register_gradient("L2Loss")
def _l2_loss_grad(op: Operation, grad: Tensor) -> list:
    return [op.inputs[0] * grad]
