"""Differential test against TensorFlow 1: ``tf.self_adjoint_eig`` / ``tf.linalg.eigh`` (values,
eigenvectors up to sign, gradients, the lower triangle read), ``self_adjoint_eigvals`` /
``eigvalsh``, ``tf.cross``, ``tf.linalg.matvec``, ``tf.linalg.logdet``, and ``tf.squeeze`` of
tensors with unknown dimensions (nfmcclure's cookbook calls the first two and the last)."""

from __future__ import annotations

import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import Case, Table, compare, normal, park_tf_objects, run_both  # noqa: F401 - park_tf_objects: autouse

T = Table()
M = normal(4, 4, tag="em")
BATCH = normal(2, 3, 3, tag="eb")


def _sym(tf, x):
    return x + tf.linalg.matrix_transpose(x)


# eigenvectors are defined up to sign: compare v * v (and products that do not depend on it)
T.case("eigh", M, grad_atol=1e-4, rtol=1e-4, atol=1e-5)(
    lambda tf, x: [tf.self_adjoint_eig(_sym(tf, x))[0], tf.square(tf.self_adjoint_eig(_sym(tf, x))[1])]
)
T.case("eigh_batch_reconstruct", BATCH, grad_atol=1e-4, rtol=1e-4, atol=1e-5)(
    lambda tf, x: (lambda ev: [ev[0], tf.matmul(ev[1] * tf.expand_dims(ev[0], -2), ev[1], transpose_b=True)])(
        tf.linalg.eigh(_sym(tf, x))
    )
)
T.case("eigh_reads_lower_triangle", M, grad_atol=1e-4, rtol=1e-4, atol=1e-5)(
    lambda tf, x: tf.linalg.eigh(x)[0]
)
T.case("eigvals", BATCH, grad_atol=1e-4, rtol=1e-4, atol=1e-5)(
    lambda tf, x: [tf.self_adjoint_eigvals(_sym(tf, x)), tf.linalg.eigvalsh(_sym(tf, x) * 2.0)]
)
T.case("cross", normal(4, 3, tag="ca"), normal(4, 3, tag="cb"))(
    lambda tf, a, b: [tf.cross(a, b), tf.linalg.cross(a[:1], b[2:3])]
)
T.case("matvec_logdet", M, normal(4, tag="mv"), rtol=1e-4, grad_atol=1e-4)(
    lambda tf, a, v: [
        tf.linalg.matvec(a, v),
        tf.linalg.matvec(a, v, transpose_a=True),
        tf.linalg.logdet(tf.matmul(a, a, transpose_b=True) + 3.0 * tf.eye(4)),
    ]
)
T.case("squeeze_unknown_dims", normal(2, 1, 3, 1, tag="sq"), unknown_batch=True)(
    lambda tf, x: [tf.squeeze(x), tf.squeeze(x, [1]), tf.squeeze(x, axis=[1, 3])]
)


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)


def test_squeeze_static_shapes_as_tf1() -> None:
    def shapes(tf):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [None, 1, 3, None])
            return [str(tf.squeeze(x).shape), str(tf.squeeze(x, [1]).shape), str(tf.squeeze(x, [1, 3]).shape)]

    got = run_both(shapes)
    assert got["antcolony"] == got["tensorflow"]
