"""Differential test against TensorFlow 1: ``tf.nn.ctc_loss`` (losses and their gradients with
respect to the logits: repeats merged or not, labels collapsed, empty labels, short sequences,
batch-major logits, float64) and ``tf.nn.ctc_greedy_decoder`` (decoded SparseTensor and log
probability); see tf1_diff.py."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    Table,
    compare,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    run_both,
)

T = Table()
STEPS, BATCH, CLASSES = 9, 4, 6  # class 5 is the blank
LOGITS = normal(STEPS, BATCH, CLASSES, tag="ctc", scale=2.0)
LOGITS64 = LOGITS.astype(np.float64)
# entry 0: distinct labels; 1: a repeat (needs a blank between when merged); 2: one label; 3: repeats
ROWS = [[1, 2, 0], [3, 3, 1], [2], [4, 4, 4, 2]]
LENGTHS = [9, 7, 5, 9]


def labels(tf, rows=ROWS):  # type: ignore[no-untyped-def]
    indices = [[b, i] for b, row in enumerate(rows) for i in range(len(row))]
    values = np.array([v for row in rows for v in row], np.int32)
    return tf.SparseTensor(
        np.array(indices, np.int64).reshape(-1, 2), values, [len(rows), max(map(len, rows))]
    )


OPTIONS = {
    "merged": {},
    "not_merged": {"ctc_merge_repeated": False},
    "collapsed": {"preprocess_collapse_repeated": True},
    "collapsed_not_merged": {"preprocess_collapse_repeated": True, "ctc_merge_repeated": False},
}
for _name, _kw in OPTIONS.items():
    T.case(f"loss_{_name}", LOGITS, rtol=1e-4, grad_rtol=1e-3, grad_atol=1e-5)(
        lambda tf, x, kw=_kw: tf.nn.ctc_loss(labels(tf), x, LENGTHS, **kw)
    )
T.case("loss_float64", LOGITS64)(lambda tf, x: tf.nn.ctc_loss(labels(tf), x, LENGTHS))
T.case("loss_batch_major", LOGITS.transpose(1, 0, 2).copy(), rtol=1e-4, grad_rtol=1e-3, grad_atol=1e-5)(
    lambda tf, x: tf.nn.ctc_loss(labels(tf), x, LENGTHS, time_major=False)
)
T.case("loss_lengths_fed", LOGITS, np.array(LENGTHS, np.int32), rtol=1e-4, grad_rtol=1e-3, grad_atol=1e-5)(
    lambda tf, x, n: tf.reduce_mean(tf.nn.ctc_loss(labels(tf), x, n))
)
T.case("loss_longer_labels_ignored", LOGITS, rtol=1e-4, grad_rtol=1e-3, grad_atol=1e-5)(
    lambda tf, x: tf.nn.ctc_loss(labels(tf), x, [2, 7, 5, 3], ignore_longer_outputs_than_inputs=True)
)
for _merge in (True, False):
    T.case(f"greedy_merge_{_merge}", LOGITS, grad=False)(
        lambda tf, x, m=_merge: (lambda d: [d[0][0].indices, d[0][0].values, d[0][0].dense_shape, d[1]])(
            tf.nn.ctc_greedy_decoder(x, LENGTHS, merge_repeated=m)
        )
    )


@pytest.mark.parametrize("case", T.params())
def test_ctc_matches_tf1(case) -> None:  # type: ignore[no-untyped-def]
    compare(case)


@pytest.mark.parametrize(
    ("rows", "lengths", "message"),
    [
        (ROWS, [2, 7, 5, 9], "not enough time"),
        ([[1], [2], [], [3]], LENGTHS, "labels length is zero in batch 2"),
    ],
    ids=["labels_too_long", "empty_labels"],
)
def test_bad_labels_fail_as_in_tf1(rows, lengths, message) -> None:  # type: ignore[no-untyped-def]
    def run(tf):  # type: ignore[no-untyped-def]
        with tf.Graph().as_default():
            loss = tf.nn.ctc_loss(labels(tf, rows), tf.constant(LOGITS), lengths)
            with tf.Session() as sess:
                try:
                    sess.run(loss)
                except tf.errors.InvalidArgumentError as e:
                    return message in str(e).lower()
        return "ran"

    assert run_both(run) == {"antcolony": True, "tensorflow": True}


def test_names_and_static_shapes_match_tf1() -> None:
    def build(tf):  # type: ignore[no-untyped-def]
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [None, 4, CLASSES])
            loss = tf.nn.ctc_loss(labels(tf), x, LENGTHS)
            (decoded,), log_prob = tf.nn.ctc_greedy_decoder(x, LENGTHS)
            grad = tf.gradients(tf.reduce_sum(loss), x)[0]
            tensors = (loss, decoded.indices, decoded.values, decoded.dense_shape, log_prob, grad)
            return [(t.name, t.shape.as_list(), t.dtype.name) for t in tensors]

    got = run_both(build)
    assert got["antcolony"] == got["tensorflow"]
