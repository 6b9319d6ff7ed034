"""Differential test against TensorFlow 1: ``tf.nn.swish`` / ``silu``, ``relu_layer``,
``max_pool1d`` / ``avg_pool1d`` / ``max_pool_v2`` / ``avg_pool_v2``, ``fused_batch_norm`` (training
and inference), ``batch_norm_with_global_normalization``; ``tf.repeat``, ``invert_permutation``,
``unravel_index``, ``tensor_scatter_nd_update`` / ``_add`` / ``_sub``, ``where_v2``,
``broadcast_static_shape`` / ``broadcast_dynamic_shape``, ``accumulate_n``, ``is_tensor``,
``dimension_value``: outputs and gradients equal TF1's (see tf1_diff.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import Case, Table, compare, ints, normal, park_tf_objects, positive, run_both  # noqa: F401

T = Table()
X = normal(3, 5, tag="nx")
SEQ = normal(2, 9, 3, tag="nseq")
IMG = normal(2, 4, 5, 3, tag="nimg")
SCALE, OFFSET = positive(3, tag="nsc"), normal(3, tag="noff")
MEAN, VAR = normal(3, tag="nmean"), positive(3, tag="nvar")

T.case("swish_silu", X)(lambda tf, x: [tf.nn.swish(x), tf.nn.silu(x), tf.nn.swish(x, beta=0.5)])
T.case("relu_layer", X, normal(5, 4, tag="nw"), normal(4, tag="nb"))(
    lambda tf, x, w, b: tf.nn.relu_layer(x, w, b)
)
T.case("pool1d", SEQ, grad_atol=1e-5)(
    lambda tf, s: [
        tf.nn.max_pool1d(s, 2, 2, "VALID"),
        tf.nn.avg_pool1d(s, [3], [1], "SAME"),
        tf.nn.max_pool_v2(s, 3, 2, "SAME"),
        tf.nn.avg_pool_v2(s, 2, 1, "VALID"),
    ]
)
T.case("pool_v2_2d", IMG)(
    lambda tf, im: [
        tf.nn.max_pool_v2(im, 2, 2, "SAME"),
        tf.nn.avg_pool_v2(im, [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
    ]
)
T.case(
    "fused_batch_norm_training", IMG, SCALE, OFFSET, grad_atol=1e-4, rtol=1e-4, atol=1e-5, unknown_batch=True
)(lambda tf, im, sc, off: list(tf.nn.fused_batch_norm(im, sc, off, epsilon=0.01)))
T.case("fused_batch_norm_inference", IMG, SCALE, OFFSET, MEAN, VAR, grad_atol=1e-4, rtol=1e-4, atol=1e-5)(
    lambda tf, im, sc, off, m, v: tf.nn.fused_batch_norm(im, sc, off, m, v, is_training=False)[0]
)
T.case(
    "batch_norm_with_global_normalization",
    IMG,
    MEAN,
    VAR,
    OFFSET,
    SCALE,
    rtol=1e-4,
    atol=1e-5,
    grad_atol=1e-4,
)(
    lambda tf, im, m, v, b, g: [
        tf.nn.batch_norm_with_global_normalization(im, m, v, b, g, 0.001, True),
        tf.nn.batch_norm_with_global_normalization(im, m, v, b, g, 0.001, False),
    ]
)
T.case("repeat", X, np.array([2, 0, 1], np.int32))(
    lambda tf, x, r: [tf.repeat(x, r, axis=0), tf.repeat(x, 2, axis=1), tf.repeat(x[:2, :2], 3)]
)
T.case("invert_permutation_unravel_index", np.array([3, 0, 4, 1, 2], np.int32), grad=False)(
    lambda tf, p: [
        tf.invert_permutation(p),
        tf.math.invert_permutation(p[::-1]),
        tf.unravel_index(p * 3 + 1, [4, 5]),
        tf.unravel_index(tf.constant(17), tf.constant([3, 2, 4])),
    ]
)
T.case("tensor_scatter_nd", X, normal(2, 5, tag="nupd"), normal(2, tag="nupd2"))(
    lambda tf, x, rows, cells: [
        tf.tensor_scatter_nd_update(x, [[2], [0]], rows),
        tf.tensor_scatter_nd_add(x, [[1, 1], [2, 4]], cells),
        tf.tensor_scatter_nd_sub(x, [[1]], rows[:1]),
        tf.tensor_scatter_update(x, [[0, 3], [1, 2]], cells),
    ]
)
T.case("where_v2", X, normal(5, tag="nwy"))(
    lambda tf, x, y: [
        tf.where_v2(x > 0.0, x, y),
        tf.where_v2(tf.constant([True, False, True, False, True]), x, 0.5),
        tf.where_v2(x[:, :1] > 0, y, x * 2.0),
        tf.where_v2(x > 0.5),
    ]
)
T.case("accumulate_n_broadcast_dynamic_shape", X)(
    lambda tf, x: [
        tf.accumulate_n([x, x * 2.0, x * x]),
        tf.math.accumulate_n([x, -x * 3.0]),
        tf.broadcast_dynamic_shape(tf.shape(x[:, :1]), tf.constant([4, 1, 5])),
    ]
)


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)


def _python_side(tf: Any) -> list[Any]:
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        v = tf.Variable(1.0)
        sp = tf.SparseTensor([[0, 0]], [1.0], [2, 2])
        return [
            [tf.is_tensor(t) for t in (x, v, sp, np.ones(2), [1.0], 3)],
            str(tf.broadcast_static_shape(tf.TensorShape([None, 1, 3]), tf.TensorShape([4, 1]))),
            [tf.dimension_value(d) for d in x.shape],
        ]


def test_python_side_helpers_as_tf1() -> None:
    got = run_both(_python_side)
    assert got["antcolony"] == got["tensorflow"]
