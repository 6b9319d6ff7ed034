"""Linear regression with gradient descent: the classic TF1 tutorial.

This file differs from its TensorFlow 1 original only in the import line
(``import tensorflow as tf`` there). Run it: ``python examples/linear_regression.py``.
"""

from __future__ import annotations

import argparse

import numpy as np

import antcolony.compat.v1 as tf


def main(argv: list[str] | None = None) -> tuple[float, float, float]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=1000)
    parser.add_argument("--learning-rate", type=float, default=0.05)
    args = parser.parse_args(argv)

    # Training data: y = 2x + 1 plus noise.
    rng = np.random.RandomState(0)
    train_X = rng.uniform(-3.0, 3.0, 50).astype(np.float32)
    train_Y = (2.0 * train_X + 1.0 + rng.normal(0.0, 0.3, 50)).astype(np.float32)
    n_samples = train_X.shape[0]

    X = tf.placeholder(tf.float32, name="X")
    Y = tf.placeholder(tf.float32, name="Y")
    W = tf.Variable(rng.randn(), name="weight", dtype=tf.float32)
    b = tf.Variable(rng.randn(), name="bias", dtype=tf.float32)

    pred = tf.add(tf.multiply(X, W), b)
    cost = tf.reduce_sum(tf.pow(pred - Y, 2)) / (2 * n_samples)
    optimizer = tf.train.GradientDescentOptimizer(args.learning_rate).minimize(cost)

    init = tf.global_variables_initializer()
    with tf.Session() as sess:
        sess.run(init)
        for epoch in range(args.epochs):
            sess.run(optimizer, feed_dict={X: train_X, Y: train_Y})
            if (epoch + 1) % 200 == 0:
                c = sess.run(cost, feed_dict={X: train_X, Y: train_Y})
                print(f"Epoch: {epoch + 1:04d} cost= {c:.6f} W= {sess.run(W):.4f} b= {sess.run(b):.4f}")
        training_cost = sess.run(cost, feed_dict={X: train_X, Y: train_Y})
        w_value, b_value = sess.run([W, b])
    print(f"Training cost= {training_cost:.6f} W= {w_value:.4f} b= {b_value:.4f}")
    return float(w_value), float(b_value), float(training_cost)


if __name__ == "__main__":
    main()
