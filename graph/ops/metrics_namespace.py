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
from .metric_thresholds import (
    false_negatives_at_thresholds,
    false_positives_at_thresholds,
    mean_cosine_distance,
    mean_relative_error,
    mean_tensor,
    percentage_below,
    precision_at_thresholds,
    recall_at_thresholds,
    true_negatives_at_thresholds,
    true_positives_at_thresholds,
)

__all__ = [
    "accuracy",
    "auc",
    "false_negatives",
    "false_negatives_at_thresholds",
    "false_positives",
    "false_positives_at_thresholds",
    "mean",
    "mean_absolute_error",
    "mean_cosine_distance",
    "mean_iou",
    "mean_per_class_accuracy",
    "mean_relative_error",
    "mean_squared_error",
    "mean_tensor",
    "percentage_below",
    "precision",
    "precision_at_thresholds",
    "recall",
    "recall_at_thresholds",
    "root_mean_squared_error",
    "true_negatives",
    "true_negatives_at_thresholds",
    "true_positives",
    "true_positives_at_thresholds",
]
