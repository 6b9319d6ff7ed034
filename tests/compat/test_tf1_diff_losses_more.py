"""Differential test against TensorFlow 1: tf.losses.huber_loss, log_loss, hinge_loss,
cosine_distance and mean_pairwise_squared_error, with weights and reductions; forward, gradients
and the LOSSES collection (see tf1_diff.py)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    FRAMEWORKS,
    Case,
    Table,
    compare,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    rng,
)

T = Table()
Y = normal(4, 3, tag="y")
P = normal(4, 3, tag="p") * 2.0
W = np.array([[1.0], [0.0], [2.0], [0.5]], np.float32)
PROB = np.asarray(rng("prob").uniform(0.05, 0.95, (4, 3)), np.float32)
BIN = (rng("bin").random((4, 3)) < 0.5).astype(np.float32)


def _unit(a: np.ndarray) -> np.ndarray:
    return (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)


T.case("losses.huber_loss", Y, P)(
    lambda tf, y, p: [
        tf.losses.huber_loss(y, p),
        tf.losses.huber_loss(y, p, weights=W, delta=0.5),
        tf.losses.huber_loss(y, p, delta=2.0, reduction=tf.losses.Reduction.SUM),
        tf.losses.huber_loss(y, p, weights=W, reduction=tf.losses.Reduction.NONE),
    ]
)
T.case("losses.log_loss", BIN, PROB)(
    lambda tf, y, p: [tf.losses.log_loss(y, p), tf.losses.log_loss(y, p, weights=W, epsilon=1e-4)]
)
T.case("losses.hinge_loss", BIN, P)(
    lambda tf, y, z: [tf.losses.hinge_loss(y, z), tf.losses.hinge_loss(y, z, weights=W)]
)
T.case("losses.cosine_distance", _unit(Y), _unit(P))(
    lambda tf, y, p: [
        tf.losses.cosine_distance(y, p, axis=1),
        tf.losses.cosine_distance(y, p, dim=1, weights=W, reduction=tf.losses.Reduction.MEAN),
    ]
)
T.case("losses.mean_pairwise_squared_error", Y, P)(
    lambda tf, y, p: [
        tf.losses.mean_pairwise_squared_error(y, p),
        tf.losses.mean_pairwise_squared_error(y, p, weights=W),
        tf.losses.mean_pairwise_squared_error(y, p, weights=np.zeros((4, 1), np.float32)),
    ]
)
T.case("losses.mean_pairwise_squared_error_3d", normal(2, 3, 2, tag="y3"), normal(2, 3, 2, tag="p3"))(
    lambda tf, y, p: tf.losses.mean_pairwise_squared_error(y, p, weights=[[[2.0]], [[0.5]]])
)


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)


@pytest.mark.parametrize("fw", ["antcolony", "tensorflow"])
def test_each_loss_joins_the_losses_collection(fw: str) -> None:
    tf = FRAMEWORKS[fw]
    with tf.Graph().as_default():
        y, p = tf.constant(BIN), tf.constant(PROB)
        made = [
            tf.losses.huber_loss(y, p),
            tf.losses.log_loss(y, p),
            tf.losses.hinge_loss(y, p),
            tf.losses.cosine_distance(y, p, axis=1),
            tf.losses.mean_pairwise_squared_error(y, p),
        ]
        assert tf.losses.get_losses() == made
