"""``tf.metrics`` as TF1 builds them: each returns ``(value, update_op)`` over float32 LOCAL
variables (collections LOCAL_VARIABLES and METRIC_VARIABLES, initialised by
``local_variables_initializer``) in a variable scope named after the metric, so the classic
loop -- ``sess.run(update_op)`` per batch, then ``sess.run(value)`` -- gives TF1's numbers and
variable names (``mean/total``, ``precision/true_positives/count``, ...)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import dtypes
from ..core import Tensor, get_default_graph
from ..graph_keys import GraphKeys
from ..op_builder import convert_to_tensor
from ..variable_scope import variable_scope
from ..variables import Variable
from .array import ones_like, size, where, zeros_like
from .array_composite import squeeze
from .constant import constant
from .control import identity
from .math import abs, cast, equal, greater, maximum, reduce_sum, sqrt, squared_difference
from .math_composite import logical_and
from .math_safe import div_no_nan
from .state import assign_add

__all__ = [
    "accuracy",
    "false_negatives",
    "false_positives",
    "mean",
    "mean_absolute_error",
    "mean_squared_error",
    "precision",
    "recall",
    "root_mean_squared_error",
    "true_negatives",
    "true_positives",
]

Collections = Sequence[str] | None


def metric_variable(shape: Sequence[int], dtype: Any, name: str) -> Variable:
    """A zero-initialised local variable holding a metric's running state."""
    return Variable(
        lambda: constant(0, dtype=dtype, shape=list(shape)) if shape else constant(0, dtype=dtype),
        trainable=False,
        name=name,
        collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
    )


def _collect(
    value: Tensor, update: Tensor, metrics_collections: Collections, updates_collections: Collections
) -> None:
    g = get_default_graph()
    for c in metrics_collections or ():
        g.add_to_collection(c, value)
    for c in updates_collections or ():
        g.add_to_collection(c, update)


def remove_squeezable(
    predictions: Tensor, labels: Tensor | None, weights: Any
) -> tuple[Tensor, Tensor | None, Any]:
    """Drop a trailing axis of size 1 that one of predictions / labels has and the other lacks
    (and from the weights against the predictions), as TF1's metrics do."""
    if labels is not None:
        if _extra_unit_axis(predictions, labels):
            predictions = squeeze(predictions, [-1])
        elif _extra_unit_axis(labels, predictions):
            labels = squeeze(labels, [-1])
    if weights is not None:
        weights = convert_to_tensor(weights)
        if _extra_unit_axis(weights, predictions):
            weights = squeeze(weights, [-1])
    return predictions, labels, weights


def _extra_unit_axis(x: Tensor, other: Tensor) -> bool:
    """Whether ``x`` is ``other``'s rank plus a last axis of size 1."""
    a, b = x._shape, other._shape
    return a is not None and b is not None and len(a) == len(b) + 1 and a[-1] == 1


def broadcast_weights(weights: Tensor, values: Tensor) -> Tensor:
    w = cast(weights, dtypes.float32)
    if w._shape == values._shape and w._shape is not None and None not in w._shape:
        return w
    return w * ones_like(values)


def mean(
    values: Any,
    weights: Any = None,
    metrics_collections: Collections = None,
    updates_collections: Collections = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The (weighted) mean of every value seen: variables ``total`` and ``count``."""
    with variable_scope(name, "mean", (values, weights)):
        v = cast(convert_to_tensor(values), dtypes.float32)
        total = metric_variable([], dtypes.float32, "total")
        count = metric_variable([], dtypes.float32, "count")
        if weights is None:
            num = cast(size(v), dtypes.float32)
        else:
            v, _, w = remove_squeezable(v, None, weights)
            w = broadcast_weights(w, v)
            v = v * w
            num = reduce_sum(w)
        return mean_of(total, count, reduce_sum(v), v, num, metrics_collections, updates_collections)


def mean_of(
    total: Any,
    count: Any,
    addend: Tensor,
    v: Tensor,
    num: Tensor,
    metrics_collections: Collections,
    updates_collections: Collections,
) -> tuple[Tensor, Tensor]:
    """A mean metric's ``value`` and ``update_op`` (``total / count``, 0 while the count is 0), the
    update adding ``addend`` to ``total`` and ``num`` to ``count``, as TF1's mean metrics."""
    update_total = assign_add(total, addend)
    # As TF1: the count waits on the values (a fed placeholder's op when fed directly).
    with get_default_graph().control_dependencies([v]):
        update_count = assign_add(count, num)
    value = div_no_nan(total, maximum(count, 0), name="value")
    update = div_no_nan(update_total, maximum(update_count, 0), name="update_op")
    _collect(value, update, metrics_collections, updates_collections)
    return value, update


def accuracy(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Collections = None,
    updates_collections: Collections = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """How often ``predictions`` equal ``labels`` (a mean of the matches)."""
    p, lab, w = remove_squeezable(convert_to_tensor(predictions), convert_to_tensor(labels), weights)
    assert lab is not None
    if lab.dtype != p.dtype:
        p = cast(p, lab.dtype)
    is_correct = cast(equal(p, lab), dtypes.float32)
    return mean(is_correct, w, metrics_collections, updates_collections, name or "accuracy")


def _error_metric(
    error: Callable[[Tensor, Tensor], Tensor], default_name: str
) -> Callable[..., tuple[Tensor, Tensor]]:
    def metric(
        labels: Any,
        predictions: Any,
        weights: Any = None,
        metrics_collections: Collections = None,
        updates_collections: Collections = None,
        name: str | None = None,
    ) -> tuple[Tensor, Tensor]:
        p, lab, w = remove_squeezable(convert_to_tensor(predictions), convert_to_tensor(labels), weights)
        assert lab is not None
        return mean(error(lab, p), w, metrics_collections, updates_collections, name or default_name)

    metric.__name__ = default_name
    metric.__doc__ = f"TF1's ``tf.metrics.{default_name}``: the (weighted) mean of the error."
    return metric


mean_squared_error = _error_metric(lambda lab, p: squared_difference(lab, p), "mean_squared_error")
mean_absolute_error = _error_metric(lambda lab, p: abs(p - lab), "mean_absolute_error")


def root_mean_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Collections = None,
    updates_collections: Collections = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The square root of mean_squared_error."""
    with get_default_graph().name_scope(None):
        mse, update_mse = mean_squared_error(
            labels, predictions, weights, None, None, name or "root_mean_squared_error"
        )
    value, update = sqrt(mse), sqrt(update_mse)
    _collect(value, update, metrics_collections, updates_collections)
    return value, update


def _count_condition(
    condition: Tensor, weights: Any, metrics_collections: Collections, updates_collections: Collections
) -> tuple[Tensor, Tensor]:
    count = metric_variable([], dtypes.float32, "count")
    values = cast(condition, dtypes.float32)
    if weights is not None:
        values = values * cast(convert_to_tensor(weights), dtypes.float32)
    value = identity(count)
    update = assign_add(count, reduce_sum(values))
    _collect(value, update, metrics_collections, updates_collections)
    return value, update


def _as_bools(predictions: Any, labels: Any, weights: Any) -> tuple[Tensor, Tensor, Any]:
    """Predictions and labels as booleans, squeezed to each other as TF1's metrics do."""
    p, lab, w = remove_squeezable(
        cast(convert_to_tensor(predictions), dtypes.bool_),
        cast(convert_to_tensor(labels), dtypes.bool_),
        weights,
    )
    assert lab is not None
    return p, lab, w


def _confusion_count(
    label_value: bool, prediction_value: bool, default_name: str
) -> Callable[..., tuple[Tensor, Tensor]]:
    def metric(
        labels: Any,
        predictions: Any,
        weights: Any = None,
        metrics_collections: Collections = None,
        updates_collections: Collections = None,
        name: str | None = None,
    ) -> tuple[Tensor, Tensor]:
        with variable_scope(name, default_name, (predictions, labels, weights)):
            p, lab, w = _as_bools(predictions, labels, weights)
            hit = logical_and(equal(lab, label_value), equal(p, prediction_value))
            return _count_condition(hit, w, metrics_collections, updates_collections)

    metric.__name__ = default_name
    metric.__doc__ = f"TF1's ``tf.metrics.{default_name}``: the (weighted) count of such predictions."
    return metric


true_positives = _confusion_count(True, True, "true_positives")
false_positives = _confusion_count(False, True, "false_positives")
false_negatives = _confusion_count(True, False, "false_negatives")
true_negatives = _confusion_count(False, False, "true_negatives")


def _ratio(
    other: Callable[..., tuple[Tensor, Tensor]], default_name: str
) -> Callable[..., tuple[Tensor, Tensor]]:
    def metric(
        labels: Any,
        predictions: Any,
        weights: Any = None,
        metrics_collections: Collections = None,
        updates_collections: Collections = None,
        name: str | None = None,
    ) -> tuple[Tensor, Tensor]:
        with variable_scope(name, default_name, (predictions, labels, weights)):
            p, lab, w = _as_bools(predictions, labels, weights)
            tp, tp_update = true_positives(lab, p, w)
            wrong, wrong_update = other(lab, p, w)

            def ratio(t: Tensor, f: Tensor, op_name: str) -> Tensor:
                total = t + f
                return where(greater(total, 0), div_no_nan(t, total), zeros_like(t), name=op_name)

            value = ratio(tp, wrong, "value")
            update = ratio(tp_update, wrong_update, "update_op")
            _collect(value, update, metrics_collections, updates_collections)
            return value, update

    metric.__name__ = default_name
    return metric


precision = _ratio(false_positives, "precision")
precision.__doc__ = "tp / (tp + fp) over every prediction seen (0 before any positive prediction)."
recall = _ratio(false_negatives, "recall")
recall.__doc__ = "tp / (tp + fn) over every prediction seen (0 before any positive label)."
