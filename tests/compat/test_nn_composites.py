"""tf.nn functions built from other ops: forward values against numpy, gradients against finite
differences."""

from __future__ import annotations

import numpy as np
import pytest

import antcolony.compat.v1 as tf

from .gradcheck import check_gradients

_rng = np.random.default_rng(7)


def away_from_zero(*shape):
    return _rng.uniform(0.2, 2.0, shape) * _rng.choice([-1.0, 1.0], shape)


def _run(fn, *inputs):
    g = tf.Graph()
    with g.as_default():
        out = fn(*[tf.constant(np.asarray(a)) for a in inputs])
        with tf.Session() as sess:
            return sess.run(out)


SELU_A, SELU_S = 1.6732632423543772, 1.0507009873554805

ACTIVATIONS = [
    ("leaky_relu", lambda x: tf.nn.leaky_relu(x, alpha=0.1), lambda x: np.where(x > 0, x, 0.1 * x)),
    ("elu", tf.nn.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0)))),
    ("selu", tf.nn.selu, lambda x: SELU_S * np.where(x > 0, x, SELU_A * np.expm1(np.minimum(x, 0)))),
    ("relu6", tf.nn.relu6, lambda x: np.clip(x, 0, 6)),
    ("softplus", tf.nn.softplus, lambda x: np.logaddexp(0, x)),
    ("softsign", tf.nn.softsign, lambda x: x / (1 + np.abs(x))),
]


@pytest.mark.parametrize(("name", "fn", "ref"), ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_values_match_numpy(name, fn, ref):
    x = np.concatenate([away_from_zero(20), [-100.0, -30.0, 30.0, 100.0, 7.0]])
    np.testing.assert_allclose(_run(fn, x), ref(x), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("name", "fn", "ref"), ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_gradients_match_finite_differences(name, fn, ref):
    x = away_from_zero(3, 4)
    if name == "relu6":
        x = np.concatenate([x, x + 6.0])  # both kinks, away from them
    check_gradients(fn, [x])


def test_activations_do_not_overflow_or_nan_in_gradients_for_large_inputs():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(np.array([-1000.0, -50.0, 50.0, 1000.0], np.float32))
        outs = [tf.nn.elu(x), tf.nn.selu(x), tf.nn.softplus(x)]
        grads = tf.gradients(tf.add_n([tf.reduce_sum(o) for o in outs]), [x])
        with tf.Session() as sess:
            values = sess.run(outs + grads)
    assert all(np.all(np.isfinite(v)) for v in values)
    np.testing.assert_allclose(values[2], [0.0, 0.0, 50.0, 1000.0], atol=1e-6)


def test_sigmoid_cross_entropy_matches_numpy_and_its_gradients():
    x, z = away_from_zero(4, 3) * 3, _rng.uniform(0, 1, (4, 3))
    sig = 1 / (1 + np.exp(-x))
    want = -z * np.log(sig) - (1 - z) * np.log(1 - sig)
    got = _run(lambda a, b: tf.nn.sigmoid_cross_entropy_with_logits(labels=b, logits=a), x, z)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    check_gradients(lambda a, b: tf.nn.sigmoid_cross_entropy_with_logits(labels=b, logits=a), [x, z])
    with pytest.raises(ValueError, match="same shape"), tf.Graph().as_default():
        tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.zeros([2]), logits=tf.zeros([3]))


def test_moments_match_numpy_and_their_gradients():
    x = _rng.standard_normal((4, 3, 2))
    mean, var = _run(lambda a: tf.nn.moments(a, axes=[0, 1]), x)
    np.testing.assert_allclose(mean, x.mean(axis=(0, 1)), rtol=1e-12)
    np.testing.assert_allclose(var, x.var(axis=(0, 1)), rtol=1e-12)
    kept = _run(lambda a: tf.nn.moments(a, axes=[0], keep_dims=True), x)
    assert kept[0].shape == (1, 3, 2) and kept[1].shape == (1, 3, 2)
    check_gradients(lambda a: tf.nn.moments(a, axes=[0, 1])[1], [x])
    check_gradients(lambda a: tf.nn.moments(a, axes=[0, 1])[0], [x])


def test_batch_normalization_matches_the_formula_and_its_gradients():
    x, m, v = _rng.standard_normal((5, 3)), _rng.standard_normal(3), _rng.uniform(0.5, 2, 3)
    off, sc = _rng.standard_normal(3), _rng.standard_normal(3)
    want = sc * (x - m) / np.sqrt(v + 1e-3) + off
    got = _run(lambda *a: tf.nn.batch_normalization(*a, variance_epsilon=1e-3), x, m, v, off, sc)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    check_gradients(lambda *a: tf.nn.batch_normalization(*a, variance_epsilon=1e-3), [x, m, v, off, sc])
    bare = _run(lambda a, b, c: tf.nn.batch_normalization(a, b, c, None, None, 1e-3), x, m, v)
    np.testing.assert_allclose(bare, (x - m) / np.sqrt(v + 1e-3), rtol=1e-10)


def test_l2_normalize_matches_numpy_and_its_gradients():
    x = _rng.standard_normal((3, 4))
    got = _run(lambda a: tf.nn.l2_normalize(a, axis=1), x)
    np.testing.assert_allclose(got, x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(
        _run(lambda a: tf.nn.l2_normalize(a, dim=0), x), x / np.linalg.norm(x, axis=0), rtol=1e-12
    )
    np.testing.assert_array_equal(_run(lambda a: tf.nn.l2_normalize(a), np.zeros(3)), np.zeros(3))
    check_gradients(lambda a: tf.nn.l2_normalize(a, axis=1), [x])


def test_xw_plus_b_and_embedding_lookup():
    x, w, b = _rng.standard_normal((2, 3)), _rng.standard_normal((3, 4)), _rng.standard_normal(4)
    np.testing.assert_allclose(_run(tf.nn.xw_plus_b, x, w, b), x @ w + b, rtol=1e-12)
    check_gradients(tf.nn.xw_plus_b, [x, w, b])
    table = _rng.standard_normal((5, 2))
    ids = np.array([[4, 0], [0, 2]])
    np.testing.assert_array_equal(_run(lambda p, i: tf.nn.embedding_lookup(p, i), table, ids), table[ids])
    check_gradients(lambda p: tf.nn.embedding_lookup([p], tf.constant(ids)), [table])


def test_dropout_keeps_the_expected_fraction_scaled_and_zeroes_the_rest():
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(1)
        x = tf.ones([200, 100])
        keep = tf.placeholder(tf.float32, [])
        by_rate = tf.nn.dropout(x, rate=0.25)
        by_keep = tf.nn.dropout(x, keep_prob=keep)
        with tf.Session() as sess:
            a = sess.run(by_rate)
            b = sess.run(by_keep, {keep: 0.5})
            c = sess.run(by_keep, {keep: 1.0})
    assert set(np.unique(a)) == {0.0, np.float32(1 / 0.75)}
    assert (a > 0).mean() == pytest.approx(0.75, abs=0.01)
    assert a.mean() == pytest.approx(1.0, abs=0.02)
    assert (b > 0).mean() == pytest.approx(0.5, abs=0.01)
    np.testing.assert_array_equal(c, np.ones((200, 100)))


def test_dropout_gradient_flows_through_the_kept_elements_only():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(np.arange(1.0, 401.0).reshape(20, 20))
        y = tf.nn.dropout(x, rate=0.5, seed=3)
        (dx,) = tf.gradients(tf.reduce_sum(y), [x])
        with tf.Session() as sess:
            yv, dxv = sess.run([y, dx])
    np.testing.assert_allclose(dxv, np.where(yv != 0, 2.0, 0.0))


def test_dropout_argument_errors():
    with tf.Graph().as_default():
        x = tf.ones([2])
        with pytest.raises(ValueError, match="exactly one of keep_prob and rate"):
            tf.nn.dropout(x)
        with pytest.raises(ValueError, match=r"\(0, 1\]"):
            tf.nn.dropout(x, rate=1.0)
        assert tf.nn.dropout(x, rate=0.0) is x


def test_in_top_k_counts_ties_in_and_non_finite_targets_out():
    preds = np.array(
        [[0.1, 0.5, 0.5, 0.2], [0.9, 0.1, 0.3, 0.2], [np.inf, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0, 4.0]]
    )
    targets = np.array([2, 2, 0, 0])
    got = _run(lambda p, t: tf.nn.in_top_k(p, t, 1), preds, targets)
    assert got.tolist() == [True, False, False, False]
    got = _run(lambda p, t: tf.nn.in_top_k(p, t, 2), preds, targets)
    assert got.tolist() == [True, True, False, False]
    assert _run(lambda p, t: tf.nn.in_top_k(p, t, 4), preds, targets).tolist() == [True, True, False, True]


def test_top_k_values_and_indices_like_a_stable_sort():
    x = np.array([[3.0, 1.0, 3.0, -np.inf, 2.0], [-np.inf, -np.inf, 0.0, 5.0, 5.0]])
    values, indices = _run(lambda a: tf.nn.top_k(a, 4), x)
    order = np.argsort(-x, axis=-1, kind="stable")[:, :4]
    np.testing.assert_array_equal(indices, order)
    assert indices.dtype == np.int32
    np.testing.assert_array_equal(values, np.take_along_axis(x, order, axis=-1))
    ints = _run(lambda a: tf.nn.top_k(a, k=2).values, np.array([4, 9, 1, 9], np.int32))
    assert ints.tolist() == [9, 9]
    y = _rng.standard_normal((3, 6))
    check_gradients(lambda a: tf.nn.top_k(a, 3).values, [y])
    with pytest.raises(ValueError, match=r"outside \[1, 6\]"), tf.Graph().as_default():
        tf.nn.top_k(tf.zeros([2, 6]), 7)
