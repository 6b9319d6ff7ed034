"""Differential test against TensorFlow 1: constants, shapes, array manipulation, indexing,
masking, einsum / tensordot, control flow, Print and py_func; forward and gradient (see tf1_diff.py)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    Case,
    Table,
    bools,
    compare,
    ints,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
)

T = Table()
A = normal(3, 4, tag="a")
X = normal(2, 3, 4, tag="x")

# constants and creation
T.case("constant", A)(lambda tf, x: x * tf.constant([[1.0, 2.0, 3.0, 4.0]]) + tf.constant(1.5))
T.case("constant_dtype_shape", grad=False)(
    lambda tf: [tf.constant(3, tf.float32, [2, 2]), tf.constant([1, 2])]
)
T.case("placeholder_with_default", A)(lambda tf, x: tf.placeholder_with_default(x * 2.0, [3, 4]) + x)
T.case("fill", grad=False)(lambda tf: [tf.fill([2, 3], 4.5), tf.fill([3], 7)])
T.case("zeros_ones", grad=False)(
    lambda tf: [
        tf.zeros([2, 3]),
        tf.ones([3, 1], tf.int32),
        tf.zeros([2], tf.int64),
        tf.ones([1, 2], tf.float64),
    ]
)
T.case("zeros_like_ones_like", A)(
    lambda tf, x: [tf.zeros_like(x) + x, tf.ones_like(x) * x, tf.ones_like(x, tf.int32)]
)
T.case("range", grad=False)(
    lambda tf: [tf.range(5), tf.range(2, 11, 3), tf.range(0.0, 1.0, 0.25), tf.range(10, 2, -3)]
)
T.case("linspace", grad=False)(lambda tf: tf.linspace(0.0, 1.0, 5))
T.case("eye", grad=False)(
    lambda tf: [tf.eye(3), tf.eye(2, 3), tf.eye(2, batch_shape=[2]), tf.eye(2, dtype=tf.int32)]
)
T.case("one_hot", ints(0, 4, 5), grad=False)(
    lambda tf, i: [
        tf.one_hot(i, 4),
        tf.one_hot(i, 3, on_value=5, off_value=-1),
        tf.one_hot(i, 4, axis=0),
        tf.one_hot(i, 4, on_value=2.0, off_value=0.5, dtype=tf.float64),
    ]
)

# shapes
T.case("reshape", X)(lambda tf, x: tf.reshape(x, [4, 6]))
T.case("reshape_minus_one", X)(lambda tf, x: tf.reshape(x, [-1, 4]))
T.case("reshape_unknown_batch", X, unknown_batch=True)(lambda tf, x: tf.reshape(x, [-1, 12]))
T.case("reshape_to_a_shape_tensor", X, normal(4, 6), unknown_batch=True)(
    lambda tf, x, y: tf.reshape(x, tf.shape(y))
)
T.case("reshape_list_with_a_tensor", X, unknown_batch=True)(lambda tf, x: tf.reshape(x, [tf.shape(x)[0], -1]))
T.case("shape_size", X, grad=False)(lambda tf, x: [tf.shape(x), tf.size(x), tf.shape(x, out_type=tf.int64)])
T.case("expand_dims", A)(lambda tf, x: [tf.expand_dims(x, 0), tf.expand_dims(x, -1), tf.expand_dims(x, 1)])
T.case("squeeze", normal(1, 3, 1, 2))(
    lambda tf, x: [tf.squeeze(x), tf.squeeze(x, [2]), tf.squeeze(x, axis=0)]
)
T.case("squeeze_dims", normal(1, 3, 1, 2))(lambda tf, x: tf.squeeze(x, squeeze_dims=[0]))
T.case("transpose", X)(
    lambda tf, x: [tf.transpose(x), tf.transpose(x, [1, 0, 2]), tf.transpose(x, perm=[2, 0, 1])]
)

# joining and splitting
T.case("concat", A, normal(3, 2))(
    lambda tf, x, y: [tf.concat([x, y], 1), tf.concat([x, x], 0), tf.concat([y, x], -1)]
)
T.case("stack", A, normal(3, 4, tag="b"))(
    lambda tf, x, y: [tf.stack([x, y]), tf.stack([x, y], axis=1), tf.stack([y, x], -1)]
)
T.case("unstack", A)(lambda tf, x: [*tf.unstack(x), *tf.unstack(x, axis=1)])
# slices left unused get zero gradients; odd sizes; float64 through the same kernel
T.case("unstack_some_slices", normal(3, 5, 7))(
    lambda tf, x: [tf.unstack(x, axis=1)[4] * 3.0, tf.unstack(x, axis=-1)[0], tf.unstack(x, num=3)[1]]
)
T.case("unstack_float64_restacked", normal(5, 3).astype(np.float64))(
    lambda tf, x: tf.stack(tf.unstack(x)[::-1], axis=1) * tf.unstack(x, axis=1)[2][None, :]
)
T.case("split", normal(4, 6))(lambda tf, x: [*tf.split(x, 2, axis=1), *tf.split(x, 3, 1)])
T.case("split_sizes", normal(4, 6))(lambda tf, x: [*tf.split(x, [1, -1, 2], 0), *tf.split(x, [2, 4], axis=1)])
T.case("tile", A)(lambda tf, x: [tf.tile(x, [2, 3]), tf.tile(x, [1, 2])])
T.case("slice", normal(4, 6))(lambda tf, x: [tf.slice(x, [1, 2], [2, -1]), tf.slice(x, [0, 0], [4, 1])])
T.case("pad", A)(
    lambda tf, x: [tf.pad(x, [[1, 0], [2, 1]]), tf.pad(x, [[0, 2], [1, 1]], constant_values=7.0)]
)
T.case("strided_slice", X)(lambda tf, x: [x[1], x[:, 1:], x[..., ::2], x[0, None, :, -1], x[:, ::-1]])

# indexing
T.case("gather", A, ints(0, 3, 5, tag="g"))(lambda tf, x, i: tf.gather(x, i))
T.case("gather_axis1", A, ints(0, 4, 2, 3, tag="g1"))(lambda tf, x, i: tf.gather(x, i, axis=1))
T.case("embedding_lookup", normal(6, 3), ints(0, 6, 2, 4, tag="e"))(
    lambda tf, p, i: tf.nn.embedding_lookup(p, i)
)
T.case("boolean_mask", A, bools(3, tag="m"))(lambda tf, x, m: tf.boolean_mask(x, m))
T.case("boolean_mask_2d", A, bools(3, 4, tag="m2"))(lambda tf, x, m: tf.boolean_mask(x, m))
T.case("boolean_mask_axis", A, bools(4, tag="m3"))(lambda tf, x, m: tf.boolean_mask(x, m, axis=1))
T.case("sequence_mask", ints(0, 5, 3, tag="sl"), grad=False)(
    lambda tf, n: [tf.sequence_mask(n, 5), tf.sequence_mask(n, 4, dtype=tf.float32), tf.sequence_mask([1, 3])]
)
T.case("where_select", bools(3, 4), A, normal(3, 4, tag="b"))(lambda tf, c, x, y: tf.where(c, x, y * 2.0))

# contractions
T.case("einsum_matmul", normal(3, 4), normal(4, 5))(lambda tf, x, y: tf.einsum("ij,jk->ik", x, y))
T.case("einsum_batch_transpose", X, normal(2, 5, 4))(lambda tf, x, y: tf.einsum("bij,bkj->bik", x, y))
T.case("einsum_reduce_outer", A, normal(5))(
    lambda tf, x, y: [tf.einsum("ij->j", x), tf.einsum("ij,k->ikj", x, y)]
)
T.case("einsum_trace_diag", normal(4, 4))(lambda tf, x: [tf.einsum("ii->", x), tf.einsum("ii->i", x)])
T.case("tensordot", X, normal(4, 3, 5))(
    lambda tf, x, y: [tf.tensordot(x, y, axes=[[2, 1], [0, 1]]), tf.tensordot(x, y, 1)]
)
T.case("tensordot_int_axes", normal(3, 4), normal(3, 4, tag="b"))(lambda tf, x, y: tf.tensordot(x, y, 2))

# control flow
T.case("cond", A, normal(4, tag="c"))(
    lambda tf, x, y: [
        tf.cond(tf.reduce_sum(x) > 0.0, lambda: x * 2.0, lambda: x - y),
        tf.cond(tf.reduce_sum(x) < 0.0, lambda: x * 2.0, lambda: x - y),
    ]
)
T.case("while_loop", normal(3))(
    lambda tf, x: tf.while_loop(
        lambda i, acc: i < 4, lambda i, acc: (i + 1, acc * 0.9 + tf.sin(acc)), (0, x)
    )[1]
)
T.case("while_loop_counter", grad=False)(
    lambda tf: tf.while_loop(
        lambda i, s: i < 10, lambda i, s: (i + 1, s + i * i), [tf.constant(0), tf.constant(0)]
    )
)

# logging and Python functions: forward values pass through
T.case("Print", A)(lambda tf, x: tf.Print(x * 2.0, [x], message="diff test: ", first_n=0))
T.case("py_func", A, grad=False)(
    lambda tf, x: tf.py_func(lambda a: (np.cumsum(a, axis=1) * 2).astype(np.float32), [x], tf.float32)
)
T.case("py_func_two_outputs", A, grad=False)(
    lambda tf, x: tf.py_func(lambda a: (a * a, np.int32(a.size)), [x], [tf.float32, tf.int32])
)


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)
