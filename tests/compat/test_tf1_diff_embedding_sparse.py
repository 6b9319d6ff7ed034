"""Differential test against TensorFlow 1: tf.nn.embedding_lookup_sparse (every combiner, with and
without weights, a repeated id within an example and across examples, an example with no ids at
the end, sharded tables with both partition strategies); forward and gradients with respect to
the table and the weights (see tf1_diff.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    Case,
    Table,
    compare,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    rng,
)

T = Table()
TABLE = normal(7, 3, tag="table")
# 4 examples: ids [1, 4, 1], [6], [], [0, 4]; the empty one is inside (row 2), not at the end
INDICES = np.array([[0, 0], [0, 1], [0, 2], [1, 0], [3, 0], [3, 1]], np.int64)
IDS = np.array([1, 4, 1, 6, 0, 4], np.int64)
WEIGHTS = np.asarray(rng("spw").uniform(0.2, 2.0, 6), np.float32)


def _sparse(tf: Any, values: Any) -> Any:
    return tf.SparseTensor(tf.constant(INDICES), values, tf.constant([4, 3], tf.int64))


for _combiner in ("sum", "mean", "sqrtn"):
    T.case(f"unweighted_{_combiner}", TABLE)(
        lambda tf, t, _c=_combiner: tf.nn.embedding_lookup_sparse(
            t, _sparse(tf, tf.constant(IDS)), None, combiner=_c
        )
    )
    T.case(f"weighted_{_combiner}", TABLE, WEIGHTS)(
        lambda tf, t, w, _c=_combiner: tf.nn.embedding_lookup_sparse(
            t, _sparse(tf, tf.constant(IDS)), _sparse(tf, w), combiner=_c
        )
    )
for _strategy in ("mod", "div"):
    T.case(f"sharded_{_strategy}", TABLE[:4], TABLE[4:])(
        lambda tf, a, b, _s=_strategy: tf.nn.embedding_lookup_sparse(
            [a, b], _sparse(tf, tf.constant(IDS)), None, partition_strategy=_s, combiner="sum"
        )
    )


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)
