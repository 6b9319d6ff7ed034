"""More of TF1's ``tf.losses``: ``huber_loss``, ``log_loss``, ``hinge_loss``, ``cosine_distance``
and ``mean_pairwise_squared_error``, with TF1's formulas, weights and reductions (graph/losses.py
has the rest and ``compute_weighted_loss``)."""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError

from .core import Tensor, get_default_graph
from .graph_keys import GraphKeys
from .losses import Reduction, _as_float, compute_weighted_loss
from .op_builder import convert_to_tensor
from .ops.array import ones_like, where, zeros_like
from .ops.math import abs, equal, greater, log, maximum, minimum, reduce_sum, square
from .ops.math_safe import div_no_nan
from .ops.nn import relu

__all__ = ["cosine_distance", "hinge_loss", "huber_loss", "log_loss", "mean_pairwise_squared_error"]

_SUM_BY_NONZERO = Reduction.SUM_BY_NONZERO_WEIGHTS


def huber_loss(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    delta: float = 1.0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = _SUM_BY_NONZERO,
) -> Tensor:
    """``0.5 * e**2`` where ``|e| <= delta``, ``delta * (|e| - 0.5 * delta)`` beyond, for the error
    ``e = predictions - labels``."""
    with get_default_graph().name_scope(scope or "huber_loss") as s:
        p = convert_to_tensor(predictions)
        err = abs(p - _as_float(labels, p))
        quadratic = minimum(err, delta)
        losses = 0.5 * square(quadratic) + delta * (err - quadratic)
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def log_loss(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    epsilon: float = 1e-7,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = _SUM_BY_NONZERO,
) -> Tensor:
    """The binary cross-entropy of probabilities: ``-z log(p + eps) - (1 - z) log(1 - p + eps)``."""
    with get_default_graph().name_scope(scope or "log_loss") as s:
        p = convert_to_tensor(predictions)
        z = _as_float(labels, p)
        losses = -z * log(p + epsilon) - (1.0 - z) * log(1.0 - p + epsilon)
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def hinge_loss(
    labels: Any,
    logits: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = _SUM_BY_NONZERO,
) -> Tensor:
    """``max(0, 1 - y * logits)`` with the 0/1 labels mapped to y = -1/+1."""
    with get_default_graph().name_scope(scope or "hinge_loss") as s:
        x = convert_to_tensor(logits)
        y = 2.0 * _as_float(labels, x) - 1.0
        return compute_weighted_loss(relu(1.0 - y * x), weights, s, loss_collection, reduction)


def cosine_distance(
    labels: Any,
    predictions: Any,
    axis: int | None = None,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
    reduction: str = _SUM_BY_NONZERO,
    dim: int | None = None,
) -> Tensor:
    """``1 - sum(labels * predictions, axis)`` of unit-normalised inputs (axis kept, as TF)."""
    if axis is None:
        axis = dim
    if axis is None:
        raise GraphError("cosine_distance needs axis (the dimension holding the vectors)")
    with get_default_graph().name_scope(scope or "cosine_distance_loss") as s:
        p = convert_to_tensor(predictions)
        losses = 1.0 - reduce_sum(p * _as_float(labels, p), axis, keepdims=True)
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def mean_pairwise_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = GraphKeys.LOSSES,
) -> Tensor:
    """For each example, the mean over pairs of its elements of the squared difference between
    their differences in ``predictions`` and in ``labels``; weighted per example and summed."""
    with get_default_graph().name_scope(scope or "mean_pairwise_squared_error"):
        p = convert_to_tensor(predictions)
        diffs = p - _as_float(labels, p)
        if diffs._shape is None:
            raise GraphError(f"mean_pairwise_squared_error needs the rank of {p.name}")
        axes = list(range(1, len(diffs._shape)))
        w = convert_to_tensor(weights, dtype=diffs.dtype)
        present = where(equal(w, 0.0), zeros_like(w), ones_like(w)) * ones_like(diffs)
        n = reduce_sum(present, axes, keepdims=True)
        term1 = 2.0 * div_no_nan(reduce_sum(square(diffs), axes, keepdims=True), maximum(n - 1.0, 0.0))
        sum_diff = reduce_sum(diffs, axes, keepdims=True)
        term2 = 2.0 * div_no_nan(square(sum_diff), maximum(n * (n - 1.0), 0.0))
        loss = reduce_sum((term1 - term2) * w)
        mean_loss = where(greater(reduce_sum(n), 0.0), loss, zeros_like(loss))
        if loss_collection is not None:
            get_default_graph().add_to_collection(loss_collection, mean_loss)
        return mean_loss
