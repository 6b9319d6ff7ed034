"""Reshape, ExpandDims and gather take any value a kernel may hand them: arrays, numpy scalars
(what arithmetic on 0-d values gives), views, and report a bad shape naming the node."""

from __future__ import annotations

import numpy as np
import pytest

import antcolony.compat.v1 as tf


def test_scalars_and_views_reshape_as_numpy_does() -> None:
    value = np.arange(12, dtype=np.float32).reshape(3, 4)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3, 4])
        mean = tf.reduce_mean(x)  # a numpy scalar on the host
        outs = [
            tf.reshape(mean * 2.0, [1, 1]),
            tf.expand_dims(mean, 0),
            tf.reshape(tf.transpose(x), [2, 6]),  # a non-contiguous view
            tf.reshape(x[:, 1], [3, 1]),
            tf.gather(tf.reshape(x, [-1]), [11, 0]),
        ]
    with tf.Session(graph=g) as sess:
        got = sess.run(outs, {x: value})
    m = np.float32(value.mean())
    np.testing.assert_array_equal(got[0], np.reshape(m * 2, (1, 1)))
    np.testing.assert_array_equal(got[1], np.reshape(m, (1,)))
    np.testing.assert_array_equal(got[2], value.T.reshape(2, 6))
    np.testing.assert_array_equal(got[3], value[:, 1].reshape(3, 1))
    np.testing.assert_array_equal(got[4], value.reshape(-1)[[11, 0]])


def test_a_shape_that_does_not_fit_names_the_node() -> None:
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None])
        y = tf.reshape(x, [4, -1], name="to_rows")
    with tf.Session(graph=g) as sess, pytest.raises(tf.errors.InvalidArgumentError, match="to_rows"):
        sess.run(y, {x: np.zeros(6, np.float32)})
