"""TF1's streaming metrics at thresholds and over tensors: ``tf.metrics.precision_at_thresholds``,
``recall_at_thresholds``, ``{true,false}_{positives,negatives}_at_thresholds`` (counts per
threshold, a prediction positive above it, in local variables named as TF1's), ``mean_tensor``,
``percentage_below``, ``mean_relative_error`` and ``mean_cosine_distance``. Each returns
``(value, update_op)``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import dtypes
from ..core import Tensor
from ..op_builder import convert_to_tensor
from ..variable_scope import variable_scope
from .array import ones_like, where, zeros_like
from .math import abs as abs_
from .math import cast, equal, less, multiply, reduce_sum
from .math_safe import div_no_nan
from .metric_auc import confusion_at_thresholds
from .metric_ops import (
    Collections,
    _collect,
    broadcast_weights,
    mean,
    mean_of,
    metric_variable,
    remove_squeezable,
)

__all__ = [
    "false_negatives_at_thresholds",
    "false_positives_at_thresholds",
    "mean_cosine_distance",
    "mean_relative_error",
    "mean_tensor",
    "percentage_below",
    "precision_at_thresholds",
    "recall_at_thresholds",
    "true_negatives_at_thresholds",
    "true_positives_at_thresholds",
]

_EPSILON = 1e-7  # TF1's: precision / recall at thresholds divide by epsilon + the counts


def _ratio_at_thresholds(
    labels: Any,
    predictions: Any,
    thresholds: Sequence[float],
    weights: Any,
    metrics_collections: Collections,
    updates_collections: Collections,
    name: str | None,
    default_name: str,
    other: str,
) -> tuple[Tensor, Tensor]:
    """tp / (epsilon + tp + ``other``) per threshold: precision (other = fp) or recall (fn)."""
    with variable_scope(name, default_name, (predictions, labels, weights)):
        values, updates = confusion_at_thresholds(
            labels, predictions, [float(t) for t in thresholds], weights, ("tp", other)
        )
        what = default_name.split("_")[0]

        def ratio(c: dict[str, Tensor], suffix: str) -> Tensor:
            return div_no_nan(c["tp"], _EPSILON + c["tp"] + c[other], name=f"{what}_{suffix}")

        value, update = ratio(values, "value"), ratio(updates, "update_op")
        _collect(value, update, metrics_collections, updates_collections)
        return value, update


def precision_at_thresholds(
    labels: Any,
    predictions: Any,
    thresholds: Sequence[float],
    weights: Any = None,
    metrics_collections: Collections = None,
    updates_collections: Collections = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """Precision of ``predictions > threshold`` against boolean ``labels``, one per threshold."""
    return _ratio_at_thresholds(
        labels, predictions, thresholds, weights, metrics_collections, updates_collections,
        name, "precision_at_thresholds", "fp",
    )  # fmt: skip


def recall_at_thresholds(
    labels: Any,
    predictions: Any,
    thresholds: Sequence[float],
    weights: Any = None,
    metrics_collections: Collections = None,
    updates_collections: Collections = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """Recall of ``predictions > threshold`` against boolean ``labels``, one per threshold."""
    return _ratio_at_thresholds(
        labels, predictions, thresholds, weights, metrics_collections, updates_collections,
        name, "recall_at_thresholds", "fn",
    )  # fmt: skip


def _count_at_thresholds(key: str, scope: str) -> Any:
    def count(
        labels: Any,
        predictions: Any,
        thresholds: Sequence[float],
        weights: Any = None,
        metrics_collections: Collections = None,
        updates_collections: Collections = None,
        name: str | None = None,
    ) -> tuple[Tensor, Tensor]:
        with variable_scope(name, scope, (predictions, labels, weights)):
            values, updates = confusion_at_thresholds(
                labels, predictions, [float(t) for t in thresholds], weights, (key,)
            )
            _collect(values[key], updates[key], metrics_collections, updates_collections)
            return values[key], updates[key]

    count.__name__ = f"{scope}_at_thresholds"
    count.__doc__ = f"The weighted count of {scope.replace('_', ' ')} per threshold (above it: positive)."
    return count


true_positives_at_thresholds = _count_at_thresholds("tp", "true_positives")
false_positives_at_thresholds = _count_at_thresholds("fp", "false_positives")
true_negatives_at_thresholds = _count_at_thresholds("tn", "true_negatives")
false_negatives_at_thresholds = _count_at_thresholds("fn", "false_negatives")


def mean_tensor(
    values: Any,
    weights: Any = None,
    metrics_collections: Collections = None,
    updates_collections: Collections = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The element-wise (weighted) mean of every ``values`` seen (all of one static shape):
    variables ``total_tensor`` and ``count_tensor``."""
    with variable_scope(name, "mean", (values, weights)):
        v = cast(convert_to_tensor(values), dtypes.float32)
        dims = v._shape
        if dims is None or any(d is None for d in dims):
            raise ValueError(f"mean_tensor needs values of a fully defined shape, {v.name} has {v.shape}")
        shape = [int(d or 0) for d in dims]
        total = metric_variable(shape, dtypes.float32, "total_tensor")
        count = metric_variable(shape, dtypes.float32, "count_tensor")
        num = ones_like(v)
        if weights is not None:
            v, _, w = remove_squeezable(v, None, weights)
            w = broadcast_weights(w, v)
            v = multiply(v, w)
            num = w
        return mean_of(total, count, v, v, num, metrics_collections, updates_collections)


def percentage_below(
    values: Any,
    threshold: float,
    weights: Any = None,
    metrics_collections: Collections = None,
    updates_collections: Collections = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The fraction of the values seen below ``threshold``."""
    is_below = cast(less(convert_to_tensor(values), threshold), dtypes.float32)
    return mean(
        is_below, weights, metrics_collections, updates_collections, name or "percentage_below_threshold"
    )


def mean_relative_error(
    labels: Any,
    predictions: Any,
    normalizer: Any,
    weights: Any = None,
    metrics_collections: Collections = None,
    updates_collections: Collections = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The mean of ``|labels - predictions| / normalizer`` (0 where the normalizer is 0)."""
    p, lab, w = remove_squeezable(convert_to_tensor(predictions), convert_to_tensor(labels), weights)
    assert lab is not None
    norm = convert_to_tensor(normalizer, dtype=p.dtype)
    p, norm_sq, _ = remove_squeezable(p, norm, None)
    assert norm_sq is not None
    relative = where(equal(norm_sq, 0.0), zeros_like(lab), div_no_nan(abs_(lab - p), norm_sq))
    return mean(relative, w, metrics_collections, updates_collections, name or "mean_relative_error")


def mean_cosine_distance(
    labels: Any,
    predictions: Any,
    dim: int,
    weights: Any = None,
    metrics_collections: Collections = None,
    updates_collections: Collections = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """``1 -`` the mean over the values seen of ``sum(labels * predictions, dim)`` (unit vectors)."""
    p, lab, w = remove_squeezable(convert_to_tensor(predictions), convert_to_tensor(labels), weights)
    assert lab is not None
    radial = reduce_sum(multiply(p, lab), axis=[dim], keepdims=True)
    value, update = mean(radial, w, None, None, name or "mean_cosine_distance")
    value, update = 1 - value, 1 - update
    _collect(value, update, metrics_collections, updates_collections)
    return value, update
