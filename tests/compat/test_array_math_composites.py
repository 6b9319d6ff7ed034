"""TF1 array / math / clip functions built from other ops: values against numpy, gradients
against finite differences, legacy keywords and bool operators."""

from __future__ import annotations

import numpy as np
import pytest

import antcolony.compat.v1 as tf

from .gradcheck import check_gradients

_rng = np.random.default_rng(17)


def _run(fn, *inputs, feed=None):
    g = tf.Graph()
    with g.as_default():
        out = fn(*[tf.constant(np.asarray(a)) for a in inputs])
        with tf.Session() as sess:
            return sess.run(out, feed)


def test_squeeze_all_or_given_axes():
    x = _rng.standard_normal((1, 3, 1, 2))
    np.testing.assert_array_equal(_run(tf.squeeze, x), x.reshape(3, 2))
    np.testing.assert_array_equal(_run(lambda a: tf.squeeze(a, [2]), x), x.reshape(1, 3, 2))
    np.testing.assert_array_equal(_run(lambda a: tf.squeeze(a, squeeze_dims=[0]), x), x.reshape(3, 1, 2))
    with pytest.raises(ValueError, match="has size 3, not 1"):
        _run(lambda a: tf.squeeze(a, 1), x)
    check_gradients(lambda a: tf.squeeze(a, 0), [x])


def test_unstack_split_and_slice():
    x = _rng.standard_normal((4, 6))
    parts = _run(lambda a: tf.unstack(a, axis=1), x)
    assert len(parts) == 6
    np.testing.assert_array_equal(parts[2], x[:, 2])
    halves = _run(lambda a: tf.split(a, 2, axis=1), x)
    np.testing.assert_array_equal(halves[1], x[:, 3:])
    sized = _run(lambda a: tf.split(a, [1, -1, 2], 0), x)
    assert [p.shape for p in sized] == [(1, 6), (1, 6), (2, 6)]
    np.testing.assert_array_equal(sized[1], x[1:2])
    np.testing.assert_array_equal(_run(lambda a: tf.slice(a, [1, 2], [2, -1]), x), x[1:3, 2:])
    with pytest.raises(ValueError, match="not divisible into 4 parts"):
        _run(lambda a: tf.split(a, 4, axis=1), x)
    check_gradients(lambda a: tf.split(a, [2, 4], 1)[1] * 2.0 + tf.unstack(a, axis=1)[0][:, None], [x])


def test_tile_and_pad():
    x = _rng.standard_normal((2, 3))
    np.testing.assert_array_equal(_run(lambda a: tf.tile(a, [2, 3]), x), np.tile(x, (2, 3)))
    np.testing.assert_array_equal(
        _run(lambda a: tf.pad(a, [[1, 0], [2, 1]], constant_values=7.0), x),
        np.pad(x, [[1, 0], [2, 1]], constant_values=7.0),
    )
    check_gradients(lambda a: tf.tile(a, [3, 1]), [x])
    check_gradients(lambda a: tf.pad(a, [[0, 2], [1, 1]]), [x])
    with pytest.raises(ValueError, match="only CONSTANT"):
        _run(lambda a: tf.pad(a, [[1, 1], [1, 1]], mode="REFLECT"), x)


def test_one_hot_with_on_off_values_axis_and_dtype():
    idx = np.array([0, 2, 1])
    np.testing.assert_array_equal(_run(lambda i: tf.one_hot(i, 3), idx), np.eye(3, dtype=np.float32)[idx])
    got = _run(lambda i: tf.one_hot(i, 3, on_value=5, off_value=-1), idx)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.where(np.eye(3)[idx] == 1, 5, -1))
    got = _run(lambda i: tf.one_hot(i, 3, axis=0), idx)
    np.testing.assert_array_equal(got, np.eye(3)[idx].T)


def test_range_linspace_eye_and_sequence_mask():
    got = _run(lambda: tf.range(2, 11, 3))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [2, 5, 8])
    assert _run(lambda: tf.range(5)).tolist() == [0, 1, 2, 3, 4]
    assert _run(lambda: tf.range(0.0, 1.0, 0.25)).dtype == np.float32
    np.testing.assert_allclose(_run(lambda: tf.linspace(0.0, 1.0, 5)), np.linspace(0, 1, 5))
    np.testing.assert_array_equal(_run(lambda: tf.eye(2, 3)), np.eye(2, 3))
    np.testing.assert_array_equal(
        _run(lambda: tf.eye(2, batch_shape=[3])), np.broadcast_to(np.eye(2), (3, 2, 2))
    )
    mask = _run(lambda: tf.sequence_mask([1, 3, 0], 4))
    np.testing.assert_array_equal(mask, [[1, 0, 0, 0], [1, 1, 1, 0], [0, 0, 0, 0]])
    assert mask.dtype == np.bool_
    assert _run(lambda: tf.sequence_mask([2, 1], dtype=tf.float32)).tolist() == [[1.0, 1.0], [1.0, 0.0]]


def test_reduce_logsumexp_is_stable_and_its_gradient_is_softmax():
    x = np.array([[1000.0, 1000.0], [-1000.0, 0.0]])
    np.testing.assert_allclose(_run(lambda a: tf.reduce_logsumexp(a, axis=1), x), [1000.0 + np.log(2), 0.0])
    y = _rng.standard_normal((3, 4))
    want = np.log(np.exp(y).sum(axis=0, keepdims=True))
    np.testing.assert_allclose(_run(lambda a: tf.reduce_logsumexp(a, 0, keep_dims=True), y), want, rtol=1e-12)
    check_gradients(lambda a: tf.reduce_logsumexp(a, reduction_indices=[1]), [y])
    check_gradients(lambda a: tf.reduce_logsumexp(a), [y])


def test_bool_reductions_logical_ops_and_operators():
    a = np.array([[True, False], [True, True]])
    b = np.array([[False, False], [True, False]])
    assert _run(lambda x: tf.reduce_any(x, axis=1), b).tolist() == [False, True]
    assert _run(lambda x: tf.reduce_all(x, axis=1), a).tolist() == [False, True]
    assert bool(_run(tf.reduce_all, a)) is False
    for fn, want in [(tf.logical_and, a & b), (tf.logical_or, a | b), (tf.logical_xor, a ^ b)]:
        np.testing.assert_array_equal(_run(fn, a, b), want)
    np.testing.assert_array_equal(_run(tf.logical_not, a), ~a)
    ops = _run(lambda x, y: [x & y, x | y, x ^ y, ~x, x & True], a, b)
    for got, want in zip(ops, [a & b, a | b, a ^ b, ~a, a]):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="needs bool tensors"):
        _run(tf.logical_and, np.array([1, 2]), np.array([1, 0]))


def test_legacy_keywords_of_reductions_argmax_and_softmax():
    x = _rng.standard_normal((3, 4))
    np.testing.assert_allclose(
        _run(lambda a: tf.reduce_sum(a, reduction_indices=[1], keep_dims=True), x),
        x.sum(axis=1, keepdims=True),
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        _run(lambda a: tf.reduce_mean(a, reduction_indices=0), x), x.mean(axis=0), rtol=1e-12
    )
    np.testing.assert_allclose(_run(lambda a: tf.reduce_prod(a, 1), x), x.prod(axis=1), rtol=1e-12)
    assert _run(lambda a: tf.argmax(a, dimension=1), x).tolist() == x.argmax(axis=1).tolist()
    assert _run(lambda a: tf.argmin(a, dimension=0), x).tolist() == x.argmin(axis=0).tolist()
    e = np.exp(x - x.max(axis=0))
    np.testing.assert_allclose(_run(lambda a: tf.nn.softmax(a, dim=0), x), e / e.sum(axis=0), rtol=1e-12)
    with pytest.raises(ValueError, match="only one of axis"):
        _run(lambda a: tf.reduce_sum(a, axis=0, reduction_indices=1), x)


def test_argmin_takes_the_first_minimum():
    x = np.array([[3, 1, 1], [0, 5, 0]], np.int32)
    assert _run(lambda a: tf.argmin(a, 1), x).tolist() == [1, 0]


def test_log1p_is_accurate_for_tiny_values_and_its_gradient():
    x = np.array([1e-12, -1e-10, 0.0, 0.5, 3.0, -0.9])
    np.testing.assert_allclose(_run(tf.log1p, x), np.log1p(x), rtol=1e-14, atol=0)
    check_gradients(tf.log1p, [np.array([0.3, 1.5, -0.5])])
    g = tf.Graph()
    with g.as_default():
        z = tf.constant([0.0, 1e-20])
        (dz,) = tf.gradients(tf.reduce_sum(tf.log1p(z)), [z])
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(dz), [1.0, 1.0])


def test_truediv_casts_integers_and_to_casts():
    got = _run(tf.truediv, np.array([1, 7], np.int32), np.array([2, 2], np.int32))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, [0.5, 3.5])
    assert _run(tf.truediv, np.array([1], np.int16), np.array([4], np.int16)).dtype == np.float32
    assert _run(tf.to_float, np.array([1, 2])).dtype == np.float32
    assert _run(tf.to_int32, np.array([1.7, -2.2])).tolist() == [1, -2]
    assert _run(tf.to_int64, np.array([1.0])).dtype == np.int64
    assert _run(tf.to_double, np.array([1], np.int32)).dtype == np.float64


def test_tensordot_matches_numpy_and_its_gradients():
    a, b = _rng.standard_normal((2, 3, 4)), _rng.standard_normal((4, 3, 5))
    np.testing.assert_allclose(
        _run(lambda x, y: tf.tensordot(x, y, [[1, 2], [1, 0]]), a, b),
        np.tensordot(a, b, [[1, 2], [1, 0]]),
        rtol=1e-12,
    )
    c = _rng.standard_normal((4, 2))
    np.testing.assert_allclose(
        _run(lambda x, y: tf.tensordot(x, y, 1), a, c), np.tensordot(a, c, 1), rtol=1e-12
    )
    check_gradients(lambda x, y: tf.tensordot(x, y, [[1, 2], [1, 0]]), [a, b])


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum_variants_match_numpy(exclusive, reverse, axis):
    x = _rng.standard_normal((3, 4, 2))
    want = np.flip(x, axis) if reverse else x
    want = np.cumsum(want, axis=axis)
    if exclusive:
        want = want - (np.flip(x, axis) if reverse else x)
    if reverse:
        want = np.flip(want, axis)
    got = _run(lambda a: tf.cumsum(a, axis=axis, exclusive=exclusive, reverse=reverse), x)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_cumsum_gradient_and_integers():
    check_gradients(lambda a: tf.cumsum(a, axis=1, reverse=True), [_rng.standard_normal((2, 4))])
    assert _run(lambda a: tf.cumsum(a), np.array([1, 2, 3], np.int32)).tolist() == [1, 3, 6]


def test_clip_by_value_and_by_norm():
    x = _rng.standard_normal((3, 4)) * 3
    np.testing.assert_array_equal(_run(lambda a: tf.clip_by_value(a, -1.0, 2.0), x), np.clip(x, -1, 2))
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    want = x * 2.0 / np.maximum(norms, 2.0)
    np.testing.assert_allclose(_run(lambda a: tf.clip_by_norm(a, 2.0, axes=[1]), x), want, rtol=1e-12)
    np.testing.assert_array_equal(_run(lambda a: tf.clip_by_norm(a, 1.0), np.zeros(3)), np.zeros(3))
    check_gradients(lambda a: tf.clip_by_norm(a, 2.0, axes=[1]), [x])
    check_gradients(lambda a: tf.clip_by_value(a, -1.0, 2.0), [np.array([-3.0, 0.5, 1.5, 4.0])])


def test_clip_by_global_norm_and_global_norm():
    a, b = _rng.standard_normal((2, 2)) * 4, _rng.standard_normal(3) * 4
    total = np.sqrt((a**2).sum() + (b**2).sum())
    clipped, norm = _run(lambda x, y: tf.clip_by_global_norm([x, y], 1.5), a, b)
    assert norm == pytest.approx(total)
    np.testing.assert_allclose(clipped[0], a * 1.5 / total, rtol=1e-12)
    np.testing.assert_allclose(clipped[1], b * 1.5 / total, rtol=1e-12)
    small, _ = _run(lambda x: tf.clip_by_global_norm([x], 1e6), a)
    np.testing.assert_allclose(small[0], a, rtol=1e-12)
    with tf.Graph().as_default():
        kept, _ = tf.clip_by_global_norm([tf.constant([1.0]), None], 1.0)
        assert kept[1] is None
    assert _run(lambda x: tf.global_norm([x, None]), b) == pytest.approx(np.linalg.norm(b))
    check_gradients(lambda x, y: tf.clip_by_global_norm([x, y], 1.5)[0][0], [a, b])


def test_reshape_to_a_shape_tensor_or_a_list_with_tensors_as_tf1():
    x = _rng.standard_normal((5, 2, 3))
    g = tf.Graph()
    with g.as_default():
        batch = tf.placeholder(tf.float64, [None, 2, 3])
        like = tf.placeholder(tf.float64, [None, None])
        flat = tf.reshape(batch, [tf.shape(batch)[0], -1])  # the usual TF1 flatten of a batch
        as_like = tf.reshape(batch, tf.shape(like))
        (grad,) = tf.gradients(tf.reduce_sum(flat * flat) + tf.reduce_sum(as_like), [batch])
        with tf.Session() as sess:
            fv, lv, gv = sess.run([flat, as_like, grad], {batch: x, like: np.zeros((3, 10))})
    assert flat.shape.as_list() == [None, None] and as_like.shape.as_list() == [None, None]
    np.testing.assert_array_equal(fv, x.reshape(5, 6))
    np.testing.assert_array_equal(lv, x.reshape(3, 10))
    np.testing.assert_allclose(gv, 2 * x + 1, rtol=1e-12)
    check_gradients(lambda a: tf.reshape(a, tf.shape(tf.zeros([6, 2], tf.float64))), [x[:2]])
    with pytest.raises(ValueError, match="vector of int32 or int64"), tf.Graph().as_default():
        tf.reshape(tf.zeros([4]), tf.zeros([2]))


def test_dividing_integers_is_a_float_division_named_truediv_as_tf1():
    g = tf.Graph()
    with g.as_default():
        i = tf.constant(np.array([7, -7], np.int32))
        small = tf.constant(np.array([7, -7], np.int8))
        quotients = [tf.divide(i, 2), i / 2, 7 / i, small / 2]
        floats = tf.divide(tf.constant([1.0, 3.0]), 2.0, name="half")
    assert [q.dtype for q in quotients] == [tf.float64, tf.float64, tf.float64, tf.float32]
    names = [q.op.name for q in [*quotients, floats]]
    assert names == ["truediv", "truediv_1", "truediv_2", "truediv_3", "half"]
    with tf.Session(graph=g) as sess:
        got = sess.run([*quotients, floats])
    for value, want in zip(got, [[3.5, -3.5], [3.5, -3.5], [1.0, -1.0], [3.5, -3.5], [0.5, 1.5]]):
        np.testing.assert_array_equal(value, want)
    assert [v.dtype for v in got] == [np.float64, np.float64, np.float64, np.float32, np.float32]


def test_split_into_equal_parts_of_a_dimension_known_only_when_fed():
    """TF1 RNN tutorials split a [batch * time, n] reshape into time steps: tf.split(x, 28, 0)."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        y = tf.placeholder(tf.float32, [3, None, 2])
        rows, cols = tf.split(x, 3, 0), tf.split(y, 2, 1)
        assert rows[0].shape.as_list() == [None, 4]
        grad = tf.gradients(tf.reduce_sum(rows[1] * 2.0) + tf.reduce_sum(cols[0]), [x, y])
        v = np.arange(24, dtype=np.float32).reshape(6, 4)
        w = np.arange(24, dtype=np.float32).reshape(3, 4, 2)
        with tf.Session() as sess:
            got_rows, got_cols, (gx, gy) = sess.run([rows, cols, grad], {x: v, y: w})
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(rows, {x: np.ones((5, 4), np.float32)})  # 5 rows are not 3 equal parts
        for got, want in zip(got_rows, np.split(v, 3, 0)):
            np.testing.assert_array_equal(got, want)
        for got, want in zip(got_cols, np.split(w, 2, 1)):
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(gx, np.repeat([0.0, 2.0, 0.0], 2)[:, None] * np.ones((6, 4)))
        np.testing.assert_array_equal(gy, np.concatenate([np.ones((3, 2, 2)), np.zeros((3, 2, 2))], 1))
