"""Differential test against TensorFlow 1: the streaming metrics at thresholds
(``precision_at_thresholds``, ``recall_at_thresholds``, the four counts ``*_at_thresholds``) and
over tensors (``mean_tensor``, ``percentage_below``, ``mean_relative_error``,
``mean_cosine_distance``), driven as tests/compat/test_tf1_diff_metrics.py drives the others:
update results, final values, variable names and collections equal TF1's."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("tensorflow")

from .test_tf1_diff_metrics import BATCHES, Metric, _batches, _drive
from .tf1_diff import assert_same, park_tf_objects, run_both  # noqa: F401 - park_tf_objects: autouse

TH = [0.0, 0.25, 0.5, 0.9]


def _unit_rows(tf: Any, x: Any) -> Any:
    return tf.nn.l2_normalize(tf.reshape(x, [5, 5]), 1)


METRICS: dict[str, Metric] = {
    "precision_at_thresholds": lambda tf, p: tf.metrics.precision_at_thresholds(p["labels"], p["scores"], TH),
    "precision_at_thresholds_weighted": lambda tf, p: tf.metrics.precision_at_thresholds(
        p["labels"],
        p["scores"],
        TH,
        weights=p["weights"],
        metrics_collections=["m"],
        updates_collections=["u"],
    ),
    "recall_at_thresholds": lambda tf, p: tf.metrics.recall_at_thresholds(p["labels"], p["scores"], TH),
    "recall_at_thresholds_named": lambda tf, p: tf.metrics.recall_at_thresholds(
        p["labels"], p["scores"], [0.5], name="r"
    ),
    "true_positives_at_thresholds": lambda tf, p: tf.metrics.true_positives_at_thresholds(
        p["labels"], p["scores"], TH
    ),
    "false_positives_at_thresholds": lambda tf, p: tf.metrics.false_positives_at_thresholds(
        p["labels"], p["scores"], TH, weights=p["weights"]
    ),
    "true_negatives_at_thresholds": lambda tf, p: tf.metrics.true_negatives_at_thresholds(
        p["labels"], p["scores"], TH
    ),
    "false_negatives_at_thresholds": lambda tf, p: tf.metrics.false_negatives_at_thresholds(
        p["labels"], p["scores"], TH
    ),
    "mean_tensor": lambda tf, p: tf.metrics.mean_tensor(tf.reshape(p["values"], [5, 5])),
    "mean_tensor_weighted": lambda tf, p: tf.metrics.mean_tensor(
        tf.reshape(p["values"], [5, 5]), weights=tf.reshape(p["weights"], [5, 5])
    ),
    "percentage_below": lambda tf, p: tf.metrics.percentage_below(p["values"], 0.3),
    "percentage_below_weighted": lambda tf, p: tf.metrics.percentage_below(
        p["values"], -0.5, weights=p["weights"], metrics_collections=["m"]
    ),
    "mean_relative_error": lambda tf, p: tf.metrics.mean_relative_error(
        p["scores"], p["values"], p["weights"]
    ),
    "mean_cosine_distance": lambda tf, p: tf.metrics.mean_cosine_distance(
        _unit_rows(tf, p["scores"]), _unit_rows(tf, p["values"]), 1
    ),
}


@pytest.mark.parametrize("name", list(METRICS))
def test_streaming_metric_matches_tf1(name: str) -> None:
    batches = _batches(name)
    got = run_both(lambda tf: _drive(tf, METRICS[name], batches))
    ours, ref = got["antcolony"], got["tensorflow"]
    assert ours["names"] == ref["names"]
    for i, (a, r) in enumerate(zip(ours["values"], ref["values"])):
        assert_same(a, r, 1e-5, 1e-6, f"run {i} (before, {BATCHES} updates, after, re-initialised)")
