"""tf.layers.batch_normalization: batch statistics while training, moving averages updated
through UPDATE_OPS (read after their update, the control_dependencies idiom), inference mode."""

from __future__ import annotations

import numpy as np
import pytest

import antcolony.compat.v1 as tf

from .gradcheck import check_gradients

_rng = np.random.default_rng(3)


@pytest.fixture(autouse=True)
def fresh_graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _normalize(x, mean, var, gamma=1.0, beta=0.0, eps=1e-3):
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def test_variables_collections_and_update_ops():
    x = tf.placeholder(tf.float32, [None, 3])
    tf.layers.batch_normalization(x, training=True)
    assert [v.op.name for v in tf.global_variables()] == [
        "batch_normalization/gamma",
        "batch_normalization/beta",
        "batch_normalization/moving_mean",
        "batch_normalization/moving_variance",
    ]
    assert [v.op.name for v in tf.trainable_variables()] == [
        "batch_normalization/gamma",
        "batch_normalization/beta",
    ]
    assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 2
    tf.layers.batch_normalization(x, training=False)
    assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 2
    assert tf.global_variables()[-1].op.name == "batch_normalization_1/moving_variance"


def test_training_mode_normalises_with_batch_statistics_and_updates_the_moving_averages():
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.layers.batch_normalization(
        x,
        momentum=0.9,
        training=True,
        gamma_initializer=tf.constant_initializer(2.0),
        beta_initializer=tf.constant_initializer(0.5),
    )
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    moving_mean, moving_var = tf.global_variables()[2:]
    batches = [(_rng.standard_normal((16, 4)) * 3 + 1).astype(np.float32) for _ in range(3)]
    want_mean, want_var = np.zeros(4), np.ones(4)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for b in batches:
            yv, _ = sess.run([y, updates], {x: b})
            np.testing.assert_allclose(yv, _normalize(b, b.mean(0), b.var(0), 2.0, 0.5), rtol=1e-4, atol=1e-4)
            want_mean = want_mean * 0.9 + b.mean(0) * 0.1
            want_var = want_var * 0.9 + b.var(0) * 0.1
        got_mean, got_var = sess.run([moving_mean, moving_var])
    np.testing.assert_allclose(got_mean, want_mean, rtol=1e-5)
    np.testing.assert_allclose(got_var, want_var, rtol=1e-5)


def test_inference_mode_uses_the_moving_averages():
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.layers.batch_normalization(
        x,
        training=False,
        moving_mean_initializer=tf.constant_initializer([1.0, -1.0]),
        moving_variance_initializer=tf.constant_initializer([4.0, 0.25]),
    )
    xv = _rng.standard_normal((5, 2)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(
            sess.run(y, {x: xv}), _normalize(xv, np.array([1.0, -1.0]), np.array([4.0, 0.25])), rtol=1e-5
        )


def test_a_training_tensor_switches_modes_and_updates_only_when_true():
    x = tf.placeholder(tf.float32, [None, 3])
    training = tf.placeholder(tf.bool, [])
    y = tf.layers.batch_normalization(x, momentum=0.5, training=training)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    moving_mean = tf.global_variables()[2]
    b = (_rng.standard_normal((8, 3)) + 2).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        inference, _ = sess.run([y, updates], {x: b, training: False})
        np.testing.assert_allclose(inference, _normalize(b, 0.0, 1.0), rtol=1e-5)
        np.testing.assert_array_equal(sess.run(moving_mean), np.zeros(3))
        trained, _ = sess.run([y, updates], {x: b, training: True})
        np.testing.assert_allclose(trained, _normalize(b, b.mean(0), b.var(0)), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(sess.run(moving_mean), 0.5 * b.mean(0), rtol=1e-5)


def test_update_ops_as_control_dependencies_of_the_train_op():
    x = tf.placeholder(tf.float32, [None, 2])
    h = tf.layers.batch_normalization(x, momentum=0.0, training=True)
    loss = tf.reduce_mean(tf.square(tf.layers.dense(h, 1) - 1.0))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    moving_mean = tf.global_variables()[2]
    b = np.array([[1.0, 2.0], [3.0, 6.0]], np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {x: b})
        np.testing.assert_allclose(sess.run(moving_mean), [2.0, 4.0])


def test_channels_first_axis_one():
    x = tf.placeholder(tf.float32, [None, 3, 2, 2])
    y = tf.layers.batch_normalization(x, axis=1, training=True)
    xv = _rng.standard_normal((4, 3, 2, 2)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(y, {x: xv})
    mean = xv.mean(axis=(0, 2, 3), keepdims=True)
    var = xv.var(axis=(0, 2, 3), keepdims=True)
    np.testing.assert_allclose(got, _normalize(xv, mean, var), rtol=1e-4, atol=1e-4)


def test_training_gradients_match_finite_differences():
    check_gradients(
        lambda x: tf.layers.batch_normalization(
            x,
            training=True,
            gamma_initializer=tf.constant_initializer([1.5, 0.5, 2.0]),
        ),
        [_rng.standard_normal((5, 3))],
        rtol=1e-4,
        atol=1e-6,
    )


def test_bad_inputs_are_errors():
    with pytest.raises(ValueError, match="must be known"):
        tf.layers.batch_normalization(tf.placeholder(tf.float32, [None, None]))
    with pytest.raises(ValueError, match="out of range"):
        tf.layers.batch_normalization(tf.placeholder(tf.float32, [None, 2]), axis=3)
