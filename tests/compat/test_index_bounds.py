"""Indices out of range fail the step with an InvalidArgumentError naming the node and the valid
range, whatever their integer type: negative ones too (numpy would wrap them, or read another
row), and values in range give numpy's result."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import antcolony.compat.v1 as tf

PARAMS = np.arange(12, dtype=np.float32).reshape(6, 2)

# name -> (build(params, ids) -> tensor, numpy reference(ids))
OPS: dict[str, tuple[Callable[[Any, Any], Any], Callable[[np.ndarray], np.ndarray]]] = {
    "gather": (lambda p, ids: tf.gather(p, ids, name="lookup"), lambda ids: PARAMS[ids]),
    "embedding_lookup": (
        lambda p, ids: tf.nn.embedding_lookup(p, ids, name="lookup"),
        lambda ids: PARAMS[ids],
    ),
    "sparse_segment_sum": (
        lambda p, ids: tf.sparse_segment_sum(p, ids, [0, 0, 1, 1], name="lookup"),
        lambda ids: np.stack([PARAMS[ids[:2]].sum(0), PARAMS[ids[2:]].sum(0)]),
    ),
}


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("bad", [-1, -7, 6, 2**31 - 1])
def test_an_index_out_of_range_is_an_invalid_argument_error(op: str, dtype: type, bad: int) -> None:
    build, reference = OPS[op]
    g = tf.Graph()
    with g.as_default():
        ids = tf.placeholder(tf.as_dtype(dtype), [4])
        out = build(tf.constant(PARAMS), ids)
    with tf.Session(graph=g) as sess:
        good = np.array([5, 0, 3, 3], dtype)
        np.testing.assert_array_equal(sess.run(out, {ids: good}), reference(good))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"lookup.*must be in \[0, 6\)"):
            sess.run(out, {ids: np.array([1, bad, 2, 2], dtype)})
