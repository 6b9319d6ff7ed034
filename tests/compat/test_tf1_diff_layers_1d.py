"""Differential test against TensorFlow 1: tf.layers.conv1d, max_pooling1d and average_pooling1d
(a text CNN's layers), with the same initial weights; forward, gradients with
respect to inputs and variables, and variable names (see tf1_diff.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    Case,
    Table,
    compare,
    needs_tf_layers,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
)

pytestmark = pytest.mark.filterwarnings("ignore:`tf.layers.:UserWarning")
T = Table()
LAYERS = {"marks": (needs_tf_layers,)}
SEQ = normal(2, 11, 4, tag="seq")  # [batch, width, channels]
K3 = normal(3, 4, 5, tag="k3") * 0.4
K2 = normal(2, 5, 6, tag="k2") * 0.4
BIAS = normal(5, tag="bias1d")


def _text_cnn(tf, x):
    h = tf.layers.conv1d(
        x,
        5,
        3,
        activation=tf.nn.relu,
        kernel_initializer=tf.constant_initializer(K3),
        bias_initializer=tf.constant_initializer(BIAS),
    )
    h = tf.layers.max_pooling1d(h, 2, 2)
    h = tf.layers.conv1d(h, 6, 2, strides=2, padding="same", kernel_initializer=tf.constant_initializer(K2))
    return [h, tf.layers.average_pooling1d(h, 2, 1, padding="same"), tf.layers.max_pooling1d(h, 2, 1)]


T.case("layers.text_cnn", SEQ, grad_atol=1e-4, **LAYERS)(_text_cnn)
T.case("layers.conv1d_dilated", SEQ, grad_atol=1e-4, **LAYERS)(
    lambda tf, x: tf.layers.conv1d(
        x,
        5,
        3,
        dilation_rate=2,
        padding="same",
        kernel_initializer=tf.constant_initializer(K3),
        name="dilated",
    )
)


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)
