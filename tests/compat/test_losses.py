"""tf.losses: values against numpy for every reduction, gradients against finite differences,
and the LOSSES / regularization collections."""

from __future__ import annotations

import numpy as np
import pytest

import antcolony.compat.v1 as tf

from .gradcheck import check_gradients

_rng = np.random.default_rng(11)
R = tf.losses.Reduction


def _run(fn, *inputs):
    g = tf.Graph()
    with g.as_default():
        out = fn(*[tf.constant(np.asarray(a)) for a in inputs])
        with tf.Session() as sess:
            return sess.run(out)


def _reduce(per, w, reduction):
    weighted = per * w
    full_w = np.broadcast_to(w, per.shape)
    if reduction == R.NONE:
        return weighted
    if reduction == R.SUM:
        return weighted.sum()
    if reduction == R.MEAN:
        return weighted.sum() / full_w.sum()
    if reduction == R.SUM_OVER_BATCH_SIZE:
        return weighted.sum() / per.size
    return weighted.sum() / np.count_nonzero(full_w)


REDUCTIONS = [R.NONE, R.SUM, R.MEAN, R.SUM_OVER_BATCH_SIZE, R.SUM_BY_NONZERO_WEIGHTS]


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mean_squared_error_with_weights_and_each_reduction(reduction):
    y, p = _rng.standard_normal((4, 3)), _rng.standard_normal((4, 3))
    w = np.array([[1.0], [0.0], [2.0], [0.5]])
    got = _run(lambda a, b, c: tf.losses.mean_squared_error(a, b, weights=c, reduction=reduction), y, p, w)
    np.testing.assert_allclose(got, _reduce((p - y) ** 2, w, reduction), rtol=1e-12)
    check_gradients(
        lambda a, b: tf.losses.mean_squared_error(a, b, weights=tf.constant(w), reduction=reduction), [y, p]
    )


def test_absolute_difference_default_reduction():
    y, p = _rng.standard_normal(5), _rng.standard_normal(5)
    np.testing.assert_allclose(_run(tf.losses.absolute_difference, y, p), np.abs(p - y).mean(), rtol=1e-12)


def test_all_zero_weights_give_zero_not_nan_and_a_zero_gradient():
    g = tf.Graph()
    with g.as_default():
        p = tf.constant([1.0, 2.0])
        loss = tf.losses.mean_squared_error([0.0, 0.0], p, weights=0.0)
        (dp,) = tf.gradients(loss, [p])
        with tf.Session() as sess:
            lv, dv = sess.run([loss, dp])
    assert lv == 0.0
    np.testing.assert_array_equal(dv, [0.0, 0.0])


def test_sigmoid_cross_entropy_with_label_smoothing():
    x, z = _rng.standard_normal((3, 4)) * 2, (_rng.uniform(size=(3, 4)) > 0.5).astype(np.float64)
    zs = z * 0.8 + 0.5 * 0.2
    per = np.maximum(x, 0) - x * zs + np.log1p(np.exp(-np.abs(x)))
    got = _run(lambda a, b: tf.losses.sigmoid_cross_entropy(b, a, label_smoothing=0.2), x, z)
    np.testing.assert_allclose(got, per.mean(), rtol=1e-12)
    check_gradients(lambda a: tf.losses.sigmoid_cross_entropy(tf.constant(z), a, label_smoothing=0.2), [x])


def test_softmax_cross_entropy_with_per_example_weights_and_smoothing():
    x = _rng.standard_normal((4, 5))
    labels = np.eye(5)[[0, 3, 1, 4]]
    w = np.array([1.0, 2.0, 0.0, 1.0])
    smooth = labels * 0.9 + 0.1 / 5
    logp = x - np.log(np.exp(x).sum(axis=1, keepdims=True))
    per = -(smooth * logp).sum(axis=1)
    got = _run(
        lambda a, b, c: tf.losses.softmax_cross_entropy(b, a, weights=c, label_smoothing=0.1), x, labels, w
    )
    np.testing.assert_allclose(got, (per * w).sum() / 3, rtol=1e-12)
    check_gradients(
        lambda a: tf.losses.softmax_cross_entropy(
            tf.constant(labels), a, weights=tf.constant(w), label_smoothing=0.1
        ),
        [x],
    )


def test_sparse_softmax_cross_entropy():
    x = _rng.standard_normal((3, 4))
    labels = np.array([2, 0, 3])
    logp = x - np.log(np.exp(x).sum(axis=1, keepdims=True))
    got = _run(lambda a, b: tf.losses.sparse_softmax_cross_entropy(b, a), x, labels)
    np.testing.assert_allclose(got, -logp[np.arange(3), labels].mean(), rtol=1e-12)
    check_gradients(lambda a: tf.losses.sparse_softmax_cross_entropy(tf.constant(labels), a), [x])


def test_losses_collect_and_the_total_loss_adds_regularization():
    g = tf.Graph()
    with g.as_default():
        w = tf.get_variable(
            "w", initializer=np.array([3.0, 4.0]), regularizer=lambda v: 0.5 * tf.reduce_sum(v * v)
        )
        a = tf.losses.mean_squared_error([0.0, 0.0], w)
        b = tf.losses.absolute_difference([1.0, 1.0], w, loss_collection=None)
        extra = tf.constant(10.0, tf.float64)
        tf.losses.add_loss(extra)
        assert tf.losses.get_losses() == [a, extra]
        assert b not in tf.losses.get_losses()
        total = tf.losses.get_total_loss()
        no_reg = tf.losses.get_total_loss(add_regularization_losses=False)
        reg = tf.losses.get_regularization_loss()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tv, nv, rv = sess.run([total, no_reg, reg])
    assert rv == pytest.approx(12.5)
    assert nv == pytest.approx(12.5 + 10.0)
    assert tv == pytest.approx(12.5 + 10.0 + 12.5)


def test_total_loss_without_losses_is_an_error_and_regularization_loss_defaults_to_zero():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="no losses found"):
            tf.losses.get_total_loss()
        with tf.Session() as sess:
            assert sess.run(tf.losses.get_regularization_loss()) == 0.0
        with pytest.raises(ValueError, match="unknown loss reduction"):
            tf.losses.compute_weighted_loss(tf.constant([1.0]), reduction="mostly")
