"""Differential test against TensorFlow 1: ``tf.linalg`` and the TF1 top-level matrix names
(matrix_inverse, matrix_determinant, cholesky, matrix_solve, ...); forward and gradient (see
tf1_diff.py). Decompositions whose factors are unique only up to signs (svd) are compared
through what is unique."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    FRAMEWORKS,
    Case,
    Table,
    compare,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
)

acv1 = FRAMEWORKS["antcolony"]

T = Table()
SQ = normal(4, 4, tag="sq") + 3 * np.eye(4, dtype=np.float32)
BATCH = normal(2, 3, 3, tag="batch") + 2 * np.eye(3, dtype=np.float32)
RHS = normal(4, 2, tag="rhs")
BRHS = normal(2, 3, 5, tag="brhs")
RECT = normal(5, 3, tag="rect")
WIDE = normal(2, 3, 6, tag="wide")


def spd(tf, x):
    """A symmetric positive definite matrix made from ``x`` (so gradients reach ``x``)."""
    n = x.shape.as_list()[-1]
    return tf.matmul(x, x, transpose_b=True) + n * tf.eye(n, dtype=x.dtype)


# products
T.case("matmul_2d", normal(3, 4), normal(4, 2))(lambda tf, a, b: tf.linalg.matmul(a, b))
T.case("matmul_batch", normal(2, 3, 4), normal(2, 4, 5))(lambda tf, a, b: tf.matmul(a, b))
T.case("matmul_broadcast", normal(2, 1, 3, 4), normal(3, 4, 2))(lambda tf, a, b: tf.linalg.matmul(a, b))
T.case("matmul_batch_by_matrix", normal(2, 3, 4), normal(4, 2))(lambda tf, a, b: tf.matmul(a, b))
for _ta in (False, True):
    for _tb in (False, True):
        T.case(f"matmul_batch_t{int(_ta)}{int(_tb)}", normal(2, 4, 4, tag="p"), normal(2, 4, 4, tag="q"))(
            lambda tf, a, b, ta=_ta, tb=_tb: tf.matmul(a, b, transpose_a=ta, transpose_b=tb)
        )
T.case("matmul_adjoint", normal(3, 4, tag="adj"), normal(2, 3, tag="adj"))(
    lambda tf, a, b: tf.linalg.matmul(a, b, adjoint_a=True, adjoint_b=True)
)

# inverses, determinants, solves
T.case("inv", SQ, rtol=1e-4, atol=1e-5)(lambda tf, x: tf.linalg.inv(x))
T.case("matrix_inverse_batch", BATCH, rtol=1e-4, atol=1e-5)(lambda tf, x: tf.matrix_inverse(x))
T.case("matrix_inverse_adjoint", SQ, rtol=1e-4, atol=1e-5)(lambda tf, x: tf.matrix_inverse(x, adjoint=True))
T.case("inv_float64", SQ.astype(np.float64))(lambda tf, x: tf.linalg.inv(x))
T.case("det", SQ, rtol=1e-4, grad_rtol=1e-3)(lambda tf, x: tf.linalg.det(x))
T.case("matrix_determinant_batch", BATCH, rtol=1e-4, grad_rtol=1e-3)(lambda tf, x: tf.matrix_determinant(x))
T.case("solve", SQ, RHS, rtol=1e-4, atol=1e-5, grad_rtol=1e-3, grad_atol=1e-4)(
    lambda tf, a, b: tf.linalg.solve(a, b)
)
T.case("matrix_solve_adjoint_batch", BATCH, BRHS, rtol=1e-4, atol=1e-5, grad_rtol=1e-3, grad_atol=1e-4)(
    lambda tf, a, b: tf.matrix_solve(a, b, adjoint=True)
)
for _lower in (True, False):
    for _adj in (False, True):
        T.case(
            f"triangular_solve_l{int(_lower)}_a{int(_adj)}",
            SQ,
            RHS,
            rtol=1e-4,
            atol=1e-5,
            grad_rtol=1e-3,
            grad_atol=1e-4,
        )(lambda tf, a, b, lo=_lower, ad=_adj: tf.linalg.triangular_solve(a, b, lower=lo, adjoint=ad))
T.case("matrix_triangular_solve_batch", BATCH, BRHS, rtol=1e-4, atol=1e-5, grad_rtol=1e-3, grad_atol=1e-4)(
    lambda tf, a, b: tf.matrix_triangular_solve(a, b)
)
T.case("cholesky", normal(4, 4, tag="chol"), rtol=1e-4, atol=1e-5, grad_rtol=1e-3, grad_atol=1e-4)(
    lambda tf, x: tf.linalg.cholesky(spd(tf, x))
)
T.case("cholesky_batch_float64", normal(2, 3, 3, tag="chol").astype(np.float64))(
    lambda tf, x: tf.cholesky(spd(tf, x))
)
T.case(
    "cholesky_reads_lower_triangle",
    normal(3, 3, tag="lower"),
    rtol=1e-4,
    atol=1e-5,
    grad_rtol=1e-3,
    grad_atol=1e-4,
)(
    lambda tf, x: tf.cholesky(
        tf.linalg.band_part(spd(tf, x), -1, 0)
        + tf.linalg.band_part(x, 0, -1) * 0.0
        + tf.linalg.band_part(tf.ones_like(x), 0, -1)
        - tf.linalg.band_part(tf.ones_like(x), 0, 0)
    )
)
# TF logs a failed decomposition and gives NaNs in the lower triangle of that matrix only (its
# upper triangle is left uninitialised there: not compared)
T.case("cholesky_not_positive_definite", grad=False)(
    lambda tf: tf.linalg.band_part(tf.cholesky(tf.stack([-tf.eye(3), 2 * tf.eye(3), tf.ones([3, 3])])), -1, 0)
)

# structure
T.case("diag", normal(2, 4))(lambda tf, d: tf.linalg.diag(d))
T.case("matrix_diag", normal(3))(lambda tf, d: tf.matrix_diag(d))
T.case("diag_part", normal(2, 3, 3))(lambda tf, x: tf.linalg.diag_part(x))
T.case("matrix_diag_part_rect", RECT)(lambda tf, x: tf.matrix_diag_part(x))
T.case("set_diag", normal(2, 3, 4), normal(2, 3, tag="d"))(lambda tf, x, d: tf.linalg.set_diag(x, d))
T.case("matrix_set_diag", normal(3, 3), normal(3, tag="d"))(lambda tf, x, d: tf.matrix_set_diag(x, d))
for _lo, _up in ((-1, 0), (0, -1), (1, 2), (0, 0), (-1, -1)):
    T.case(f"band_part_{_lo}_{_up}", normal(2, 4, 5))(
        lambda tf, x, lo=_lo, up=_up: tf.linalg.band_part(x, lo, up)
    )
T.case("matrix_band_part", RECT)(lambda tf, x: tf.matrix_band_part(x, 1, 0))
T.case("tensor_diag", normal(2, 3))(lambda tf, d: tf.diag(d))
T.case("tensor_diag_part", normal(2, 3, 2, 3))(lambda tf, x: tf.diag_part(x))
T.case("linalg_tensor_diag", normal(3))(lambda tf, d: tf.linalg.tensor_diag(d))
T.case("transpose", WIDE)(lambda tf, x: tf.linalg.transpose(x))
T.case("matrix_transpose", RECT)(lambda tf, x: tf.matrix_transpose(x))
T.case("adjoint", WIDE)(lambda tf, x: tf.linalg.adjoint(x))
T.case("trace", normal(2, 3, 3))(lambda tf, x: tf.linalg.trace(x))
T.case("trace_top_level", RECT)(lambda tf, x: tf.trace(x))
T.case("eye", grad=False)(lambda tf: tf.linalg.eye(3, 4, batch_shape=[2], dtype=tf.float64))

# norms
_NORMS = {
    "euclidean": {},
    "euclidean_axis": {"axis": 1},
    "euclidean_keepdims": {"axis": -1, "keepdims": True},
    "l1": {"ord": 1, "axis": 0},
    "inf": {"ord": np.inf, "axis": 1},
    "p3": {"ord": 3, "axis": 1},
    "fro": {"ord": "fro", "axis": [0, 1]},
    "matrix_1": {"ord": 1, "axis": [-2, -1]},
    "matrix_inf": {"ord": np.inf, "axis": (0, 1), "keepdims": True},
    "matrix_euclidean": {"axis": [0, 1]},
}
for _n, _kw in _NORMS.items():
    T.case(f"norm_{_n}", normal(4, 5, tag="norm"))(lambda tf, x, kw=_kw: tf.linalg.norm(x, **kw))
T.case("norm_top_level", normal(2, 3, 4))(lambda tf, x: tf.norm(x, axis=[1, 2]))

# decompositions (forward)
for _full in (False, True):
    T.case(f"qr_{'full' if _full else 'reduced'}", RECT, grad=False, rtol=1e-4, atol=1e-5)(
        lambda tf, x, f=_full: list(tf.linalg.qr(x, full_matrices=f))
    )
T.case("qr_batch_wide", WIDE, grad=False, rtol=1e-4, atol=1e-5)(lambda tf, x: list(tf.qr(x)))
T.case("svd_values", WIDE, grad=False, rtol=1e-4, atol=1e-5)(lambda tf, x: tf.linalg.svd(x, compute_uv=False))


def _svd_unique(tf, x, full):
    s, u_all, v_all = tf.linalg.svd(x, full_matrices=full)
    k = min(x.shape.as_list()[-2:])
    # the first k singular vectors are unique up to sign (the rest of a full basis is not):
    # compare |u|, |v| there, the factors' shapes and the reconstruction
    u, v = u_all[..., :k], v_all[..., :k]
    recon = tf.matmul(u * tf.expand_dims(s, -2), v, transpose_b=True)
    return [s, tf.abs(u), tf.abs(v), recon, tf.shape(u_all), tf.shape(v_all)]


for _full in (False, True):
    T.case(f"svd_{'full' if _full else 'reduced'}", RECT, grad=False, rtol=1e-4, atol=1e-5)(
        lambda tf, x, f=_full: _svd_unique(tf, x, f)
    )
T.case("svd_top_level_batch", WIDE, grad=False, rtol=1e-4, atol=1e-5)(lambda tf, x: _svd_unique(tf, x, False))


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)


@pytest.mark.parametrize(
    "build",
    [
        lambda tf: tf.matrix_inverse(tf.zeros([3, 3])),
        lambda tf: tf.matrix_solve(tf.zeros([2, 2]), tf.ones([2, 1])),
    ],
    ids=["singular_inverse", "singular_solve"],
)
def test_invalid_matrices_raise_invalid_argument_as_in_tf1(build) -> None:
    for tf in FRAMEWORKS.values():
        g = tf.Graph()
        with g.as_default():
            out = build(tf)
        with tf.Session(graph=g) as sess, pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(out)


def test_linalg_namespace_exports_only_tf1_names() -> None:
    ours, ref = FRAMEWORKS["antcolony"].linalg, FRAMEWORKS["tensorflow"].linalg
    extra = sorted(n for n in ours.__all__ if not hasattr(ref, n))
    assert not extra, f"tf.linalg names TF1 does not have: {extra}"
    assert sorted(n for n in dir(ours) if not n.startswith("_") and n != "annotations") == sorted(
        ours.__all__
    )
