"""Differential test against TensorFlow 1: tf.layers' class layers (Dense, Conv1D, Conv2D,
Conv2DTranspose, the poolings, Flatten, Dropout, BatchNormalization): a layer object applied twice
shares its variables, in other scopes too; names, outputs and gradients as TF1's with the same
initial weights (see tf1_diff.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    FRAMEWORKS,
    Case,
    Table,
    compare,
    needs_tf_layers,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
)

pytestmark = [pytest.mark.filterwarnings("ignore:`tf.layers.:UserWarning"), needs_tf_layers]
T = Table()
X = normal(3, 4, tag="lx")
IMG = normal(2, 6, 6, 2, tag="limg")
SEQ = normal(2, 9, 3, tag="lseq")


def _init(tag: str, *shape: int):
    values = normal(*shape, tag=tag) * 0.5
    return lambda tf: tf.constant_initializer(values)


def _siamese(tf, a):
    shared = tf.layers.Dense(3, tf.nn.tanh, kernel_initializer=_init("dk", 4, 3)(tf), name="shared")
    head = tf.layers.Dense(2, kernel_initializer=_init("dh", 3, 2)(tf), bias_initializer=_init("db", 2)(tf))
    left = head(shared(a))
    with tf.variable_scope("other"):
        right = head(shared(a * 0.5))  # the same variables, from another scope
    return [left, right, tf.stack([tf.reduce_sum(v) for v in shared.variables + head.trainable_variables])]


def _convnet(tf, img):
    conv = tf.layers.Conv2D(
        4, 3, padding="same", activation=tf.nn.relu, kernel_initializer=_init("ck", 3, 3, 2, 4)(tf)
    )
    pool = tf.layers.MaxPooling2D(2, 2)
    avg = tf.layers.AveragePooling2D(3, 1, padding="same")
    up = tf.layers.Conv2DTranspose(2, 2, strides=2, kernel_initializer=_init("tk", 2, 2, 2, 4)(tf))
    h = pool(conv(img))
    flat = tf.layers.Flatten()(avg(h))
    return [up(h), flat, conv(img * 2.0)]


def _text(tf, seq):
    conv = tf.layers.Conv1D(5, 3, kernel_initializer=_init("c1", 3, 3, 5)(tf))
    h = tf.layers.MaxPooling1D(2, 2)(conv(seq))
    return [h, tf.layers.AveragePooling1D(2, 1)(h), conv(seq[:, ::-1])]


def _batch_norm(tf, x):
    bn = tf.layers.BatchNormalization(momentum=0.9, gamma_initializer=_init("g", 4)(tf))
    drop = tf.layers.Dropout(0.5)
    train = bn(x, training=True)
    infer = bn(x * 3.0, training=False)
    return [train, infer, drop(x, training=False)]


T.case("Dense_shared_across_scopes", X)(_siamese)
T.case("Conv2D_pools_transpose_flatten", IMG, grad_atol=1e-4)(_convnet)
T.case("Conv1D_pools", SEQ, grad_atol=1e-4)(_text)
T.case("BatchNormalization_Dropout", X, grad_atol=1e-4)(_batch_norm)


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)


@pytest.mark.parametrize("fw", ["antcolony", "tensorflow"])
def test_a_layer_object_builds_once_and_names_its_variables_as_tf1(fw: str) -> None:
    tf = FRAMEWORKS[fw]
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        first, second = tf.layers.Dense(3), tf.layers.Dense(2, use_bias=False)
        first(x)
        first(x)
        second(first(x))
        bn = tf.layers.BatchNormalization()
        bn(x, training=True)
        names = sorted(v.name for v in tf.global_variables())
        assert first.kernel.name == "dense/kernel:0" and first.bias.name == "dense/bias:0"
        assert second.kernel.name == "dense_1/kernel:0" and second.bias is None
        assert [v.name for v in first.trainable_variables] == ["dense/kernel:0", "dense/bias:0"]
        assert {v.name for v in bn.non_trainable_variables} == {
            "batch_normalization/moving_mean:0",
            "batch_normalization/moving_variance:0",
        }
    assert names == sorted(
        [
            "batch_normalization/beta:0",
            "batch_normalization/gamma:0",
            "batch_normalization/moving_mean:0",
            "batch_normalization/moving_variance:0",
            "dense/bias:0",
            "dense/kernel:0",
            "dense_1/kernel:0",
        ]
    )
