"""Differential test against TensorFlow 1: SparseTensor basics (``sparse_tensor_dense_matmul``,
``sparse.from_dense``, ``sparse_reduce_sum`` / ``_max``, ``sparse_retain``, ``sparse_add``,
``sparse_reorder``, ``sparse_transpose``, ``sparse_to_dense``) and feeding a
``sparse_placeholder``: outputs, and gradients with respect to the values and dense operands,
equal TF1's (see tf1_diff.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import Case, Table, compare, normal, park_tf_objects, run_both  # noqa: F401

T = Table()
IDX = [[0, 1], [0, 3], [1, 0], [2, 2], [2, 3]]  # row-major, as TF expects
SHAPE = [3, 4]
VALUES = normal(5, tag="spv")
OTHER_IDX = [[0, 3], [1, 1], [2, 2]]
B = normal(4, 2, tag="spb")
DENSE = np.array([[0.0, 1.5, 0.0], [-2.0, 0.0, 0.0], [0.0, 0.0, 3.0]], np.float32)


def _sp(tf: Any, values: Any, idx: Any = IDX) -> Any:
    return tf.SparseTensor(idx, values, SHAPE)


def _parts(sp: Any) -> list[Any]:
    return [sp.indices, sp.values, sp.dense_shape]


T.case("sparse_tensor_dense_matmul", VALUES, B)(
    lambda tf, v, b: [
        tf.sparse_tensor_dense_matmul(_sp(tf, v), b),
        tf.sparse.sparse_dense_matmul(_sp(tf, v), tf.transpose(b), adjoint_b=True),
        tf.sparse.matmul(_sp(tf, v), b[:3], adjoint_a=True),
    ]
)
T.case("from_dense", DENSE)(lambda tf, d: _parts(tf.sparse.from_dense(d)))
T.case("sparse_reduce_sum", VALUES)(
    lambda tf, v: [
        tf.sparse_reduce_sum(_sp(tf, v)),
        tf.sparse_reduce_sum(_sp(tf, v), axis=1),
        tf.sparse.reduce_sum(_sp(tf, v), 0, keepdims=True),
    ]
)
T.case("sparse_reduce_max", VALUES, grad=False)(
    lambda tf, v: [tf.sparse_reduce_max(_sp(tf, v)), tf.sparse.reduce_max(_sp(tf, v), axis=1)]
)
T.case("sparse_retain", VALUES)(
    lambda tf, v: _parts(tf.sparse_retain(_sp(tf, v), tf.constant([True, False, True, True, False])))
)
T.case("sparse_add_dense", VALUES, DENSE)(
    lambda tf, v, d: tf.sparse_add(_sp(tf, v), tf.pad(d, [[0, 0], [0, 1]]))
)
T.case("sparse_add_sparse", VALUES, np.array([1.0, 2.0, -VALUES[3]], np.float32))(
    lambda tf, v, w: _parts(tf.sparse_add(_sp(tf, v), _sp(tf, w, OTHER_IDX)))
)
T.case("sparse_add_sparse_thresh", VALUES, np.array([1.0, 2.0, -VALUES[3]], np.float32), grad=False)(
    lambda tf, v, w: _parts(tf.sparse.add(_sp(tf, v), _sp(tf, w, OTHER_IDX), 0.5))
)
T.case("sparse_reorder", VALUES)(lambda tf, v: _parts(tf.sparse_reorder(_sp(tf, v[::-1], IDX[::-1]))))
T.case("sparse_transpose", VALUES)(
    lambda tf, v: [*_parts(tf.sparse_transpose(_sp(tf, v))), *_parts(tf.sparse.transpose(_sp(tf, v), [0, 1]))]
)
T.case("sparse_to_dense", VALUES[:3], grad=False)(
    lambda tf, v: [
        tf.sparse_to_dense([[0, 1], [1, 2], [2, 0]], [3, 3], v, default_value=-1.0),
        tf.sparse_to_dense([1, 3], [5], 7),
    ]
)


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)


def _fed(tf: Any) -> list[Any]:
    with tf.Graph().as_default():
        sp = tf.sparse_placeholder(tf.float32, name="sp")
        known = tf.sparse.placeholder(tf.float32, shape=[3, 4])
        out = tf.sparse_tensor_dense_matmul(sp, tf.constant(B))
        total = tf.sparse_reduce_sum(known)
        value = tf.SparseTensorValue(np.array(IDX, np.int64), VALUES, np.array(SHAPE, np.int64))
        names = [t.name for t in _parts(sp) + _parts(known)] + [str(known.shape), str(sp.shape)]
        names += [str(known.indices.shape), str(tf.sparse_placeholder(tf.int32, [None, 2, 2]).shape)]
        with tf.Session() as sess:
            return [
                names,
                sess.run(out, {sp: value}),
                sess.run(out, {sp: (np.array(IDX, np.int64), VALUES, np.array(SHAPE, np.int64))}),
                sess.run(total, {known: value}),
                sess.run(sp, {sp: value}),
            ]


def test_sparse_placeholder_is_fed_as_tf1() -> None:
    got = run_both(_fed)
    ours, theirs = got["antcolony"], got["tensorflow"]
    assert ours[0] == theirs[0]
    for a, t in zip(ours[1:4], theirs[1:4]):
        np.testing.assert_allclose(a, t, rtol=1e-6)
    assert type(ours[4]).__name__ == type(theirs[4]).__name__ == "SparseTensorValue"
    for a, t in zip(ours[4], theirs[4]):
        np.testing.assert_array_equal(a, t)
