"""Models of scripts/bench_models.py: "cnn" (TF's "Deep MNIST" tutorial CNN) and "mlp" (the digits
MLP of scripts/train_digits.py and bench_executor's MLP step).

cnn: 28x28x1 input, conv 5x5x32 SAME + relu, max_pool 2x2, conv 5x5x64 SAME + relu, max_pool
2x2, fc 1024 relu, fc 10, softmax cross entropy, Adam 1e-4, batch 64 (written with tf.nn as the
tutorial is, without its dropout). mlp: 64 features, dense 128 and 64 with relu, 10 classes,
sparse softmax cross entropy, Adam 1e-3, batch 64. Both sides start from the same seeded numpy
weights and train on the same seeded batch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

TARGETS = {"cnn": 1.5, "mlp": 1.0}
BATCH = 64


def _truncated(rng: np.random.Generator, shape: tuple[int, ...], stddev: float) -> np.ndarray:
    # the tutorial's truncated_normal(stddev=0.1): redraw what falls beyond two deviations
    w = rng.standard_normal(shape)
    bad = np.abs(w) > 2
    while bad.any():
        w[bad] = rng.standard_normal(int(bad.sum()))
        bad = np.abs(w) > 2
    return (w * stddev).astype(np.float32)


def _cnn(tf: Any, rng: np.random.Generator) -> tuple[Any, Any, dict[Any, np.ndarray]]:
    def weight(*shape: int) -> Any:
        return tf.Variable(_truncated(rng, shape, 0.1))

    def bias(n: int) -> Any:
        return tf.Variable(np.full(n, 0.1, np.float32))

    def conv2d(x: Any, w: Any) -> Any:
        return tf.nn.conv2d(x, w, strides=[1, 1, 1, 1], padding="SAME")

    def max_pool_2x2(x: Any) -> Any:
        return tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")

    x = tf.placeholder(tf.float32, [None, 784], name="x")
    y_ = tf.placeholder(tf.float32, [None, 10], name="y_")
    x_image = tf.reshape(x, [-1, 28, 28, 1])
    h_pool1 = max_pool_2x2(tf.nn.relu(conv2d(x_image, weight(5, 5, 1, 32)) + bias(32)))
    h_pool2 = max_pool_2x2(tf.nn.relu(conv2d(h_pool1, weight(5, 5, 32, 64)) + bias(64)))
    h_flat = tf.reshape(h_pool2, [-1, 7 * 7 * 64])
    h_fc1 = tf.nn.relu(tf.matmul(h_flat, weight(7 * 7 * 64, 1024)) + bias(1024))
    y_conv = tf.matmul(h_fc1, weight(1024, 10)) + bias(10)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=y_conv))
    train = tf.train.AdamOptimizer(1e-4).minimize(loss)
    images = rng.random((BATCH, 784), dtype=np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, BATCH)]
    return loss, train, {x: images, y_: labels}


def _mlp(tf: Any, rng: np.random.Generator) -> tuple[Any, Any, dict[Any, np.ndarray]]:
    features, widths = 64, (128, 64, 10)
    x = tf.placeholder(tf.float32, [None, features], name="x")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    h, fan = x, features
    for i, width in enumerate(widths):
        w = tf.Variable(
            (rng.standard_normal((fan, width)) * np.sqrt(2.0 / fan)).astype(np.float32), name=f"w{i}"
        )
        b = tf.Variable(np.zeros(width, np.float32), name=f"b{i}")
        h = tf.nn.bias_add(tf.matmul(h, w), b)
        if i < len(widths) - 1:
            h = tf.nn.relu(h)
        fan = width
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=h))
    train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    feed = {x: rng.standard_normal((BATCH, features)).astype(np.float32), labels: rng.integers(0, 10, BATCH)}
    return loss, train, feed


_BUILDERS = {"cnn": _cnn, "mlp": _mlp}


def build(name: str, tf: Any, session_config: Any) -> Callable[[], None]:
    """One training step of model ``name`` in a fresh graph and session of framework ``tf``."""
    g = tf.Graph()
    with g.as_default():
        loss, train, feed = _BUILDERS[name](tf, np.random.default_rng(0))
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=g, config=session_config)
    sess.run(init)
    fetches = [loss, train]

    def step() -> None:
        sess.run(fetches, feed)

    return step
