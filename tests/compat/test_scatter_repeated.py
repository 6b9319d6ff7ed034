"""tf.scatter_* on a variable with many repeated indices applies the rows one after another in
index order (TF's CPU kernels): exactly numpy's sequential loop, rounding included, for rows of
any rank and for every position of the repeats."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import antcolony.compat.v1 as tf

_SEQUENTIAL: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": np.maximum,
    "min": np.minimum,
}


def _case(shape: tuple[int, ...], dtype: type) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    value = (rng.standard_normal(shape) * 1e3 + 2e3).astype(dtype)
    # 40 indices into 9 of the rows: every kind of repeat (adjacent, far apart, many times)
    idx = rng.integers(0, 9, 40).astype(np.int32)
    idx[:3] = [5, 5, 5]
    # magnitudes far apart, so applying a row's updates in another order rounds differently
    updates = (
        rng.uniform(0.5, 1.5, (40, *shape[1:])) * 10.0 ** rng.integers(-3, 4, (40,) + (1,) * (len(shape) - 1))
    ).astype(dtype)
    return value, idx, updates


def _sequential(kind: str, value: np.ndarray, idx: np.ndarray, updates: np.ndarray) -> np.ndarray:
    """numpy's loop: each row's update applied in index order."""
    want = value.copy()
    for i, row in zip(idx, updates):
        want[i] = _SEQUENTIAL[kind](want[i], row)
    return want


def _scattered(kind: str, value: np.ndarray, idx: np.ndarray, updates: np.ndarray) -> np.ndarray:
    """The variable after one ``tf.scatter_<kind>`` of ``updates`` at ``idx``."""
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(value, name="v")
        op = getattr(tf, f"scatter_{kind}")(v, tf.constant(idx), tf.constant(updates))
    with tf.Session(graph=g) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(op)
        return sess.run(v)


@pytest.mark.parametrize("kind", sorted(_SEQUENTIAL))
@pytest.mark.parametrize(
    ("shape", "dtype"), [((50, 7), np.float32), ((20, 2, 3), np.float64), ((30,), np.float32)]
)
def test_repeated_indices_apply_in_index_order(kind: str, shape: tuple[int, ...], dtype: type) -> None:
    value, idx, updates = _case(shape, dtype)
    np.testing.assert_array_equal(
        _scattered(kind, value, idx, updates), _sequential(kind, value, idx, updates)
    )


@pytest.mark.parametrize("kind", ["add", "sub", "max"])
@pytest.mark.parametrize("shape", [(6, 4), (6,)], ids=["rows", "vector"])
@pytest.mark.parametrize("bad", [-1, 6])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_an_index_out_of_range_fails_the_step_before_any_row_changes(
    kind: str, shape: tuple[int, ...], bad: int, index_dtype: type
) -> None:
    # the bad index comes after valid (and repeated) ones: none of them may have been applied
    value = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    idx = np.array([1, 1, 4, bad, 2], index_dtype)
    updates = np.ones((5, *shape[1:]), np.float32)
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(value, name="v")
        ids = tf.placeholder(tf.as_dtype(index_dtype), [None])
        rows = tf.placeholder(tf.float32, [None, *shape[1:]])
        op = getattr(tf, f"scatter_{kind}")(v, ids, rows, name="scatter")
    with tf.Session(graph=g) as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"scatter.*indices must be in \[0, 6\)"):
            sess.run(op, {ids: idx, rows: updates})
        np.testing.assert_array_equal(sess.run(v), value)
        sess.run(op, {ids: idx[:3], rows: updates[:3]})  # the session is still usable
        np.testing.assert_array_equal(sess.run(v), _sequential(kind, value, idx[:3], updates[:3]))


@pytest.mark.parametrize("shape", [(5, 3), (5,)], ids=["rows", "vector"])
def test_an_empty_batch_of_indices_changes_nothing(shape: tuple[int, ...]) -> None:
    value = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(value, name="v")
        ids = tf.placeholder(tf.int32, [None])
        rows = tf.placeholder(tf.float64, [None, *shape[1:]])
        op = tf.scatter_sub(v, ids, rows)
    with tf.Session(graph=g) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(op, {ids: np.zeros(0, np.int32), rows: np.zeros((0, *shape[1:]))})
        np.testing.assert_array_equal(sess.run(v), value)


@pytest.mark.parametrize("kind", ["add", "sub", "max", "min"])
def test_integer_rows_with_repeated_indices_apply_in_index_order(kind: str) -> None:
    value, idx, _ = _case((50, 7), np.float32)
    value = value.astype(np.int32)
    updates = np.random.default_rng(4).integers(-1000, 1000, (idx.size, 7)).astype(np.int32)
    got = _scattered(kind, value, idx.astype(np.int64), updates)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, _sequential(kind, value, idx, updates))


@pytest.mark.parametrize("bad", [-1, 6, -7])
def test_a_single_index_out_of_range_fails_and_changes_nothing(bad: int) -> None:
    value = np.arange(18, dtype=np.float32).reshape(6, 3)
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(value, name="v")
        ids = tf.placeholder(tf.int64, [None])
        op = tf.scatter_sub(v, ids, tf.ones([1, 3]), name="scatter")
    with tf.Session(graph=g) as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"scatter.*indices must be in \[0, 6\)"):
            sess.run(op, {ids: [bad]})
        np.testing.assert_array_equal(sess.run(v), value)
        sess.run(op, {ids: [5]})
        np.testing.assert_array_equal(sess.run(v), _sequential("sub", value, np.array([5]), np.ones((1, 3))))
