"""Differential test against TensorFlow 1: the gradients of ``tf.qr`` and ``tf.svd`` in the cases
TF1 differentiates (square, tall and wide matrices; svd with and without u / v, reduced and
full). Singular vectors are unique only up to sign (the extra columns of a full basis only as a
subspace), so svd's cases differentiate what is unique: s, the squared entries of the first k
vectors, u diag(s) v^T, and the projection onto the extra columns."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import FRAMEWORKS, Table, compare, normal, park_tf_objects  # noqa: F401 - autouse fixture

T = Table()
SHAPES = {"square": (4, 4), "tall": (5, 3), "wide": (3, 5), "batch_wide": (2, 2, 4), "batch_tall": (2, 4, 2)}
TOL = {"rtol": 1e-4, "atol": 1e-5, "grad_rtol": 2e-3, "grad_atol": 2e-4}

for _name, _shape in SHAPES.items():
    _x = normal(*_shape, tag=f"decomp_{_name}")
    T.case(f"qr_{_name}", _x, **TOL)(lambda tf, x: list(tf.qr(x)))
    T.case(f"qr_{_name}_q_only", _x, **TOL)(lambda tf, x: tf.linalg.qr(x)[0])
    T.case(f"svd_values_{_name}", _x, **TOL)(lambda tf, x: tf.svd(x, compute_uv=False))
    T.case(f"svd_{_name}", _x, **TOL)(lambda tf, x: _svd_unique(tf, x, False))
# full u / v: TF1 differentiates them where the sides differ by at most one
for _name, _shape in {"square": (3, 3), "tall": (4, 3), "wide": (3, 4), "batch_wide": (2, 2, 3)}.items():
    T.case(f"svd_{_name}_full", normal(*_shape, tag=f"svd_full_{_name}"), **TOL)(
        lambda tf, x: _svd_unique(tf, x, True)
    )
T.case("qr_square_full", normal(3, 3, tag="qr_full"), **TOL)(lambda tf, x: list(tf.qr(x, full_matrices=True)))
T.case("qr_wide_full", normal(3, 5, tag="qr_full"), **TOL)(lambda tf, x: list(tf.qr(x, full_matrices=True)))
T.case("svd_u_only", normal(4, 3, tag="svd_u"), **TOL)(lambda tf, x: tf.square(tf.svd(x)[1]))


def _svd_unique(tf: Any, x: Any, full: bool) -> list[Any]:
    s, u_all, v_all = tf.linalg.svd(x, full_matrices=full)
    m, n = x.shape.as_list()[-2:]
    k = min(m, n)
    u, v = u_all[..., :k], v_all[..., :k]
    out = [s, tf.square(u), tf.square(v), tf.matmul(u * tf.expand_dims(s, -2), v, transpose_b=True)]
    if full and m != n:
        extra = u_all[..., k:] if m > n else v_all[..., k:]
        out.append(tf.matmul(extra, extra, transpose_b=True))
    return out


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Any) -> None:
    compare(case)


def test_qr_gradient_of_tall_full_matrices_is_refused_as_tf1() -> None:
    tf = FRAMEWORKS["antcolony"]
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [4, 3])
        q, r = tf.qr(x, full_matrices=True)
        with pytest.raises(Exception, match="full_matrices=False"):
            tf.gradients([q, r], x)


def test_svd_gradient_of_full_matrices_with_sides_two_apart_is_refused_as_tf1() -> None:
    tf = FRAMEWORKS["antcolony"]
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [5, 3])
        s, u, v = tf.svd(x, full_matrices=True)
        with pytest.raises(Exception, match="differ by at most 1"):
            tf.gradients([s, u, v], x)


def test_qr_gradient_needs_static_shape() -> None:
    tf = FRAMEWORKS["antcolony"]
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [None, 3])
        with pytest.raises(Exception, match="static matrix shape"):
            tf.gradients(tf.qr(x)[1], x)


def test_svd_gradient_is_finite_for_distinct_singular_values() -> None:
    tf = FRAMEWORKS["antcolony"]
    a = np.diag([3.0, 2.0, 1.0])
    with tf.Graph().as_default():
        x = tf.constant(a)
        s = tf.svd(x)[0]
        (g,) = tf.gradients(tf.reduce_sum(s), x)
        with tf.Session() as sess:
            got = sess.run(g)
    # d(sum s)/da = u v^T = I for this diagonal matrix
    np.testing.assert_allclose(got, np.eye(3), atol=1e-12)
