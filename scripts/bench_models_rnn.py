"""Model benchmarks of issue 25 (recurrent): a PTB-small LSTM language-model training step,
``lstm_static`` (``tf.nn.static_rnn``, the 20 steps unrolled in the graph) and ``lstm_dynamic``
(``tf.nn.dynamic_rnn``, a while_loop over TensorArrays).

The model is the "small" configuration of TF's PTB tutorial: vocabulary 10k, embedding and two
``BasicLSTMCell(200)`` layers (forget_bias 0), 20 steps, batch 20, a softmax over the vocabulary,
plain SGD. Loaded by ``scripts/bench_models.py``, which times each side in its own process.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

# TF >= 2.16 serves tf.compat.v1.nn.rnn_cell from Keras 2 (the tf-keras package) only under this
# switch, which it reads when the name is first looked up.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

TARGETS: dict[str, float] = {"lstm_static": 1.5, "lstm_dynamic": 1.5}

VOCAB, HIDDEN, LAYERS, STEPS, BATCH = 10_000, 200, 2, 20, 20


def build(name: str, tf: Any, session_config: Any) -> Callable[[], None]:
    """A fresh graph and session for ``name``; returns one training step (sess.run with a feed)."""
    if name not in TARGETS:
        raise ValueError(f"unknown model {name!r}; this module has {sorted(TARGETS)}")
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(0)
        words = tf.placeholder(tf.int32, [BATCH, STEPS], name="words")
        targets = tf.placeholder(tf.int32, [BATCH, STEPS], name="targets")
        with tf.variable_scope("model", initializer=tf.random_uniform_initializer(-0.1, 0.1, seed=1)):
            embedding = tf.get_variable("embedding", [VOCAB, HIDDEN])
            inputs = tf.nn.embedding_lookup(embedding, words)
            cell = tf.nn.rnn_cell.MultiRNNCell(
                [tf.nn.rnn_cell.BasicLSTMCell(HIDDEN, forget_bias=0.0) for _ in range(LAYERS)]
            )
            state = cell.zero_state(BATCH, tf.float32)
            if name == "lstm_static":
                outputs, _ = tf.nn.static_rnn(cell, tf.unstack(inputs, axis=1), initial_state=state)
                output = tf.reshape(tf.concat(outputs, 1), [-1, HIDDEN])
            else:
                outputs, _ = tf.nn.dynamic_rnn(cell, inputs, initial_state=state)
                output = tf.reshape(outputs, [-1, HIDDEN])
            softmax_w = tf.get_variable("softmax_w", [HIDDEN, VOCAB])
            softmax_b = tf.get_variable("softmax_b", [VOCAB])
            logits = tf.nn.bias_add(tf.matmul(output, softmax_w), softmax_b)
            losses = tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=tf.reshape(targets, [-1]), logits=logits
            )
            loss = tf.reduce_sum(losses) / BATCH
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=g, config=session_config)
    sess.run(init)
    rng = np.random.default_rng(0)
    feed = {
        words: rng.integers(0, VOCAB, (BATCH, STEPS)).astype(np.int32),
        targets: rng.integers(0, VOCAB, (BATCH, STEPS)).astype(np.int32),
    }

    def step() -> None:
        sess.run(train, feed)

    return step
