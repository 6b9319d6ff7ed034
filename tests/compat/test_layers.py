"""tf.layers dense / dropout / flatten: variables and names as TF, values against numpy,
gradients against finite differences, and a small classifier that trains, saves and restores."""

from __future__ import annotations

import numpy as np
import pytest

import antcolony.compat.v1 as tf

from .gradcheck import check_gradients

_rng = np.random.default_rng(5)


@pytest.fixture(autouse=True)
def fresh_graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def test_dense_creates_kernel_and_bias_named_as_tf_and_computes_x_w_plus_b():
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.layers.dense(x, 4, activation=tf.nn.relu)
    z = tf.layers.dense(y, 2, use_bias=False, name="logits")
    names = [v.name for v in tf.trainable_variables()]
    assert names == ["dense/kernel:0", "dense/bias:0", "logits/kernel:0"]
    assert y.shape.as_list() == [None, 4] and z.shape.as_list() == [None, 2]
    xv = _rng.standard_normal((5, 3)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        k1, b1, k2, yv, zv = sess.run([*tf.trainable_variables(), y, z], {x: xv})
    np.testing.assert_array_equal(b1, np.zeros(4))
    np.testing.assert_allclose(yv, np.maximum(xv @ k1 + b1, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(zv, yv @ k2, rtol=1e-5, atol=1e-6)


def test_dense_default_names_are_unique_and_reuse_shares_the_variables():
    x = tf.placeholder(tf.float32, [None, 2])
    tf.layers.dense(x, 3)
    tf.layers.dense(x, 3)
    assert [v.op.name for v in tf.global_variables()] == [
        "dense/kernel",
        "dense/bias",
        "dense_1/kernel",
        "dense_1/bias",
    ]
    a = tf.layers.dense(x, 3, name="shared")
    b = tf.layers.dense(x, 3, name="shared", reuse=True)
    assert len(tf.global_variables()) == 6
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        av, bv = sess.run([a, b], {x: [[1.0, 2.0]]})
    np.testing.assert_array_equal(av, bv)
    with pytest.raises(ValueError, match="shared/kernel already exists"):
        tf.layers.dense(x, 3, name="shared")


def test_dense_on_a_rank_3_input_applies_to_the_last_axis():
    x = tf.placeholder(tf.float32, [None, 4, 3])
    y = tf.layers.dense(
        x, 2, kernel_initializer=tf.ones_initializer(), bias_initializer=tf.constant_initializer(0.5)
    )
    assert y.shape.as_list() == [None, 4, 2]
    xv = _rng.standard_normal((2, 4, 3)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(y, {x: xv}), xv @ np.ones((3, 2)) + 0.5, rtol=1e-5)


def test_dense_on_a_sequence_of_unknown_batch_and_length_applies_to_the_last_axis():
    """[batch, time, features] with batch and time unknown, as a seq2seq decoder's projection
    (golbin/TensorFlow-Tutorials' Seq2Seq.py was refused at graph build)."""
    x = tf.placeholder(tf.float32, [None, None, 3])
    w = _rng.standard_normal((3, 2)).astype(np.float32)
    y = tf.layers.dense(x, 2, kernel_initializer=tf.constant_initializer(w))
    assert y.shape.as_list() == [None, None, 2]
    (grad,) = tf.gradients(tf.reduce_sum(y * y), [x])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for shape in ((2, 5, 3), (1, 7, 3)):
            xv = _rng.standard_normal(shape).astype(np.float32)
            out, g = sess.run([y, grad], {x: xv})
            np.testing.assert_allclose(out, xv @ w, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(g, 2 * (xv @ w) @ w.T, rtol=1e-4, atol=1e-5)


def test_dense_initializers_by_name_regularizers_and_trainable():
    x = tf.placeholder(tf.float32, [None, 8])
    tf.layers.dense(
        x,
        4,
        kernel_initializer="zeros",
        kernel_regularizer=lambda k: tf.reduce_sum(k) + 1.0,
        activity_regularizer=lambda a: tf.reduce_mean(a),
        trainable=False,
        name="frozen",
    )
    assert tf.trainable_variables() == []
    assert [v.op.name for v in tf.global_variables()] == ["frozen/kernel", "frozen/bias"]
    regs = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(regs) == 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(regs[0]) == pytest.approx(1.0)
        assert sess.run(regs[1], {x: np.ones((2, 8))}) == pytest.approx(0.0)


def test_dense_needs_a_known_last_dimension_and_float_inputs():
    with pytest.raises(ValueError, match=r"last dimension .* must be known"):
        tf.layers.dense(tf.placeholder(tf.float32, [None, None]), 2)
    with pytest.raises(ValueError, match="floating-point"):
        tf.layers.dense(tf.placeholder(tf.int32, [None, 2]), 2)


def test_dense_gradients_match_finite_differences():
    def net(x):
        h = tf.layers.dense(
            x, 4, activation=tf.nn.tanh, kernel_initializer=tf.random_normal_initializer(seed=1)
        )
        return tf.layers.dense(h, 2, bias_initializer=tf.constant_initializer(0.3))

    check_gradients(net, [_rng.standard_normal((3, 5))])


def test_dense_gradients_reach_its_variables():
    x = tf.constant(_rng.standard_normal((6, 3)))
    y = tf.layers.dense(x, 2, kernel_initializer=tf.random_normal_initializer(seed=2))
    loss = tf.reduce_sum(tf.square(y))
    kernel, bias = tf.trainable_variables()
    dk, db = tf.gradients(loss, [kernel, bias])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        xv, kv, bv, dkv, dbv = sess.run([x, kernel, bias, dk, db])
    yv = xv @ kv + bv
    np.testing.assert_allclose(dkv, xv.T @ (2 * yv), rtol=1e-10)
    np.testing.assert_allclose(dbv, (2 * yv).sum(axis=0), rtol=1e-10)


def test_dropout_layer_is_identity_unless_training():
    tf.set_random_seed(8)
    x = tf.ones([100, 100])
    training = tf.placeholder(tf.bool, [])
    off = tf.layers.dropout(x, rate=0.4)
    on = tf.layers.dropout(x, rate=0.4, training=True)
    switch = tf.layers.dropout(x, rate=0.4, training=training)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(off), np.ones((100, 100)))
        onv = sess.run(on)
        assert (onv > 0).mean() == pytest.approx(0.6, abs=0.02)
        np.testing.assert_array_equal(sess.run(switch, {training: False}), np.ones((100, 100)))
        sw = sess.run(switch, {training: True})
        assert (sw > 0).mean() == pytest.approx(0.6, abs=0.02)
        assert set(np.unique(sw)) == {0.0, np.float32(1 / 0.6)}


def test_flatten_keeps_the_batch_axis():
    x = tf.placeholder(tf.float32, [None, 2, 3, 4])
    f = tf.layers.flatten(x)
    fc = tf.layers.flatten(x, data_format="channels_first")
    assert f.shape.as_list() == [None, 24]
    xv = _rng.standard_normal((5, 2, 3, 4)).astype(np.float32)
    with tf.Session() as sess:
        fv, fcv = sess.run([f, fc], {x: xv})
    np.testing.assert_array_equal(fv, xv.reshape(5, 24))
    np.testing.assert_array_equal(fcv, xv.transpose(0, 2, 3, 1).reshape(5, 24))
    assert tf.layers.flatten(tf.placeholder(tf.float32, [7, None])).shape.as_list() == [7, None]
    with pytest.raises(ValueError, match="either its first dimension or all the others"):
        tf.layers.flatten(tf.placeholder(tf.float32, [None, None, 2]))
    check_gradients(tf.layers.flatten, [_rng.standard_normal((2, 3, 2))])


def test_a_tf1_classifier_trains_with_layers_losses_and_adam_then_saves_and_restores(tmp_path):
    # Two Gaussian blobs per class in 2-D, four classes: needs the hidden layer.
    centers = np.array([[2, 2], [-2, -2], [2, -2], [-2, 2], [0, 3], [0, -3], [3, 0], [-3, 0]], np.float32)
    labels_of_center = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    idx = _rng.integers(0, 8, 1200)
    data = centers[idx] + 0.3 * _rng.standard_normal((1200, 2)).astype(np.float32)
    labels = labels_of_center[idx]
    train_x, test_x, train_y, test_y = data[:1000], data[1000:], labels[:1000], labels[1000:]

    tf.set_random_seed(0)
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    training = tf.placeholder_with_default(False, [], name="training")
    with tf.variable_scope("mlp"):
        h = tf.layers.dense(x, 32, activation=tf.nn.relu)
        h = tf.layers.dropout(h, rate=0.1, training=training)
        logits = tf.layers.dense(h, 4)
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(150):
            batch = _rng.integers(0, 1000, 100)
            sess.run(train, {x: train_x[batch], y: train_y[batch], training: True})
        trained = sess.run(accuracy, {x: test_x, y: test_y})
        path = saver.save(sess, str(tmp_path / "mlp"), global_step=150)
    assert trained >= 0.95
    assert [v.op.name for v in tf.trainable_variables()] == [
        "mlp/dense/kernel",
        "mlp/dense/bias",
        "mlp/dense_1/kernel",
        "mlp/dense_1/bias",
    ]
    with tf.Session() as sess:
        saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
        assert path.endswith("mlp-150")
        assert sess.run(accuracy, {x: test_x, y: test_y}) == pytest.approx(trained)
