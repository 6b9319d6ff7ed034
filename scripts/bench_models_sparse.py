"""Models of scripts/bench_models.py: "embedding" (issue 24: a sparse training step).

embedding: a 200k x 128 float32 table, 256 ids a step (seeded, uniform over the rows), the
looked-up rows against a target, squared loss summed, plain SGD 0.1. TF1's gradient of the lookup is an IndexedSlices and its update a ScatterSub of 256 rows; a step that treats
the gradient as dense reads and writes the whole 100 MB table. Both sides start from the same
seeded table (fed to the initializer, not baked into the graph) and train on the same batch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

TARGETS = {"embedding": 2.0}
ROWS, DIM, BATCH = 200_000, 128, 256


def _embedding(
    tf: Any, rng: np.random.Generator
) -> tuple[Any, Any, dict[Any, np.ndarray], dict[Any, np.ndarray]]:
    initial = tf.placeholder(tf.float32, [ROWS, DIM], name="initial_table")
    table = tf.Variable(initial, name="table")
    ids = tf.placeholder(tf.int32, [BATCH], name="ids")
    target = tf.placeholder(tf.float32, [BATCH, DIM], name="target")
    e = tf.nn.embedding_lookup(table, ids)
    loss = tf.reduce_sum(tf.square(e - target))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    init_feed = {initial: rng.uniform(-0.05, 0.05, (ROWS, DIM)).astype(np.float32)}
    feed = {
        ids: rng.integers(0, ROWS, BATCH, dtype=np.int32),
        target: rng.standard_normal((BATCH, DIM)).astype(np.float32),
    }
    return loss, train, init_feed, feed


_BUILDERS = {"embedding": _embedding}


def build(name: str, tf: Any, session_config: Any) -> Callable[[], None]:
    """One training step of model ``name`` in a fresh graph and session of framework ``tf``."""
    g = tf.Graph()
    with g.as_default():
        loss, train, init_feed, feed = _BUILDERS[name](tf, np.random.default_rng(0))
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=g, config=session_config)
    sess.run(init, init_feed)
    del init_feed
    fetches = [loss, train]

    def step() -> None:
        sess.run(fetches, feed)

    return step
