"""Differential test against TensorFlow 1: ProximalGradientDescentOptimizer and
ProximalAdagradOptimizer (dense and sparse gradients, repeated indices, L1 and L2 strengths,
slot names), and the learning-rate schedules linear_cosine_decay, cosine_decay_restarts and
piecewise_constant_decay over a range of global steps."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import assert_same, normal, park_tf_objects, run_both  # noqa: F401

W0 = normal(5, 3, tag="w0")
X = normal(4, 5, tag="x")
IDS = np.array([1, 3, 1, 0], np.int32)


def _train(tf: Any, make: Any, steps: int = 4) -> dict[str, Any]:
    with tf.Graph().as_default():
        w = tf.Variable(W0, name="w")
        table = tf.Variable(W0 * 0.5, name="table")
        dense_loss = tf.reduce_sum(tf.square(tf.matmul(tf.constant(X), w) - 1.0))
        sparse_loss = tf.reduce_sum(tf.sin(tf.gather(table, IDS)))  # an IndexedSlices gradient
        opt = make(tf)
        train = opt.minimize(dense_loss + sparse_loss)
        slots = sorted(v.op.name for v in tf.global_variables() if v.op.name not in ("w", "table"))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(train)
            return {"w": sess.run(w), "table": sess.run(table), "slots": slots}


OPTIMIZERS = {
    "pgd_plain": lambda tf: tf.train.ProximalGradientDescentOptimizer(0.01),
    "pgd_l1_l2": lambda tf: tf.train.ProximalGradientDescentOptimizer(
        0.05, l1_regularization_strength=0.3, l2_regularization_strength=0.2
    ),
    "padagrad_plain": lambda tf: tf.train.ProximalAdagradOptimizer(0.1),
    "padagrad_l1_l2": lambda tf: tf.train.ProximalAdagradOptimizer(
        0.2, initial_accumulator_value=0.5, l1_regularization_strength=0.05, l2_regularization_strength=0.1
    ),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_proximal_optimizer_matches_tf1(name: str) -> None:
    got = run_both(lambda tf: _train(tf, OPTIMIZERS[name]))
    ours, ref = got["antcolony"], got["tensorflow"]
    assert ours["slots"] == ref["slots"]
    for key in ("w", "table"):
        assert_same(ours[key], ref[key], 1e-5, 1e-6, f"{name}: {key} after 4 steps")
    assert not np.allclose(ours["table"], W0 * 0.5)  # the sparse rows moved


SCHEDULES = {
    "linear_cosine": lambda tf, s: tf.train.linear_cosine_decay(0.1, s, 40),
    "linear_cosine_periods": lambda tf, s: tf.train.linear_cosine_decay(
        0.1, s, 40, num_periods=2.0, alpha=0.1, beta=0.01
    ),
    "restarts_t2": lambda tf, s: tf.train.cosine_decay_restarts(0.1, s, 10),
    "restarts_t1_m05": lambda tf, s: tf.train.cosine_decay_restarts(
        0.1, s, 10, t_mul=1.0, m_mul=0.5, alpha=0.1
    ),
    "restarts_t15": lambda tf, s: tf.train.cosine_decay_restarts(0.2, s, 7, t_mul=1.5, m_mul=0.8),
    "piecewise_constant_decay": lambda tf, s: tf.train.piecewise_constant_decay(
        s, [10, 30], [0.1, 0.05, 0.01]
    ),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_matches_tf1(name: str) -> None:
    def values(tf: Any) -> list[Any]:
        with tf.Graph().as_default():
            step = tf.placeholder(tf.int64, [])
            lr = SCHEDULES[name](tf, step)
            with tf.Session() as sess:
                return [sess.run(lr, {step: s}) for s in (0, 1, 5, 9, 10, 11, 25, 29, 30, 39, 40, 41, 75)]

    got = run_both(values)
    assert_same(got["antcolony"], got["tensorflow"], 1e-5, 1e-7, name)
