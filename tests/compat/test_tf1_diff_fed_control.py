"""Differential test against TensorFlow 1: a control dependency on a fed op.

TF1 runs ``with tf.control_dependencies([p.op]): y = ...`` with ``p`` fed: the feed stands in
for the placeholder, and the edge is met once the value is there. An op that merely reads a fed
placeholder still runs first; an unfed placeholder behind a control edge is still an error.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import park_tf_objects, run_both  # noqa: F401 - autouse fixture

ONES = np.ones(2, np.float32)


def _fed_placeholder_op(tf: Any) -> list[Any]:
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [2], name="p")
        q = tf.placeholder(tf.float32, [2], name="q")
        with tf.control_dependencies([p.op]):
            y = tf.constant([1.0, 2.0]) * 3.0
        with tf.control_dependencies([p.op, q.op]):
            z = p + q
        with tf.Session() as sess:
            return [
                sess.run(y, feed_dict={p: ONES}),
                sess.run([y, z], feed_dict={(p, q): (ONES, 2 * ONES)}),
                sess.run(z, feed_dict={p: ONES, q: ONES}),
            ]


def _op_reading_fed_placeholder(tf: Any) -> list[Any]:
    """The control input reads the fed placeholder: it runs, before the op that waits on it."""
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [2], name="p")
        v = tf.Variable(np.zeros(2, np.float32), name="v")
        add = tf.assign_add(v, p * 2.0)
        with tf.control_dependencies([add.op]):
            y = tf.identity(v) + 0.0
        with tf.control_dependencies([add]):
            w = tf.constant(5.0)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(y, feed_dict={p: ONES})
            sess.run(w, feed_dict={(p,): (3 * ONES,)})
            return [first, sess.run(v)]


def _unfed_placeholder_op(tf: Any) -> str:
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [2], name="p")
        with tf.control_dependencies([p.op]):
            y = tf.constant(1.0) + 1.0
        with tf.Session() as sess:
            try:
                sess.run(y)
            except tf.errors.InvalidArgumentError as e:
                return "must feed" if "must feed a value" in str(e) else str(e)
            return "ran"


def _check(got: dict[str, Any]) -> None:
    ours, ref = got["antcolony"], got["tensorflow"]
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref, strict=True):
        if isinstance(b, list):
            for x, r in zip(a, b, strict=True):
                np.testing.assert_allclose(x, r)
        else:
            np.testing.assert_allclose(a, b)


def test_control_dependency_on_fed_placeholder_op() -> None:
    got = run_both(_fed_placeholder_op)
    _check(got)
    np.testing.assert_allclose(got["antcolony"][0], [3.0, 6.0])


def test_control_dependency_on_op_reading_fed_placeholder() -> None:
    got = run_both(_op_reading_fed_placeholder)
    _check(got)
    np.testing.assert_allclose(got["antcolony"][1], [8.0, 8.0])


def test_control_dependency_on_unfed_placeholder_still_fails() -> None:
    got = run_both(_unfed_placeholder_op)
    assert got["antcolony"] == got["tensorflow"] == "must feed"


def _metric_mean_fed(tf: Any) -> dict[str, Any]:
    """``metrics.mean``'s count update waits on the values: here the fed placeholder's op."""
    with tf.Graph().as_default() as g:
        p = tf.placeholder(tf.float32, [None], name="p")
        value, update = tf.metrics.mean(p)
        edges = {o.name: sorted(c.name for c in o.control_inputs) for o in g.get_operations()}
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            sess.run(update, feed_dict={p: [1.0, 2.0]})
            updated = sess.run(update, feed_dict={p: [6.0]})
            return {"edges": {k: v for k, v in edges.items() if v}, "values": [updated, sess.run(value)]}


def test_metrics_mean_count_waits_on_fed_values() -> None:
    got = run_both(_metric_mean_fed)
    assert got["antcolony"]["edges"] == got["tensorflow"]["edges"] == {"mean/AssignAdd_1": ["p"]}
    np.testing.assert_allclose(got["antcolony"]["values"], got["tensorflow"]["values"])
    np.testing.assert_allclose(got["antcolony"]["values"], [3.0, 3.0])
