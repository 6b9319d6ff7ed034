"""Differential test against TensorFlow 1: ``tf.hessians`` of scalar and non-scalar ys, several xs,
a quadratic form and a network-like function; see tf1_diff.py."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import Table, compare, normal, park_tf_objects  # noqa: F401 - park_tf_objects: autouse

T = Table()
X = normal(2, 3, tag="hess_x")
V = normal(4, tag="hess_v")
A = np.array(
    [[2.0, 0.5, 0.0, 1.0], [0.5, 1.0, -1.0, 0.0], [0.0, -1.0, 3.0, 0.5], [1.0, 0.0, 0.5, 1.5]], np.float32
)

T.case("cubic_sum", X, grad=False)(lambda tf, x: tf.hessians(tf.reduce_sum(x**3), x))
T.case("cross_terms", X, grad=False)(
    lambda tf, x: tf.hessians(tf.reduce_sum(x[0] * x[1]) + tf.reduce_sum(tf.sin(x)), x)
)
T.case("quadratic_form", V, grad=False)(
    lambda tf, v: tf.hessians(tf.reduce_sum(v * tf.linalg.matvec(tf.constant(A), v)), v)
)
T.case("non_scalar_ys", X, grad=False)(lambda tf, x: tf.hessians(tf.exp(x) * 0.5, x))
T.case("two_xs", X, V, grad=False)(
    lambda tf, x, v: tf.hessians(tf.reduce_sum(tf.tanh(x)) * tf.reduce_sum(v**2), [x, v])
)


@pytest.mark.parametrize("case", T.params())
def test_hessians_match_tf1(case) -> None:  # type: ignore[no-untyped-def]
    compare(case)
