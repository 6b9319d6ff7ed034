"""Gradients of reductions: reduce_mean's is the incoming gradient over the number of elements
each output averages, with the input's shape known when building (a constant count) or only
when running; reduce_sum's broadcasts the incoming gradient back, whatever memory holds it (a
value broadcast already, a column sliced from another gradient)."""

from __future__ import annotations

import numpy as np
import pytest

import antcolony.compat.v1 as tf


@pytest.mark.parametrize("known", [True, False], ids=["static", "dynamic"])
@pytest.mark.parametrize(
    ("axis", "keepdims"), [(None, False), (0, False), (1, True), ((0, 2), False), (-1, True)]
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mean_gradient_divides_by_the_averaged_count(known: bool, axis, keepdims: bool, dtype) -> None:
    rng = np.random.default_rng(0)
    value = rng.standard_normal((4, 3, 5)).astype(dtype)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(dtype, value.shape if known else [None, 3, None])
        y = tf.reduce_mean(x, axis=axis, keepdims=keepdims)
        upstream = rng.standard_normal(np.mean(value, axis=axis, keepdims=keepdims).shape).astype(dtype)
        (grad,) = tf.gradients(y, [x], grad_ys=tf.constant(upstream))
    with tf.Session(graph=g) as sess:
        got_y, got = sess.run([y, grad], {x: value})
    count = value.size // max(np.asarray(got_y).size, 1)
    kept = upstream.reshape(np.mean(value, axis=axis, keepdims=True).shape)
    want = np.broadcast_to(kept / dtype(count), value.shape)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradient_of_a_mean_of_row_sums_broadcasts_the_mean_gradient_to_every_element(dtype) -> None:
    # the mean's gradient is one value broadcast along the rows; the sum's broadcasts it again
    # along the columns, to the elements that a product then reads
    rng = np.random.default_rng(1)
    value, scale = rng.standard_normal((6, 5)).astype(dtype), rng.standard_normal((6, 5)).astype(dtype)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(dtype, value.shape)
        loss = tf.reduce_mean(tf.reduce_sum(x * scale, axis=1))
        (grad,) = tf.gradients(loss * 3.0, [x])
    with tf.Session(graph=g) as sess:
        got = sess.run(grad, {x: value})
    np.testing.assert_allclose(got, scale * dtype(3.0) / dtype(6), rtol=1e-6)
    assert got.dtype == dtype and got.shape == value.shape


@pytest.mark.parametrize("rows", [4, 5000])
def test_gradient_of_a_row_sum_concatenated_with_other_columns(rows: int) -> None:
    # concat's gradient hands the sum a column sliced from its own (a strided view)
    rng = np.random.default_rng(2)
    value, other = rng.standard_normal((rows, 3)), rng.standard_normal((rows, 2))
    scale = rng.standard_normal((rows, 3))
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float64, value.shape)
        joined = tf.concat([tf.reduce_sum(x, axis=1, keepdims=True), tf.constant(other)], axis=1)
        loss = tf.reduce_sum(joined * tf.constant(scale))
        (grad,) = tf.gradients(loss, [x])
    with tf.Session(graph=g) as sess:
        got = sess.run(grad, {x: value})
    np.testing.assert_array_equal(got, np.broadcast_to(scale[:, :1], value.shape))
