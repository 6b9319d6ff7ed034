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


@pytest.mark.parametrize("kind", sorted(_SEQUENTIAL))
@pytest.mark.parametrize(
    ("shape", "dtype"), [((50, 7), np.float32), ((20, 2, 3), np.float64), ((30,), np.float32)]
)
def test_repeated_indices_apply_in_index_order(kind: str, shape: tuple[int, ...], dtype: type) -> None:
    value, idx, updates = _case(shape, dtype)
    want = value.copy()
    for i, row in zip(idx, updates):
        want[i] = _SEQUENTIAL[kind](want[i], row)
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(value, name="v")
        op = getattr(tf, f"scatter_{kind}")(v, tf.constant(idx), tf.constant(updates))
    with tf.Session(graph=g) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(op)
        got = sess.run(v)
    np.testing.assert_array_equal(got, want)
