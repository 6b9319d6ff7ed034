"""tf.add_n of large inputs gives exactly numpy's left-to-right sum, for every dtype and layout
(written for a chunk-by-chunk sum, since reverted: under a thread contending for the GIL it was
1.3-2x slower than whole-array adds; the tests hold for any summation that keeps the order)."""

from __future__ import annotations

import numpy as np
import pytest

import antcolony.compat.v1 as tf

SHAPE = (613, 1031)  # 2.5 MB of float32, not a multiple of the chunk


def _inputs(dtype: type, count: int) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    if np.issubdtype(dtype, np.integer):
        return [rng.integers(-1000, 1000, SHAPE).astype(dtype) for _ in range(count)]
    # magnitudes far apart, so another order of the adds rounds differently
    return [(rng.standard_normal(SHAPE) * 10.0 ** (3 * (i % 3))).astype(dtype) for i in range(count)]


def _left_to_right(xs: list[np.ndarray]) -> np.ndarray:
    out = xs[0] + xs[1]
    for x in xs[2:]:
        out = out + x
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("count", [3, 11])
def test_large_add_n_is_the_left_to_right_sum(dtype: type, count: int) -> None:
    xs = _inputs(dtype, count)
    g = tf.Graph()
    with g.as_default():
        phs = [tf.placeholder(tf.as_dtype(dtype), SHAPE) for _ in xs]
        total = tf.add_n(phs)
    with tf.Session(graph=g) as sess:
        got = sess.run(total, dict(zip(phs, xs)))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, _left_to_right(xs))


def test_large_add_n_of_transposed_inputs() -> None:
    xs = _inputs(np.float32, 4)
    g = tf.Graph()
    with g.as_default():
        phs = [tf.placeholder(tf.float32, SHAPE[::-1]) for _ in xs]
        # transposes may hand AddN non-contiguous arrays
        total = tf.add_n([tf.transpose(p) for p in phs])
    with tf.Session(graph=g) as sess:
        got = sess.run(total, {p: x.T.copy() for p, x in zip(phs, xs)})
    np.testing.assert_array_equal(got, _left_to_right(xs))
