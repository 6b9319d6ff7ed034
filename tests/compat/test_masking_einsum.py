"""where(condition) and boolean_mask (data-dependent shapes), einsum: values against numpy,
gradients against finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import antcolony.compat.v1 as tf

from .gradcheck import check_gradients

_rng = np.random.default_rng(31)


def test_where_with_one_argument_gives_int64_coordinates_in_row_major_order():
    c = _rng.standard_normal((3, 4, 2)) > 0.2
    g = tf.Graph()
    with g.as_default():
        cond = tf.placeholder(tf.bool, [None, 4, 2])
        idx = tf.where(cond)
        nums = tf.where(tf.constant([0.0, 2.5, 0.0, -1.0]))  # non-zero counts as true, as TF's Where
        assert idx.dtype == tf.int64 and idx.shape.as_list() == [None, 3]
        with tf.Session() as sess:
            got, got_nums = sess.run([idx, nums], {cond: c})
            empty = sess.run(idx, {cond: np.zeros((2, 4, 2), bool)})
    np.testing.assert_array_equal(got, np.argwhere(c))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got_nums, [[1], [3]])
    assert empty.shape == (0, 3)


def test_where_needs_both_branches_or_neither():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="both x and y, or neither"):
        tf.where(tf.constant([True]), tf.constant([1.0]))


@pytest.mark.parametrize("axis", [None, 1])
def test_boolean_mask_matches_numpy_and_has_gathers_gradient(axis):
    x = _rng.standard_normal((4, 3, 2))
    m = np.array([True, False, True, True]) if axis is None else np.array([False, True, True])
    g = tf.Graph()
    with g.as_default():
        out = tf.boolean_mask(tf.constant(x), tf.constant(m), axis=axis)
        with tf.Session() as sess:
            got = sess.run(out)
    want = x[m] if axis is None else x[:, m]
    np.testing.assert_array_equal(got, want)
    check_gradients(lambda a: tf.boolean_mask(a, tf.constant(m), axis=axis), [x])


def test_boolean_mask_over_two_dimensions_with_a_fed_batch():
    x = _rng.standard_normal((5, 3, 2))
    m = _rng.standard_normal((5, 3)) > 0
    g = tf.Graph()
    with g.as_default():
        xs = tf.placeholder(tf.float64, [None, 3, 2])
        ms = tf.placeholder(tf.bool, [None, 3])
        out = tf.boolean_mask(xs, ms)
        assert out.shape.as_list() == [None, 2]
        with tf.Session() as sess:
            got = sess.run(out, {xs: x, ms: m})
    np.testing.assert_array_equal(got, x[m])
    check_gradients(lambda a: tf.boolean_mask(a, tf.constant(m)), [x])


def test_boolean_mask_refuses_a_mismatched_or_non_bool_mask():
    with tf.Graph().as_default():
        x = tf.zeros([4, 3])
        with pytest.raises(ValueError, match="does not match"):
            tf.boolean_mask(x, tf.constant([True, False]))
        with pytest.raises(ValueError, match="needs a bool mask"):
            tf.boolean_mask(x, tf.constant([1, 0, 1, 1]))


@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("ij,jk->ik", [(3, 4), (4, 2)]),
        ("ij,jk", [(3, 4), (4, 2)]),  # implicit output, as numpy
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
        ("ij->", [(3, 4)]),
        ("ij->ji", [(3, 4)]),
        ("ij->i", [(3, 4)]),
        ("i,j->ij", [(3,), (4,)]),
        ("bi,bi->b", [(5, 3), (5, 3)]),
        ("...ij,jk->...ik", [(2, 3, 4), (4, 2)]),
        ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 2)]),
        ("ii->", [(3, 3)]),  # diagonals: the gradient lies on the diagonal only, as TF's
        ("ii->i", [(3, 3)]),
        ("iji->j", [(3, 2, 3)]),
        ("iii,ij->j", [(2, 2, 2), (2, 3)]),
    ],
)
def test_einsum_matches_numpy_with_gradients(equation, shapes):
    xs = [_rng.standard_normal(s) for s in shapes]
    g = tf.Graph()
    with g.as_default():
        out = tf.einsum(equation, *[tf.constant(x) for x in xs])
        with tf.Session() as sess:
            got = sess.run(out)
    want = np.einsum(equation, *xs)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert tuple(out.shape.as_list()) == want.shape
    check_gradients(lambda *ts: tf.einsum(equation, *ts), xs)


def test_einsum_reports_shape_mismatch_and_a_diagonal_gradient_of_unknown_size():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="dimension 'j' is 4"):
            tf.einsum("ij,jk->ik", tf.zeros([3, 4]), tf.zeros([5, 2]))
        with pytest.raises(ValueError, match="2 operands but 1"):
            tf.einsum("ij,jk->ik", tf.zeros([3, 4]))
        x = tf.placeholder(tf.float32, [None, None])
        trace = tf.einsum("ii->", x)
        with pytest.raises(ValueError, match=r"repeats 'i'.*size of axis 1"):
            tf.gradients(trace, [x])
