"""Differential test against TensorFlow 1: every optimizer trains a scalar variable
(``tf.Variable(0.0)``), three steps, to TF's values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import assert_same, park_tf_objects, run_both  # noqa: F401 - an autouse fixture

OPTIMIZERS: dict[str, Callable[[Any], Any]] = {
    "sgd": lambda tf: tf.train.GradientDescentOptimizer(0.1),
    "momentum": lambda tf: tf.train.MomentumOptimizer(0.1, 0.9),
    "nesterov": lambda tf: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "adam": lambda tf: tf.train.AdamOptimizer(0.1),
    "adagrad": lambda tf: tf.train.AdagradOptimizer(0.1),
    "rmsprop": lambda tf: tf.train.RMSPropOptimizer(0.1),
    "rmsprop_centered_momentum": lambda tf: tf.train.RMSPropOptimizer(0.1, momentum=0.5, centered=True),
    "adadelta": lambda tf: tf.train.AdadeltaOptimizer(0.5),
}


def _train_scalar(tf: Any, make: Callable[[Any], Any]) -> list[np.ndarray]:
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(0.0, name="v")
        w = tf.Variable([1.0, -2.0], name="w")  # a scalar beside a vector in one apply_gradients
        loss = tf.square(v - 3.0) + tf.reduce_sum(tf.square(w * v - 1.0))
        train = make(tf).minimize(loss)
        init = tf.global_variables_initializer()
    values = []
    with tf.Session(graph=g) as sess:
        sess.run(init)
        for _ in range(3):
            sess.run(train)
            values.append(np.asarray(sess.run(v)))
    return values


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_on_scalar_variable(name: str) -> None:
    got = run_both(lambda tf: _train_scalar(tf, OPTIMIZERS[name]))
    for step, (ours, ref) in enumerate(zip(got["antcolony"], got["tensorflow"])):
        assert ours.shape == ()
        assert_same(ours, ref, 1e-5, 1e-6, f"{name} step {step + 1}")
