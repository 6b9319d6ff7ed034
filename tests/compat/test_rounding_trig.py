"""floordiv / mod and their operators, floor, sin / cos and cosine_decay: values against numpy,
gradients against finite differences, integer division by zero refused as TF."""

from __future__ import annotations

import numpy as np
import pytest

import antcolony.compat.v1 as tf

from .gradcheck import check_gradients

_rng = np.random.default_rng(23)


def _run(out, feed=None):
    with tf.Session(graph=out.graph) as sess:
        return sess.run(out, feed)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_floordiv_and_mod_round_toward_negative_infinity(dtype):
    x = np.array([[7, -7, 7, -7, 0, 9]], dtype=dtype)
    y = np.array([2, 2, -2, -2, 3, 4], dtype=dtype)
    g = tf.Graph()
    with g.as_default():
        a, b = tf.constant(x), tf.constant(y)
        outs = [a // b, a % b, tf.floordiv(a, b), tf.mod(a, b), tf.floormod(a, b), 10 // b, 10 % b]
        with tf.Session() as sess:
            q, r, q2, r2, r3, rq, rr = sess.run(outs)
    np.testing.assert_array_equal(q, np.floor_divide(x, y))
    np.testing.assert_array_equal(r, np.mod(x, y))
    np.testing.assert_array_equal(q * y + r, x)  # the identity TF documents
    assert q.dtype == dtype and r.dtype == dtype
    np.testing.assert_array_equal(q2, q)
    np.testing.assert_array_equal(r2, r)
    np.testing.assert_array_equal(r3, r)
    np.testing.assert_array_equal(rq, np.floor_divide(dtype(10), y))
    np.testing.assert_array_equal(rr, np.mod(dtype(10), y))
    assert (r[0, 2], r[0, 1]) == (-1, 1)  # the remainder takes the divisor's sign


def test_integer_division_by_zero_is_an_invalid_argument_naming_the_node():
    g = tf.Graph()
    with g.as_default():
        d = tf.placeholder(tf.int32, [2])
        q = tf.floordiv(tf.constant([4, 5]), d, name="intdiv")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"intdiv.*division by zero") as info:
                sess.run(q, {d: [1, 0]})
            assert info.value.node_name == "intdiv"
            np.testing.assert_array_equal(sess.run(q, {d: [3, -2]}), [1, -3])  # the session still works


def test_float_division_by_zero_follows_ieee():
    g = tf.Graph()
    with g.as_default():
        out = tf.floordiv(tf.constant([1.0, -1.0]), tf.constant(0.0))
    np.testing.assert_array_equal(_run(out), [np.inf, -np.inf])


def test_floormod_gradient_and_floordiv_without_gradient():
    x = _rng.uniform(0.5, 3.0, (3, 4)) * _rng.choice([-1, 1], (3, 4))
    y = _rng.uniform(0.7, 1.9, (4,))
    check_gradients(lambda a, b: tf.mod(a, b), [x, y])
    check_gradients(lambda a: a % 1.3, [x])
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float64, [3])
        grads = tf.gradients(tf.reduce_sum(tf.floordiv(a, 2.0) + tf.floor(a) + a), [a])
        np.testing.assert_array_equal(_run(grads[0], {a: [0.3, 1.7, -2.2]}), [1.0, 1.0, 1.0])


def test_floor_matches_numpy():
    x = _rng.standard_normal((5,)) * 4
    g = tf.Graph()
    with g.as_default():
        out = tf.floor(tf.constant(x))
    np.testing.assert_array_equal(_run(out), np.floor(x))


def test_sin_cos_values_and_gradients():
    x = _rng.uniform(-4, 4, (2, 3))
    g = tf.Graph()
    with g.as_default():
        s, c = tf.sin(tf.constant(x)), tf.cos(tf.constant(x))
        with tf.Session() as sess:
            sv, cv = sess.run([s, c])
    np.testing.assert_allclose(sv, np.sin(x), rtol=1e-12)
    np.testing.assert_allclose(cv, np.cos(x), rtol=1e-12)
    check_gradients(lambda a: tf.sin(a) * tf.cos(2.0 * a), [x])


@pytest.mark.parametrize("alpha", [0.0, 0.25])
def test_cosine_decay_follows_the_schedule_and_holds_after_decay_steps(alpha):
    g = tf.Graph()
    with g.as_default():
        step = tf.placeholder(tf.int64, [])
        lr = tf.train.cosine_decay(0.5, step, 40, alpha=alpha)
        with tf.Session() as sess:
            got = [sess.run(lr, {step: s}) for s in (0, 10, 20, 39, 40, 100)]
    for s, v in zip((0, 10, 20, 39, 40, 100), got):
        t = min(s, 40) / 40
        want = 0.5 * ((1 - alpha) * 0.5 * (1 + np.cos(np.pi * t)) + alpha)
        assert v == pytest.approx(want, rel=1e-6, abs=1e-7), s  # float32 near cos(pi)
    assert lr.dtype == tf.float32


def test_cosine_decay_needs_a_global_step():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="requires global_step"):
        tf.train.cosine_decay(0.1, None, 10)
