"""``tf.metrics.mean_iou`` and ``tf.metrics.mean_per_class_accuracy`` as TF1 builds them:
mean_iou accumulates a float64 confusion matrix (``mean_iou/total_confusion_matrix``) and reads
the mean intersection-over-union of the classes seen; mean_per_class_accuracy accumulates per-class
counts (``mean_accuracy/total``, ``.../count``). Each returns ``(value, update_op)``."""

from __future__ import annotations

from typing import Any

from .. import dtypes
from ..core import Tensor, get_default_graph
from ..op_builder import convert_to_tensor
from ..variable_scope import variable_scope
from .array import ones_like, reshape, where
from .linalg_structure import tensor_diag_part as diag_part
from .math import cast, equal, greater, not_equal, reduce_mean, reduce_sum
from .math_extra import confusion_matrix
from .math_safe import div_no_nan
from .metric_ops import Collections, _collect, metric_variable
from .scatter import scatter_add
from .state import assign_add

__all__ = ["mean_iou", "mean_per_class_accuracy"]


def _flat(t: Tensor) -> Tensor:
    return reshape(t, [-1]) if t._shape is None or len(t._shape) != 1 else t


def mean_iou(
    labels: Any,
    predictions: Any,
    num_classes: int,
    weights: Any = None,
    metrics_collections: Collections = None,
    updates_collections: Collections = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The mean over classes of ``TP / (TP + FP + FN)`` of every batch seen (classes never seen
    nor predicted are left out); the update op returns the confusion matrix."""
    with variable_scope(name, "mean_iou", (predictions, labels, weights)):
        total_cm = metric_variable([num_classes, num_classes], dtypes.float64, "total_confusion_matrix")
        lab = _flat(cast(convert_to_tensor(labels), dtypes.int64))
        pred = _flat(cast(convert_to_tensor(predictions), dtypes.int64))
        w = None if weights is None else _flat(convert_to_tensor(weights))
        current = confusion_matrix(lab, pred, num_classes, weights=w, dtype=dtypes.float64)
        update = assign_add(total_cm, current)
        with get_default_graph().name_scope("mean_iou"):
            cm = cast(total_cm, dtypes.float32)
            diag = cast(diag_part(total_cm), dtypes.float32)
            denominator = reduce_sum(cm, 0) + reduce_sum(cm, 1) - diag
            valid = reduce_sum(cast(not_equal(denominator, 0.0), dtypes.float32))
            denominator = where(greater(denominator, 0.0), denominator, ones_like(denominator))
            iou = diag / denominator
            value = where(greater(valid, 0.0), reduce_sum(iou) / valid, 0.0 * valid)
        _collect(value, update, metrics_collections, updates_collections)
        return value, update


def mean_per_class_accuracy(
    labels: Any,
    predictions: Any,
    num_classes: int,
    weights: Any = None,
    metrics_collections: Collections = None,
    updates_collections: Collections = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The mean over classes of each class's accuracy (correct / seen, 0 for a class not seen);
    the update op returns the per-class accuracies."""
    with variable_scope(name, "mean_accuracy", (predictions, labels, weights)):
        lab = _flat(cast(convert_to_tensor(labels), dtypes.int64))
        pred = _flat(convert_to_tensor(predictions))
        total = metric_variable([num_classes], dtypes.float32, "total")
        count = metric_variable([num_classes], dtypes.float32, "count")
        if pred.dtype != lab.dtype:
            pred = cast(pred, lab.dtype)
        ones = ones_like(cast(lab, dtypes.float32))
        is_correct = cast(equal(pred, lab), dtypes.float32)
        if weights is not None:
            w = cast(_flat(convert_to_tensor(weights)), dtypes.float32)
            is_correct, ones = is_correct * w, ones * w
        update_total = scatter_add(total, lab, ones)
        update_count = scatter_add(count, lab, is_correct)
        value = reduce_mean(div_no_nan(count, total), name="mean_accuracy")
        update = div_no_nan(update_count, update_total, name="update_op")
        _collect(value, update, metrics_collections, updates_collections)
        return value, update
