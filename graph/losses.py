"""TF1's losses (exported by ``ac.losses``, antcolony/losses.py): weighted losses added to the LOSSES collection, and the
collection queries (``get_losses``, ``get_regularization_loss``, ``get_total_loss``).

Reductions mean what TF1's do; the default, SUM_BY_NONZERO_WEIGHTS, divides the weighted sum by
the number of elements whose (broadcast) weight is not zero.
"""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from .core import Tensor, get_default_graph
from .graph_keys import GraphKeys
from .op_builder import _is_symbolic, convert_to_tensor
from .ops.array import ones_like, size, where
from .ops.control import stop_gradient
from .ops.math import abs, add_n, cast, greater, not_equal, reduce_sum, squared_difference
from .ops.nn import softmax_cross_entropy_with_logits_v2, sparse_softmax_cross_entropy_with_logits
from .ops.nn_composite import sigmoid_cross_entropy_with_logits

__all__ = [
    "Reduction",
    "absolute_difference",
    "add_loss",
    "compute_weighted_loss",
    "get_losses",
    "get_regularization_loss",
    "get_regularization_losses",
    "get_total_loss",
    "mean_squared_error",
    "sigmoid_cross_entropy",
    "softmax_cross_entropy",
    "sparse_softmax_cross_entropy",
]


class Reduction:
    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls) -> tuple[str, ...]:
        return (cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE, cls.MEAN, cls.SUM_BY_NONZERO_WEIGHTS)


def _safe_div(num: Tensor, den: Tensor) -> Tensor:
    # 0 where the denominator is 0 (all weights zero), without a nan in the gradient.
    positive = greater(den, 0.0)
    return where(positive, num / where(positive, den, 1.0), 0.0 * num)


def compute_weighted_loss(
    losses: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """``losses * weights`` reduced as ``reduction`` says, added to ``loss_collection``."""
    if reduction not in Reduction.all():
        raise GraphError(f"unknown loss reduction {reduction!r}; use one of {Reduction.all()}")
    g = get_default_graph()
    with g.name_scope(scope or "weighted_loss"):
        lt = convert_to_tensor(losses)
        if lt.dtype.kind != "f":
            raise GraphError(f"losses {lt.name} must be floating-point, got {lt.dtype.name}")
        w = convert_to_tensor(weights, dtype=lt.dtype)
        weighted = lt * w
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            total = reduce_sum(weighted)
            if reduction == Reduction.SUM:
                loss = total
            elif reduction == Reduction.MEAN:
                loss = _safe_div(total, reduce_sum(w * ones_like(lt)))
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _safe_div(total, cast(size(lt), lt.dtype))
            else:
                nonzero = cast(not_equal(w * ones_like(lt), 0.0), lt.dtype)
                loss = _safe_div(total, reduce_sum(nonzero))
    if loss_collection is not None:
        g.add_to_collection(loss_collection, loss)
    return loss


def mean_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    with get_default_graph().name_scope(scope or "mean_squared_error") as s:
        p = convert_to_tensor(predictions)
        lb = _as_float(labels, p)
        return compute_weighted_loss(squared_difference(p, lb), weights, s, loss_collection, reduction)


def absolute_difference(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    with get_default_graph().name_scope(scope or "absolute_difference") as s:
        p = convert_to_tensor(predictions)
        return compute_weighted_loss(abs(p - _as_float(labels, p)), weights, s, loss_collection, reduction)


def sigmoid_cross_entropy(
    multi_class_labels: Any,
    logits: Any,
    weights: Any = 1.0,
    label_smoothing: float = 0.0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Sigmoid cross-entropy; smoothing moves labels toward 1/2: z * (1 - s) + s / 2."""
    with get_default_graph().name_scope(scope or "sigmoid_cross_entropy_loss") as s:
        x = convert_to_tensor(logits)
        z = _as_float(multi_class_labels, x)
        if label_smoothing:
            z = z * (1.0 - label_smoothing) + 0.5 * label_smoothing
        per = sigmoid_cross_entropy_with_logits(labels=z, logits=x)
        return compute_weighted_loss(per, weights, s, loss_collection, reduction)


def softmax_cross_entropy(
    onehot_labels: Any,
    logits: Any,
    weights: Any = 1.0,
    label_smoothing: float = 0.0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Softmax cross-entropy per example; smoothing: labels * (1 - s) + s / num_classes."""
    with get_default_graph().name_scope(scope or "softmax_cross_entropy_loss") as s:
        x = convert_to_tensor(logits)
        z = _as_float(onehot_labels, x)
        if label_smoothing:
            n = x._shape[-1] if x._shape is not None else None
            if n is None:
                raise GraphError(
                    f"label_smoothing needs the number of classes: logits {x.name} have no static last dim"
                )
            z = z * (1.0 - label_smoothing) + label_smoothing / n
        per = softmax_cross_entropy_with_logits_v2(labels=stop_gradient(z), logits=x)
        return compute_weighted_loss(per, weights, s, loss_collection, reduction)


def sparse_softmax_cross_entropy(
    labels: Any,
    logits: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    with get_default_graph().name_scope(scope or "sparse_softmax_cross_entropy_loss") as s:
        per = sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        return compute_weighted_loss(per, weights, s, loss_collection, reduction)


def _as_float(labels: Any, like: Tensor) -> Tensor:
    t = convert_to_tensor(labels) if _is_symbolic(labels) else convert_to_tensor(labels, dtype=like.dtype)
    return t if t.dtype == like.dtype else cast(t, like.dtype)


def add_loss(loss: Any, loss_collection: str | None = GraphKeys.LOSSES) -> None:
    if loss_collection is not None:
        get_default_graph().add_to_collection(loss_collection, convert_to_tensor(loss))


def get_losses(scope: str | None = None, loss_collection: str = GraphKeys.LOSSES) -> list[Tensor]:
    return get_default_graph().get_collection(loss_collection, scope)


def get_regularization_losses(scope: str | None = None) -> list[Tensor]:
    return get_default_graph().get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope: str | None = None, name: str = "total_regularization_loss") -> Tensor:
    """The sum of the regularization losses (0.0 when there are none)."""
    losses = get_regularization_losses(scope)
    if not losses:
        return convert_to_tensor(0.0, name=name)
    return add_n(losses, name=name)


def get_total_loss(
    add_regularization_losses: bool = True, name: str = "total_loss", scope: str | None = None
) -> Tensor:
    """The sum of the LOSSES collection (and the regularization losses); an error when both are empty."""
    losses = get_losses(scope)
    if add_regularization_losses:
        losses = losses + get_regularization_losses(scope)
    if not losses:
        raise GraphError(
            "get_total_loss: no losses found; build a loss with ac.losses.* or add one with add_loss"
        )
    return add_n(losses, name=name)
