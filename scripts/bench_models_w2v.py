"""The "word2vec" model of scripts/bench_models.py: one skip-gram training step with nce_loss.

Vocabulary 50,000, embeddings of 128, batch 128, 64 negative classes drawn by the log-uniform
sampler, SGD with learning rate 1.0 on the mean NCE loss, as TF's basic word2vec program
(examples/word2vec.py) at full size. Word ids follow a Zipf law, as real text does.

The gradients of both tables are IndexedSlices (the looked-up and sampled rows only), applied as
ScatterSub, as in TF1: the step touches a few hundred rows of each 50,000-row table.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

TARGETS: dict[str, float] = {"word2vec": 1.5}

VOCAB = 50_000
DIM = 128
BATCH = 128
NEGATIVES = 64
BATCHES = 32  # distinct pre-generated batches, cycled


def _zipf_ids(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Word ids with P(k) proportional to 1 / (k + 1), k < VOCAB."""
    cdf = np.cumsum(1.0 / np.arange(1, VOCAB + 1))
    return np.searchsorted(cdf, rng.random(shape) * cdf[-1], side="right").astype(np.int32)


def build(name: str, tf: Any, session_config: Any) -> Step:
    """The word2vec training step in a fresh graph and session of ``tf`` (see bench_models.py)."""
    if name not in TARGETS:
        raise KeyError(f"bench_models_w2v defines {sorted(TARGETS)}, not {name!r}")
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        train_inputs = tf.placeholder(tf.int32, shape=[BATCH])
        train_labels = tf.placeholder(tf.int32, shape=[BATCH, 1])
        embeddings = tf.Variable(tf.random_uniform([VOCAB, DIM], -1.0, 1.0))
        embed = tf.nn.embedding_lookup(embeddings, train_inputs)
        nce_weights = tf.Variable(tf.truncated_normal([VOCAB, DIM], stddev=1.0 / math.sqrt(DIM)))
        nce_biases = tf.Variable(tf.zeros([VOCAB]))
        loss = tf.reduce_mean(
            tf.nn.nce_loss(
                weights=nce_weights,
                biases=nce_biases,
                labels=train_labels,
                inputs=embed,
                num_sampled=NEGATIVES,
                num_classes=VOCAB,
            )
        )
        train = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph, config=session_config)
    sess.run(init)
    rng = np.random.default_rng(0)
    feeds = [
        {train_inputs: _zipf_ids(rng, (BATCH,)), train_labels: _zipf_ids(rng, (BATCH, 1))}
        for _ in range(BATCHES)
    ]
    return Step(sess, train, loss, feeds)


class Step:
    """One training step per call, on the next of the pre-generated batches; the session, loss
    and feeds stay reachable for checks."""

    def __init__(self, session: Any, train: Any, loss: Any, feeds: list[dict[Any, np.ndarray]]) -> None:
        self.session, self.train, self.loss, self.feeds = session, train, loss, feeds
        self._cycle = itertools.cycle(feeds)

    def __call__(self) -> None:
        self.session.run(self.train, feed_dict=next(self._cycle))
