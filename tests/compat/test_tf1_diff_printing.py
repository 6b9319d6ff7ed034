"""What ``print(tensor)`` shows, against TF1: tutorials print tensors and show that output
(MorvanZhou/Tensorflow-Tutorial's 201_session.py printed ``<ac.Tensor ...>`` where TF1 prints
``Tensor("MatMul:0", shape=(1, 1), dtype=int32)``)."""

from __future__ import annotations

from typing import Any

from tests.compat.tf1_diff import acv1, tf1


def _printed(tf: Any) -> list[str]:
    g = tf.Graph()
    with g.as_default():
        a = tf.constant([[3, 3]])
        b = tf.constant([[2], [2]])
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        return [
            str(t)
            for t in (tf.matmul(a, b), x, tf.constant("hello"), tf.reduce_sum(x, 1), tf.cast(x, tf.bool))
        ]


def test_print_of_a_tensor_shows_what_tf1_shows():
    assert _printed(acv1) == _printed(tf1)
