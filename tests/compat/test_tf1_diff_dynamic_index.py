"""Differential test against TensorFlow 1: indexing, slicing, padding and tiling whose bounds are
tensors (``x[:, i]``, ``x[i : i + 2]``, ``tf.slice(x, [0, i], [-1, 1])``, ``tf.strided_slice``,
``tf.pad(x, [[0, 0], [0, n]])``, ``tf.tile(v, [batch, 1])``, ``tf.eye(n)``, ``tf.one_hot(i, n)``;
values and gradients), and the static shapes TF1 infers from shape tensors built of known parts
(``tf.reshape(x, tf.stack([n, 20]))`` is ``(?, 20)``); see tf1_diff.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    Table,
    compare,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    run_both,
)

T = Table()
X = normal(6, 4, 5, tag="dyn")
I = np.array(1, np.int32)  # noqa: E741 - TF1 programs' loop index


def _n(tf: Any, x: Any) -> Any:
    return tf.shape(x)[0]


CASES = {
    "index_axis1": lambda tf, x, i: x[:, i],
    "index_axis0": lambda tf, x, i: x[i],
    "range_axis1": lambda tf, x, i: x[:, i : i + 2],
    "index_last_axis": lambda tf, x, i: x[..., i],
    "index_newaxis": lambda tf, x, i: x[:, None, i],
    "negative_index": lambda tf, x, i: x[:, -i],
    "stepped_range": lambda tf, x, i: x[::2, i:],
    "slice_to_end": lambda tf, x, i: tf.slice(x, [0, i, 0], [-1, 1, -1]),
    "slice_packed": lambda tf, x, i: tf.slice(x, tf.stack([0, i, 1]), [2, 2, 3]),
    "strided_slice_masks": lambda tf, x, i: tf.strided_slice(
        x, [0, i, 0], [2, i + 2, 5], [1, 1, 2], begin_mask=1, shrink_axis_mask=0
    ),
    "strided_slice_shrink": lambda tf, x, i: tf.strided_slice(
        x, [0, i, 0], [2, i + 1, 5], shrink_axis_mask=2
    ),
    "pad_tensor": lambda tf, x, i: tf.pad(x, [[0, 0], [i, 1], [0, 0]]),
    "pad_to_length": lambda tf, x, i: tf.pad(
        x, [[0, 0], [0, 7 - tf.shape(x)[1]], [0, 0]], constant_values=-1.0
    ),
    "pad_unknown_batch": lambda tf, x, i: tf.pad(x, [[0, 0], [2, 2], [1, 0]]),
    "tile_batch": lambda tf, x, i: tf.tile(tf.expand_dims(x[0], 0), [_n(tf, x), 1, 1]),
    "tile_packed": lambda tf, x, i: tf.tile(x, tf.stack([1, i + 1, 1])),
    "tile_static": lambda tf, x, i: tf.tile(x, [1, 2, 3]),
    "eye_tensor": lambda tf, x, i: tf.eye(_n(tf, x)) * 2.0,
    "eye_rectangular": lambda tf, x, i: tf.eye(3, _n(tf, x), dtype=tf.float64),
    "one_hot_tensor_depth": lambda tf, x, i: tf.one_hot(tf.range(3) + i, _n(tf, x)),
    "random_shape_then_dense_input": lambda tf, x, i: tf.zeros([_n(tf, x), 6]) + tf.reduce_sum(x),
    "transpose_constant_perm": lambda tf, x, i: tf.transpose(x, tf.constant([0, 2, 1])),
}
for _name, _fn in CASES.items():
    T.case(_name, X, I, unknown_batch=True)(_fn)

LENGTHS = np.array([3, 1, 4, 2, 4, 0], np.int32)
IMG = normal(2, 4, 4, 3, tag="dyn_img")
FILTER = normal(3, 3, 2, 3, tag="dyn_filter")
IDIOMS = {
    "sequence_mask_tensor_maxlen": (
        lambda tf, lengths: tf.sequence_mask(lengths, tf.reduce_max(lengths)),
        (LENGTHS,),
    ),
    "sequence_mask_no_maxlen": (lambda tf, lengths: tf.sequence_mask(lengths, dtype=tf.float32), (LENGTHS,)),
    "tensordot_unknown_batch": (lambda tf, x: tf.tensordot(x, tf.ones([5, 3]) * 0.5, 1), (X,)),
    "tensordot_axes_lists": (lambda tf, x: tf.tensordot(x, x[0], [[1, 2], [0, 1]]), (X,)),
    "resize_to_tensor_size": (lambda tf, im: tf.image.resize_bilinear(im, tf.shape(im)[1:3] * 2), (IMG,)),
    "resize_images_like": (lambda tf, im: tf.image.resize_images(im, tf.shape(im[:, :3, :2])[1:3]), (IMG,)),
    "conv2d_transpose_stacked_shape": (
        lambda tf, im: tf.nn.conv2d_transpose(im, FILTER, tf.stack([tf.shape(im)[0], 8, 8, 2]), [1, 2, 2, 1]),
        (IMG,),
    ),
    "unique_fields": (lambda tf, v: [tf.unique(v).y, tf.unique(v).idx], (LENGTHS,)),
    "split_constant_tensor_sizes": (lambda tf, x: tf.split(x, tf.constant([2, 3]), axis=2)[1], (X,)),
}
for _name, (_fn, _inputs) in IDIOMS.items():
    T.case(_name, *_inputs, unknown_batch=True)(_fn)


@pytest.mark.parametrize("case", T.params())
def test_dynamic_indexing_matches_tf1(case) -> None:  # type: ignore[no-untyped-def]
    compare(case)


SHAPES = [
    "x[:, i]", "x[:, i:i + 2]", "x[i]", "x[..., i]", "x[:, None, i]", "x[1:3, i]", "x[::2, i]", "x[i, 1:3]",
    "y[:, i]", "y[1:3, i]", "y[::2, i]", "y[:, 0:i]",
    "tf.reshape(x, tf.stack([n, 20]))", "tf.ones(tf.stack([n, 2]))", "tf.zeros([n, 3])", "tf.fill([n, 7], 1.0)",
    "tf.random_normal([n, 6])", "tf.random_uniform([n, 6], 0, 1)", "tf.truncated_normal([n, 2])",
    "tf.reshape(x, [n, 4, -1])", "tf.reshape(x, tf.concat([[n], [20]], 0))", "tf.zeros(tf.shape(x))",
    "tf.reshape(x, [-1, tf.shape(x)[1] * 5])", "tf.reshape(x, [n, tf.shape(x)[1], 5])",
    "tf.random_uniform(tf.shape(x)[:2])", "tf.zeros(tf.shape(x)[1:])", "tf.ones([tf.shape(x)[0], tf.shape(x)[2]])",
    "tf.reshape(x, tf.shape(x))", "tf.zeros(tf.concat([tf.shape(x)[:1], [3]], 0))", "tf.reshape(y, [tf.shape(y)[0], 60])",
    "tf.slice(x, [0, i, 0], [-1, 1, -1])", "tf.slice(x, tf.stack([0, i, 0]), [2, 2, 3])",
    "tf.strided_slice(x, [0, i, 0], [2, i + 1, 5], shrink_axis_mask=2)", "tf.strided_slice(x, [0, 0, 0], [2, 2, 5])",
    "tf.tile(x, [n, 1, 1])", "tf.tile(x, tf.stack([1, i, 1]))", "tf.pad(x, [[0, 0], [i, 1], [0, 0]])",
    "tf.pad(x, [[0, 0], [1, 1], [0, 0]])", "tf.eye(n)", "tf.eye(3, n)", "tf.one_hot(i, n)",
    "tf.sequence_mask(tf.range(n), n)", "tf.tensordot(x, tf.ones([5, 3]), 1)", "tf.tensordot(x, x, [[1, 2], [1, 2]])",
    "tf.nn.conv2d_transpose(tf.zeros([n, 4, 4, 3]), tf.ones([3, 3, 2, 3]), tf.stack([n, 8, 8, 2]), [1, 2, 2, 1])",
]  # fmt: skip


def _static_shapes(tf: Any) -> list[Any]:
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4, 5], name="x")
        y = tf.placeholder(tf.float32, [6, 20, 3], name="y")
        i = tf.placeholder(tf.int32, [], name="i")
        n = tf.shape(x)[0]
        scope = {"tf": tf, "x": x, "y": y, "i": i, "n": n}
        shapes = [eval(e, scope) for e in SHAPES]
        return [None if s.shape.ndims is None else s.shape.as_list() for s in shapes]


def test_static_shapes_of_shape_tensors_match_tf1() -> None:
    got = run_both(_static_shapes)
    mismatched = [
        (e, a, t) for e, a, t in zip(SHAPES, got["antcolony"], got["tensorflow"], strict=True) if a != t
    ]
    assert not mismatched, f"(expression, ours, TF's): {mismatched}"


def test_an_axis_known_only_at_run_time_is_a_clear_error() -> None:
    import antcolony.compat.v1 as tf
    from antcolony.errors import GraphError

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        axis = tf.placeholder(tf.int32, [])
        with pytest.raises(GraphError, match=r"axis .* must be known when the graph is built"):
            tf.reduce_sum(x, axis=axis)
        with pytest.raises(GraphError, match="concat axis"):
            tf.concat([x, x], axis=axis)
