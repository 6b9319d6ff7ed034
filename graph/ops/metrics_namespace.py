"""``ac.metrics`` / ``tf.metrics``: TF1's streaming metrics under their names there."""

from __future__ import annotations

from .metric_auc import auc
from .metric_confusion import mean_iou, mean_per_class_accuracy
from .metric_ops import (
    accuracy,
    false_negatives,
    false_positives,
    mean,
    mean_absolute_error,
    mean_squared_error,
    precision,
    recall,
    root_mean_squared_error,
    true_negatives,
    true_positives,
)

__all__ = [
    "accuracy",
    "auc",
    "false_negatives",
    "false_positives",
    "mean",
    "mean_absolute_error",
    "mean_iou",
    "mean_per_class_accuracy",
    "mean_squared_error",
    "precision",
    "recall",
    "root_mean_squared_error",
    "true_negatives",
    "true_positives",
]
