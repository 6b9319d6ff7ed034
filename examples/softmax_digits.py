"""Softmax regression on scikit-learn's 8x8 digits, saved with a Saver and restored to test:
the classic TF1 MNIST-for-beginners program on a data set that needs no download.

This file differs from its TensorFlow 1 original only in the import line
(``import tensorflow as tf`` there). Run it: ``python examples/softmax_digits.py``.
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import antcolony.compat.v1 as tf


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument(
        "--model-dir", default=None, help="where checkpoints go (default: a temporary directory)"
    )
    args = parser.parse_args(argv)
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="softmax_digits_")

    digits = load_digits()
    images = (digits.data / 16.0).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[digits.target]
    x_train, x_test, y_train, y_test = train_test_split(images, labels, test_size=0.25, random_state=0)

    tf.set_random_seed(0)
    x = tf.placeholder(tf.float32, [None, 64])
    y_ = tf.placeholder(tf.float32, [None, 10])
    W = tf.Variable(tf.zeros([64, 10]), name="W")
    b = tf.Variable(tf.zeros([10]), name="b")
    y = tf.matmul(x, W) + b

    cross_entropy = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=y))
    global_step = tf.train.get_or_create_global_step()
    train_step = tf.train.GradientDescentOptimizer(0.5).minimize(cross_entropy, global_step=global_step)
    correct_prediction = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
    saver = tf.train.Saver(max_to_keep=2)

    rng = np.random.RandomState(0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(args.steps):
            idx = rng.choice(len(x_train), args.batch_size, replace=False)
            sess.run(train_step, feed_dict={x: x_train[idx], y_: y_train[idx]})
            if (i + 1) % 250 == 0:
                path = saver.save(sess, os.path.join(model_dir, "model.ckpt"), global_step=global_step)
                train_accuracy = sess.run(accuracy, feed_dict={x: x_train, y_: y_train})
                print(f"step {i + 1}, train accuracy {train_accuracy:.4f}, saved {path}")
        path = saver.save(sess, os.path.join(model_dir, "model.ckpt"), global_step=global_step)

    # A new session knows nothing of the trained values until it restores them.
    with tf.Session() as sess:
        saver.restore(sess, tf.train.latest_checkpoint(model_dir))
        test_accuracy = sess.run(accuracy, feed_dict={x: x_test, y_: y_test})
        print(f"restored {path} at step {sess.run(global_step)}")
    print(f"test accuracy {test_accuracy:.4f}")
    return float(test_accuracy)


if __name__ == "__main__":
    main()
