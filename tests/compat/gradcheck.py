"""Gradient check for composite functions: ``tf.gradients`` against central finite differences
of ``sum(w * f(xs))`` for a fixed random ``w``, in float64, run through a blocking session."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import antcolony.compat.v1 as tf


def check_gradients(
    fn: Callable[..., Any],
    inputs: Sequence[np.ndarray],
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-7,
    seed: int = 0,
) -> None:
    rng = np.random.default_rng(seed)
    g = tf.Graph()
    with g.as_default():
        xs = [tf.placeholder(tf.float64, np.shape(a), name=f"x{i}") for i, a in enumerate(inputs)]
        y = fn(*xs)
        w = tf.placeholder(tf.float64, y.shape.dims, name="w")
        objective = tf.reduce_sum(y * w)
        # a gather's gradient is an IndexedSlices (as TF): checked as the dense tensor it stands for
        grads = [
            tf.convert_to_tensor(gr) if isinstance(gr, tf.IndexedSlices) else gr
            for gr in tf.gradients(objective, xs)
        ]
        init = tf.variables_initializer(tf.global_variables())  # fn may build layers with variables
    values = [np.asarray(a, dtype=np.float64) for a in inputs]
    with tf.Session(graph=g) as sess:
        sess.run(init)
        weights = rng.standard_normal(sess.run(y, dict(zip(xs, values))).shape)
        feed = {**dict(zip(xs, values)), w: weights}
        analytic = sess.run([gr for gr in grads if gr is not None], feed)
        assert len(analytic) == len(xs), "some input got no gradient"
        run_objective = sess.make_callable(objective, [*xs, w])
        for i, x in enumerate(values):
            numeric = np.zeros_like(x)
            for idx in np.ndindex(x.shape):
                probes = []
                for sign in (1.0, -1.0):
                    moved = [v.copy() for v in values]
                    moved[i][idx] += sign * eps
                    probes.append(float(run_objective(*moved, weights)))
                numeric[idx] = (probes[0] - probes[1]) / (2 * eps)
            np.testing.assert_allclose(
                analytic[i], numeric, rtol=rtol, atol=atol, err_msg=f"gradient of input {i}"
            )
