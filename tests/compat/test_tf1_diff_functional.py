"""Differential test against TensorFlow 1: tf.map_fn, tf.scan, tf.foldl and tf.foldr (while loops
over TensorArrays), forward and gradients, nested element structures, reverse scans, lengths
known only at run time (see tf1_diff.py)."""

from __future__ import annotations

import pytest

from antcolony.errors import GraphError

pytest.importorskip("tensorflow")

from .tf1_diff import (
    Case,
    Table,
    compare,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
)

T = Table()
X = normal(5, 3, tag="x")
Y = normal(5, 3, tag="y")
M = normal(4, 3, 3, tag="m") * 0.5

T.case("map_fn_square_plus_one", X)(lambda tf, x: tf.map_fn(lambda e: e * e + 1.0, x))
T.case("map_fn_matrices", M)(lambda tf, m: tf.map_fn(lambda a: tf.matmul(a, a), m))
T.case("map_fn_tuple_in_one_out", X, Y)(
    lambda tf, x, y: tf.map_fn(lambda p: p[0] * tf.sin(p[1]), (x, y), dtype=tf.float32)
)
T.case("map_fn_tuple_in_tuple_out", X, Y)(
    lambda tf, x, y: list(
        tf.map_fn(lambda p: (p[0] + p[1], tf.reduce_sum(p[0] * p[1])), (x, y), dtype=(tf.float32, tf.float32))
    )
)
T.case("map_fn_unknown_length", X, unknown_batch=True)(
    lambda tf, x: tf.map_fn(lambda e: tf.reduce_sum(tf.exp(e)), x)
)
T.case("scan_cumulative_sum", X)(lambda tf, x: tf.scan(lambda a, e: a + e, x))
T.case("scan_with_initializer", X)(
    lambda tf, x: tf.scan(lambda a, e: a * 0.5 + tf.tanh(e), x, initializer=tf.zeros([3]))
)
T.case("scan_reverse", X)(lambda tf, x: tf.scan(lambda a, e: a * e, x, reverse=True))
T.case("scan_tuple_accumulator", X)(
    lambda tf, x: list(
        tf.scan(lambda a, e: (a[0] + e, a[1] * 0.9 + e * e), x, initializer=(tf.zeros([3]), tf.ones([3])))
    )
)
T.case("foldl_sum_and_product", X)(
    lambda tf, x: [tf.foldl(lambda a, e: a + e, x), tf.foldl(lambda a, e: a * e, x, initializer=tf.ones([3]))]
)
T.case("foldr_order_matters", X)(
    lambda tf, x: [tf.foldr(lambda a, e: a * 0.5 + e, x), tf.foldl(lambda a, e: a * 0.5 + e, x)]
)
T.case("fold_unknown_length", X, unknown_batch=True)(
    lambda tf, x: tf.foldr(lambda a, e: tf.maximum(a, e) + 0.1 * a, x)
)


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)


def test_map_fn_names_a_result_structure_that_does_not_match() -> None:
    import antcolony.compat.v1 as tf

    with tf.Graph().as_default():
        x = tf.constant(X)
        with pytest.raises(GraphError, match=r"2 tensor\(s\) where 1 were expected.*dtype="):
            tf.map_fn(lambda e: (e, e), x)


def test_a_scalar_has_no_elements_to_map() -> None:
    import antcolony.compat.v1 as tf

    with tf.Graph().as_default(), pytest.raises(GraphError, match="rank >= 1"):
        tf.map_fn(lambda e: e, tf.constant(1.0))
