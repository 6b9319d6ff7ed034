"""A small convolutional network on scikit-learn's 8x8 digits: variable_scope, tf.layers
(conv2d, max_pooling2d, batch_normalization, dropout, dense), batch-norm moving averages through
UPDATE_OPS, Adam, and TensorBoard summaries (``tensorboard --logdir <logdir>``).

This file differs from its TensorFlow 1 original only in the import line
(``import tensorflow as tf`` there). Run it: ``python examples/cnn_digits.py --logdir /tmp/cnn``.
"""

from __future__ import annotations

import argparse
import tempfile

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import antcolony.compat.v1 as tf


def cnn(images, training):
    with tf.variable_scope("cnn"):
        net = tf.reshape(images, [-1, 8, 8, 1])
        with tf.variable_scope("block1"):
            net = tf.layers.conv2d(net, 16, 3, padding="same", use_bias=False, name="conv")
            net = tf.layers.batch_normalization(net, training=training, name="bn")
            net = tf.nn.relu(net)
            net = tf.layers.max_pooling2d(net, 2, 2)  # 4x4
        with tf.variable_scope("block2"):
            net = tf.layers.conv2d(net, 32, 3, padding="same", activation=tf.nn.relu, name="conv")
            net = tf.layers.max_pooling2d(net, 2, 2)  # 2x2
        net = tf.layers.flatten(net)
        net = tf.layers.dense(net, 64, activation=tf.nn.relu, name="fc")
        net = tf.layers.dropout(net, rate=0.3, training=training)
        return tf.layers.dense(net, 10, name="logits")


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument(
        "--logdir", default=None, help="where event files go (default: a temporary directory)"
    )
    args = parser.parse_args(argv)
    logdir = args.logdir or tempfile.mkdtemp(prefix="cnn_digits_")

    digits = load_digits()
    images = (digits.data / 16.0).astype(np.float32)
    x_train, x_test, y_train, y_test = train_test_split(
        images, digits.target.astype(np.int64), test_size=0.25, random_state=0
    )

    tf.set_random_seed(0)
    x = tf.placeholder(tf.float32, [None, 64], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    training = tf.placeholder_with_default(False, [], name="training")

    logits = cnn(x, training)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))

    global_step = tf.train.get_or_create_global_step()
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train_op = tf.train.AdamOptimizer(0.003).minimize(loss, global_step=global_step)

    tf.summary.scalar("loss", loss)
    tf.summary.scalar("accuracy", accuracy)
    conv1_kernel = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="cnn/block1/conv/kernel")[0]
    tf.summary.histogram("conv1_kernel", conv1_kernel)
    merged = tf.summary.merge_all()

    rng = np.random.RandomState(0)
    with tf.Session() as sess:
        writer = tf.summary.FileWriter(logdir, sess.graph)
        sess.run(tf.global_variables_initializer())
        for i in range(args.steps):
            idx = rng.choice(len(x_train), args.batch_size, replace=False)
            feed = {x: x_train[idx], y: y_train[idx], training: True}
            if (i + 1) % 50 == 0:
                summary, _, step = sess.run([merged, train_op, global_step], feed_dict=feed)
                writer.add_summary(summary, step)
                print(f"step {step}, loss {sess.run(loss, feed_dict={x: x_train, y: y_train}):.4f}")
            else:
                sess.run(train_op, feed_dict=feed)
        test_accuracy = sess.run(accuracy, feed_dict={x: x_test, y: y_test})
        writer.close()
    print(f"summaries in {logdir}")
    print(f"test accuracy {test_accuracy:.4f}")
    return float(test_accuracy)


if __name__ == "__main__":
    main()
