"""Differential test against TensorFlow 1: dense optimizer updates of a variable large enough to
be updated in chunks on several threads (devices/kernels/elementwise.py) equal TF1's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from antcolony.devices.kernels.elementwise import CHUNK, PARALLEL_MIN

from .tf1_diff import assert_same, normal, park_tf_objects, run_both  # noqa: F401

SHAPE = (1201, 1097)  # more than PARALLEL_MIN elements, not a multiple of CHUNK

OPTIMIZERS: dict[str, Callable[[Any], Any]] = {
    "sgd": lambda tf: tf.train.GradientDescentOptimizer(0.1),
    "momentum": lambda tf: tf.train.MomentumOptimizer(0.1, 0.9),
    "nesterov": lambda tf: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
    "adagrad": lambda tf: tf.train.AdagradOptimizer(0.2),
    "rmsprop": lambda tf: tf.train.RMSPropOptimizer(0.05, momentum=0.5),
    "rmsprop_centered": lambda tf: tf.train.RMSPropOptimizer(0.05, momentum=0.3, centered=True),
    "adam": lambda tf: tf.train.AdamOptimizer(0.1),
    "ftrl": lambda tf: tf.train.FtrlOptimizer(
        0.3, l1_regularization_strength=0.05, l2_regularization_strength=0.1
    ),
}


def _train(tf: Any, make_optimizer: Callable[[Any], Any]) -> dict[str, np.ndarray]:
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(normal(*SHAPE, tag="w"), name="w")
        x = tf.constant(normal(*SHAPE, tag="x"))
        loss = tf.reduce_sum(tf.square(w * x - 1.0))
        train = make_optimizer(tf).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(2):
                sess.run(train)
            return {v.op.name: sess.run(v) for v in tf.global_variables()}


def test_the_shape_takes_the_chunked_threaded_path() -> None:
    n = SHAPE[0] * SHAPE[1]
    assert n >= PARALLEL_MIN and n % CHUNK


@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
def test_large_dense_update_matches_tf1(optimizer: str) -> None:
    got = run_both(lambda tf: _train(tf, OPTIMIZERS[optimizer]))
    ours, ref = got["antcolony"], got["tensorflow"]
    assert sorted(ours) == sorted(ref)
    for name, r in ref.items():
        assert_same(ours[name], r, 2e-5, 1e-6, f"{optimizer}: {name}")
