"""``tf.multinomial`` / ``tf.random.categorical``, ``tf.random_gamma`` / ``tf.random.gamma`` and
``tf.random_poisson`` / ``tf.random.poisson``: static shapes and dtypes as TF1 gives them, and the
draws' distribution checked against numpy's exact moments on many seeded samples (the streams
themselves differ from TF's: its kernels draw with Philox)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import FRAMEWORKS, park_tf_objects, run_both  # noqa: F401 - park_tf_objects: autouse

LOGITS = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.5, 1e-30]], np.float32))


def _static(tf: Any) -> list[Any]:
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        outs = [
            tf.multinomial(x, 4),
            tf.multinomial(LOGITS, 5, output_dtype=tf.int32),
            tf.random.categorical(x, 2, dtype=tf.int32),
            tf.random.multinomial(LOGITS, 3),
            tf.random_gamma([2, 3], [1.0, 2.0]),
            tf.random.gamma([4], 2.0, beta=[1.0, 3.0], dtype=tf.float64),
            tf.random_poisson([1.0, 4.0, 9.0], [5]),
            tf.random.poisson(3.0, [2, 2], dtype=tf.int64),
        ]
        return [(str(t.shape), t.dtype.name) for t in outs]


def test_static_shapes_and_dtypes_as_tf1() -> None:
    got = run_both(_static)
    assert got["antcolony"] == got["tensorflow"]


def _draw(fetch: Any) -> Any:
    tf = FRAMEWORKS["antcolony"]
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        out = fetch(tf)
        with tf.Session() as sess:
            return sess.run(out)


def test_categorical_frequencies_follow_the_softmax() -> None:
    draws = _draw(lambda tf: tf.random.categorical(LOGITS, 20000))
    probs = np.exp(LOGITS.astype(np.float64))
    probs /= probs.sum(axis=1, keepdims=True)
    for row in range(2):
        freq = np.bincount(draws[row], minlength=3) / draws.shape[1]
        np.testing.assert_allclose(freq, probs[row], atol=0.015)
    assert not (draws[1] == 2).any()  # a class of probability ~0 is never drawn


def test_gamma_and_poisson_moments() -> None:
    gamma, scaled, poisson = _draw(
        lambda tf: [
            tf.random_gamma([20000], [0.5, 3.0]),
            tf.random.gamma([20000], 3.0, beta=2.0),
            tf.random_poisson([0.5, 6.0], [20000]),
        ]
    )
    # Gamma(alpha, rate 1): mean alpha, variance alpha; rate beta divides both by beta, beta**2
    np.testing.assert_allclose(gamma.mean(axis=0), [0.5, 3.0], rtol=0.05)
    np.testing.assert_allclose(gamma.var(axis=0), [0.5, 3.0], rtol=0.08)
    np.testing.assert_allclose([scaled.mean(), scaled.var()], [1.5, 0.75], rtol=0.06)
    np.testing.assert_allclose(poisson.mean(axis=0), [0.5, 6.0], rtol=0.05)
    assert (gamma > 0).all() and np.array_equal(poisson, np.round(poisson))


def test_seeded_draws_repeat_and_differ_between_ops() -> None:
    first = _draw(lambda tf: [tf.multinomial(LOGITS, 50), tf.multinomial(LOGITS, 50)])
    again = _draw(lambda tf: [tf.multinomial(LOGITS, 50), tf.multinomial(LOGITS, 50)])
    np.testing.assert_array_equal(first[0], again[0])
    assert not np.array_equal(first[0], first[1])
