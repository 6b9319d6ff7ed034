"""``tf.metrics.auc`` as TF1 computes it: confusion counts at ``num_thresholds`` thresholds
spread evenly over [0, 1] (the ends moved out by 1e-7) kept in local variables
``true_positives``, ``false_negatives``, ``true_negatives``, ``false_positives``, and the area
under the ROC or PR curve by TF1's summations (trapezoidal by default; careful_interpolation
for PR)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Tensor
from ..op_builder import convert_to_tensor
from ..variable_scope import variable_scope
from .array import ones_like, reshape, where
from .constant import constant
from .math import cast, greater, log, maximum, minimum, reduce_sum
from .math_composite import logical_and, logical_not
from .math_safe import div_no_nan
from .metric_ops import Collections, _collect, broadcast_weights, metric_variable, remove_squeezable
from .state import assign_add

__all__ = ["auc"]

_KEPSILON = 1e-7
_EPSILON = 1.0e-6


def _thresholds(num_thresholds: int, thresholds: Sequence[float] | None) -> list[float]:
    if thresholds is not None:
        return [0.0 - _KEPSILON, *[float(t) for t in thresholds], 1.0 + _KEPSILON]
    if num_thresholds < 2:
        raise GraphError(f"auc: num_thresholds must be > 1, got {num_thresholds}")
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - _KEPSILON, *inner, 1.0 + _KEPSILON]


def confusion_at_thresholds(
    labels: Any,
    predictions: Any,
    thresholds: list[float],
    weights: Any,
    includes: Sequence[str] = ("tp", "fn", "tn", "fp"),
) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """Running tp / fn / tn / fp counts per threshold (a prediction is positive above it); only
    the ``includes`` counts get a variable, as TF1's."""
    p, lab, w = remove_squeezable(
        cast(convert_to_tensor(predictions), dtypes.float32),
        cast(convert_to_tensor(labels), dtypes.bool_),
        weights,
    )
    assert lab is not None
    n = len(thresholds)
    # [thresholds, predictions]: broadcasting stands for TF's tiles
    pred_pos = greater(reshape(p, [1, -1]), constant(np.asarray(thresholds, np.float32).reshape(n, 1)))
    label_pos = reshape(lab, [1, -1])
    weights_row = None if w is None else reshape(broadcast_weights(w, p), [1, -1])
    cells = {
        "tp": ("true_positives", logical_and(label_pos, pred_pos)),
        "fn": ("false_negatives", logical_and(label_pos, logical_not(pred_pos))),
        "tn": ("true_negatives", logical_and(logical_not(label_pos), logical_not(pred_pos))),
        "fp": ("false_positives", logical_and(logical_not(label_pos), pred_pos)),
    }
    values: dict[str, Tensor] = {}
    updates: dict[str, Tensor] = {}
    for key, (var_name, hit) in cells.items():
        if key not in includes:
            continue
        var = metric_variable([n], dtypes.float32, var_name)
        counted = cast(hit, dtypes.float32)
        if weights_row is not None:
            counted = counted * weights_row
        updates[key] = assign_add(var, reduce_sum(counted, axis=1))
        values[key] = var._as_tensor()
    return values, updates


def _interpolate_pr_auc(tp: Tensor, fp: Tensor, fn: Tensor, n: int, name: str) -> Tensor:
    # Davis & Goadrich 2006: precision interpolated between thresholds as TF1's careful_interpolation
    dtp = tp[: n - 1] - tp[1:]
    p = tp + fp
    prec_slope = div_no_nan(dtp, maximum(p[: n - 1] - p[1:], 0), name="prec_slope")
    intercept = tp[1:] - prec_slope * p[1:]
    both = logical_and(greater(p[: n - 1], 0), greater(p[1:], 0))
    safe_p_ratio = where(both, div_no_nan(p[: n - 1], maximum(p[1:], 0)), ones_like(p[1:]))
    increments = div_no_nan(prec_slope * (dtp + intercept * log(safe_p_ratio)), maximum(tp[1:] + fn[1:], 0))
    return reduce_sum(increments, name=name)


def auc(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    num_thresholds: int = 200,
    metrics_collections: Collections = None,
    updates_collections: Collections = None,
    curve: str = "ROC",
    name: str | None = None,
    summation_method: str = "trapezoidal",
    thresholds: Sequence[float] | None = None,
) -> tuple[Tensor, Tensor]:
    """The area under the ROC (or PR) curve of ``predictions`` in [0, 1] against boolean ``labels``."""
    if curve not in ("ROC", "PR"):
        raise GraphError(f"auc: curve must be 'ROC' or 'PR', got {curve!r}")
    if summation_method not in ("trapezoidal", "careful_interpolation", "minoring", "majoring"):
        raise GraphError(f"auc: summation_method {summation_method!r} is not one of TF1's")
    with variable_scope(name, "auc", (labels, predictions, weights)):
        ths = _thresholds(num_thresholds, thresholds)
        n = len(ths)
        values, updates = confusion_at_thresholds(labels, predictions, ths, weights)

        def area(c: dict[str, Tensor], op_name: str) -> Tensor:
            tp, fn, tn, fp = c["tp"], c["fn"], c["tn"], c["fp"]
            if curve == "PR" and summation_method == "careful_interpolation":
                return _interpolate_pr_auc(tp, fp, fn, n, op_name)
            rec = (tp + _EPSILON) / (tp + fn + _EPSILON)
            if curve == "ROC":
                x, y = fp / (fp + tn + _EPSILON), rec
            else:
                x, y = rec, (tp + _EPSILON) / (tp + fp + _EPSILON)
            if summation_method == "minoring":
                heights = minimum(y[: n - 1], y[1:])
            elif summation_method == "majoring":
                heights = maximum(y[: n - 1], y[1:])
            else:
                heights = (y[: n - 1] + y[1:]) / 2.0
            return reduce_sum((x[: n - 1] - x[1:]) * heights, name=op_name)

        value = area(values, "value")
        update = area(updates, "update_op")
        _collect(value, update, metrics_collections, updates_collections)
        return value, update
