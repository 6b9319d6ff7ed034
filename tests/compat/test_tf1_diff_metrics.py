"""Differential test against TensorFlow 1: ``tf.metrics``. Each metric is driven the classic way
in both frameworks -- ``local_variables_initializer``, ``sess.run(update_op)`` per batch, then
``sess.run(value)`` -- and the update results, the final value, the local / metric variables'
names and the collections are compared."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    FRAMEWORKS,
    assert_same,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    rng,
    run_both,
)

BATCHES = 4
N = 25


def _batches(tag: str) -> list[dict[str, np.ndarray]]:
    r = rng(tag)
    out = []
    for _ in range(BATCHES):
        scores = r.uniform(0, 1, N).astype(np.float32)
        # labels correlated with the scores, so the AUC is neither 0.5 nor 1
        labels = (r.uniform(0, 1, N) < 0.25 + 0.5 * scores).astype(np.int64)
        out.append(
            {
                "labels": labels,
                "scores": scores,
                "classes": r.integers(0, 3, N).astype(np.int64),
                "guesses": r.integers(0, 3, N).astype(np.int64),
                "values": r.standard_normal(N).astype(np.float32),
                "weights": r.uniform(0, 2, N).astype(np.float32) * (r.uniform(0, 1, N) < 0.8),
            }
        )
    return out


Metric = Callable[[Any, dict[str, Any]], Any]

METRICS: dict[str, Metric] = {
    "mean": lambda tf, p: tf.metrics.mean(p["values"]),
    "mean_weighted": lambda tf, p: tf.metrics.mean(p["values"], weights=p["weights"]),
    "accuracy": lambda tf, p: tf.metrics.accuracy(p["classes"], p["guesses"]),
    "accuracy_weighted": lambda tf, p: tf.metrics.accuracy(p["classes"], p["guesses"], weights=p["weights"]),
    "accuracy_argmax": lambda tf, p: tf.metrics.accuracy(
        p["classes"], tf.argmax(tf.stack([p["scores"], 1 - p["scores"], p["values"]], 1), 1)
    ),
    "mean_squared_error": lambda tf, p: tf.metrics.mean_squared_error(p["scores"], p["values"]),
    "mean_squared_error_weighted": lambda tf, p: tf.metrics.mean_squared_error(
        p["scores"], p["values"], weights=p["weights"]
    ),
    "mean_absolute_error": lambda tf, p: tf.metrics.mean_absolute_error(p["scores"], p["values"]),
    "root_mean_squared_error": lambda tf, p: tf.metrics.root_mean_squared_error(p["scores"], p["values"]),
    "true_positives": lambda tf, p: tf.metrics.true_positives(p["labels"], p["scores"] > 0.5),
    "false_positives": lambda tf, p: tf.metrics.false_positives(p["labels"], p["scores"] > 0.5),
    "true_negatives": lambda tf, p: tf.metrics.true_negatives(p["labels"], p["scores"] > 0.5),
    "false_negatives_weighted": lambda tf, p: tf.metrics.false_negatives(
        p["labels"], p["scores"] > 0.5, weights=p["weights"]
    ),
    "precision": lambda tf, p: tf.metrics.precision(p["labels"], p["scores"] > 0.6),
    "precision_weighted": lambda tf, p: tf.metrics.precision(p["labels"], p["scores"] > 0.6, p["weights"]),
    "recall": lambda tf, p: tf.metrics.recall(p["labels"], p["scores"] > 0.6),
    "recall_named": lambda tf, p: tf.metrics.recall(p["labels"], p["scores"] > 0.3, name="my_recall"),
    "auc": lambda tf, p: tf.metrics.auc(p["labels"], p["scores"]),
    "auc_weighted": lambda tf, p: tf.metrics.auc(p["labels"], p["scores"], weights=p["weights"]),
    "auc_few_thresholds": lambda tf, p: tf.metrics.auc(p["labels"], p["scores"], num_thresholds=7),
    "auc_pr": lambda tf, p: tf.metrics.auc(p["labels"], p["scores"], curve="PR"),
    "auc_pr_careful": lambda tf, p: tf.metrics.auc(
        p["labels"], p["scores"], curve="PR", summation_method="careful_interpolation"
    ),
    "auc_minoring": lambda tf, p: tf.metrics.auc(p["labels"], p["scores"], summation_method="minoring"),
    "auc_majoring": lambda tf, p: tf.metrics.auc(p["labels"], p["scores"], summation_method="majoring"),
    "auc_column_labels": lambda tf, p: tf.metrics.auc(
        tf.expand_dims(p["labels"], -1), tf.expand_dims(p["scores"], -1)
    ),
    "two_metrics_in_a_scope": lambda tf, p: _two(tf, p),
    "mean_iou": lambda tf, p: tf.metrics.mean_iou(p["classes"], p["guesses"], 3),
    "mean_iou_weighted": lambda tf, p: tf.metrics.mean_iou(
        p["classes"], p["guesses"], 4, weights=p["weights"]
    ),
    "mean_per_class_accuracy": lambda tf, p: tf.metrics.mean_per_class_accuracy(
        p["classes"], p["guesses"], 3
    ),
    "mean_per_class_accuracy_weighted": lambda tf, p: tf.metrics.mean_per_class_accuracy(
        p["classes"], p["guesses"], 4, weights=p["weights"], name="per_class"
    ),
}


def _two(tf, p):
    with tf.variable_scope("eval"):
        acc = tf.metrics.accuracy(
            p["classes"], p["guesses"], metrics_collections=["m"], updates_collections=["u"]
        )
        mse = tf.metrics.mean_squared_error(p["scores"], p["values"], metrics_collections=["m"])
    return tf.stack([acc[0], mse[0]]), tf.group(acc[1], mse[1])


def _drive(tf, metric: Metric, batches: list[dict[str, np.ndarray]]) -> dict[str, Any]:
    g = tf.Graph()
    with g.as_default():
        feeds = {k: tf.placeholder(v.dtype, [None], name=k) for k, v in batches[0].items()}
        value, update = metric(tf, feeds)
        init = tf.local_variables_initializer()
        names = {
            "local": sorted(v.name for v in tf.local_variables()),
            "metric": sorted(v.name for v in tf.get_collection(tf.GraphKeys.METRIC_VARIABLES)),
            "global": sorted(v.name for v in tf.global_variables()),
            "trainable": sorted(v.name for v in tf.trainable_variables()),
            "m": [t.name for t in tf.get_collection("m")],
            "u": [t.name for t in tf.get_collection("u")],
        }
    with tf.Session(graph=g) as sess:
        sess.run(init)
        before = sess.run(value)
        updates = [sess.run(update, {feeds[k]: v for k, v in b.items()}) for b in batches]
        after = sess.run(value)
        sess.run(init)  # re-initialising the local variables starts the metric over
        restarted = sess.run(value)
    return {"names": names, "values": [before, *updates, after, restarted]}


@pytest.mark.parametrize("name", list(METRICS))
def test_streaming_metric_matches_tf1(name: str) -> None:
    batches = _batches(name)
    got = run_both(lambda tf: _drive(tf, METRICS[name], batches))
    ours, ref = got["antcolony"], got["tensorflow"]
    assert ours["names"] == ref["names"]
    for i, (a, r) in enumerate(zip(ours["values"], ref["values"])):
        if r is None:
            assert a is None
            continue
        assert_same(a, r, 1e-5, 1e-6, f"run {i} (before, {BATCHES} updates, after, re-initialised)")


def test_metrics_namespace_exports_only_tf1_names() -> None:
    ours, ref = FRAMEWORKS["antcolony"].metrics, FRAMEWORKS["tensorflow"].metrics
    extra = sorted(n for n in ours.__all__ if not hasattr(ref, n))
    assert not extra, f"tf.metrics names TF1 does not have: {extra}"
    assert sorted(n for n in dir(ours) if not n.startswith("_") and n != "annotations") == sorted(
        ours.__all__
    )
