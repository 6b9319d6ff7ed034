"""Differential test against TensorFlow 1: tf.nn, tf.losses and tf.layers (same initial weights);
forward, gradients with respect to inputs and trainable variables, and variable names (see tf1_diff.py)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    Case,
    Table,
    compare,
    ints,
    needs_tf_layers,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    positive,
    rng,
)

# TF warns that tf.layers are deprecated (in favour of Keras) on every call
pytestmark = pytest.mark.filterwarnings("ignore:`tf.layers.:UserWarning")

T = Table()
LAYERS = {"marks": (needs_tf_layers,)}
A = normal(3, 4, tag="a") * 3.0
LOGITS = normal(5, 4, tag="logits") * 2.0
PROBS = np.asarray(rng("probs").dirichlet(np.ones(4), 5), np.float32)
CLASSES = ints(0, 4, 5, tag="classes")
BINARY = (rng("binary").random((5, 4)) < 0.5).astype(np.float32)
IMAGES = normal(2, 7, 7, 3, tag="images")
FILTERS = normal(3, 3, 3, 4, tag="filters") * 0.3

# activations
for _name in ["relu", "relu6", "elu", "selu", "softplus", "softsign", "sigmoid", "tanh"]:
    T.case(f"nn.{_name}", A)(lambda tf, x, _n=_name: getattr(tf.nn, _n)(x))
T.case("nn.leaky_relu", A)(lambda tf, x: [tf.nn.leaky_relu(x), tf.nn.leaky_relu(x, alpha=0.1)])
T.case("nn.softmax", A)(lambda tf, x: [tf.nn.softmax(x), tf.nn.softmax(x, axis=0)])
T.case("nn.log_softmax", A)(lambda tf, x: [tf.nn.log_softmax(x), tf.nn.log_softmax(x, axis=0)])
T.case("nn.bias_add", A, normal(4, tag="bias"))(lambda tf, x, b: tf.nn.bias_add(x, b))
T.case("nn.xw_plus_b", A, normal(4, 2, tag="w"), normal(2, tag="b2"))(
    lambda tf, x, w, b: tf.nn.xw_plus_b(x, w, b)
)
T.case("nn.l2_normalize", A)(
    lambda tf, x: [tf.nn.l2_normalize(x, axis=1), tf.nn.l2_normalize(x, 0), tf.nn.l2_normalize(x)]
)
T.case("nn.l2_loss", A)(lambda tf, x: tf.nn.l2_loss(x))
T.case("nn.moments", A)(
    lambda tf, x: [*tf.nn.moments(x, axes=[0]), *tf.nn.moments(x, [0, 1], keep_dims=True)]
)
T.case(
    "nn.batch_normalization",
    A,
    normal(4, tag="m"),
    positive(4, tag="v"),
    normal(4, tag="o"),
    positive(4, tag="s"),
)(lambda tf, x, m, v, o, s: tf.nn.batch_normalization(x, m, v, o, s, 1e-3))

# convolution and pooling
for _pad in ["SAME", "VALID"]:
    T.case(f"nn.conv2d_{_pad}", IMAGES, FILTERS, grad_atol=1e-4)(
        lambda tf, x, f, _p=_pad: [
            tf.nn.conv2d(x, f, [1, 1, 1, 1], _p),
            tf.nn.conv2d(x, f, strides=[1, 2, 2, 1], padding=_p),
        ]
    )
    T.case(f"nn.max_pool_{_pad}", IMAGES)(
        lambda tf, x, _p=_pad: [
            tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], _p),
            tf.nn.max_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], _p),
        ]
    )
    T.case(f"nn.avg_pool_{_pad}", IMAGES)(
        lambda tf, x, _p=_pad: [
            tf.nn.avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], _p),
            tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], _p),
        ]
    )

# cross entropies (labels are inputs too: the _v2 form differentiates them, the TF1 form does not)
T.case("nn.sigmoid_cross_entropy_with_logits", BINARY, LOGITS)(
    lambda tf, y, z: tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=z)
)
# |logits| 15-60: exp(-|x|) is below float32's epsilon, so log(1 + exp(-|x|)) would round the
# losses of the well-classified entries to 0 where TF's Log1p keeps them (1e-26 to 3e-7)
T.case(
    "nn.sigmoid_cross_entropy_with_logits_large_logits",
    BINARY,
    np.sign(LOGITS) * (15.0 + 15.0 * np.abs(LOGITS)),
    atol=0.0,
    grad_atol=0.0,
)(lambda tf, y, z: tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=z))
# logits exactly 0 (TF's gradient there is 0.5 - z: its composite takes the x >= 0 branches) and
# labels between 0 and 1, both differentiated
T.case(
    "nn.sigmoid_cross_entropy_with_logits_zero_logits", PROBS, np.where(np.abs(LOGITS) < 1.5, 0.0, LOGITS)
)(lambda tf, y, z: tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=z))
T.case("nn.sigmoid_cross_entropy_with_logits_scalars", np.float32(0.3), np.float32(-2.5))(
    lambda tf, y, z: [
        tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=z),
        tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=-z),
    ]
)
T.case("nn.softmax_cross_entropy_with_logits", PROBS, LOGITS)(
    lambda tf, y, z: tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=z)
)
T.case("nn.softmax_cross_entropy_with_logits_v2", PROBS, LOGITS)(
    lambda tf, y, z: tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=z)
)
T.case("nn.sparse_softmax_cross_entropy_with_logits", CLASSES, LOGITS)(
    lambda tf, y, z: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=z)
)
T.case("nn.in_top_k", LOGITS, CLASSES, grad=False)(
    lambda tf, p, y: [
        tf.nn.in_top_k(p, y, 1),
        tf.nn.in_top_k(p, y, 2),
        tf.nn.in_top_k(predictions=p, targets=y, k=3),
    ]
)
T.case("nn.top_k", LOGITS)(
    lambda tf, x: [*tf.nn.top_k(x, 2), tf.nn.top_k(x).values, tf.nn.top_k(x, k=4).indices]
)
T.case("nn.dropout_keep_prob_1", A)(lambda tf, x: tf.nn.dropout(x, keep_prob=1.0))

# tf.losses
T.case("losses.mean_squared_error", A, normal(3, 4, tag="t"))(
    lambda tf, y, p: [tf.losses.mean_squared_error(y, p), tf.losses.mean_squared_error(y, p, weights=0.5)]
)
T.case(
    "losses.mean_squared_error_weights",
    A,
    normal(3, 4, tag="t"),
    (rng("mw").random((3, 1)) < 0.6).astype(np.float32),
)(lambda tf, y, p, w: tf.losses.mean_squared_error(y, p, weights=w))
T.case("losses.absolute_difference", A, normal(3, 4, tag="t"))(
    lambda tf, y, p: tf.losses.absolute_difference(y, p)
)
T.case("losses.sparse_softmax_cross_entropy", CLASSES, LOGITS)(
    lambda tf, y, z: [
        tf.losses.sparse_softmax_cross_entropy(y, z),
        tf.losses.sparse_softmax_cross_entropy(y, z, weights=2.0),
    ]
)
T.case("losses.softmax_cross_entropy", PROBS, LOGITS)(
    lambda tf, y, z: [
        tf.losses.softmax_cross_entropy(y, z),
        tf.losses.softmax_cross_entropy(y, z, label_smoothing=0.1),
    ]
)
T.case("losses.sigmoid_cross_entropy", BINARY, LOGITS)(
    lambda tf, y, z: [
        tf.losses.sigmoid_cross_entropy(y, z),
        tf.losses.sigmoid_cross_entropy(y, z, label_smoothing=0.2),
    ]
)
for _reduction in [
    "NONE",
    "SUM",
    "MEAN",
    "SUM_OVER_BATCH_SIZE",
    "SUM_BY_NONZERO_WEIGHTS",
    "SUM_OVER_NONZERO_WEIGHTS",
]:
    T.case(f"losses.compute_weighted_loss_{_reduction}", A, np.array([[1.0], [0.0], [2.0]], np.float32))(
        lambda tf, x, w, _r=_reduction: tf.losses.compute_weighted_loss(
            x, w, reduction=getattr(tf.losses.Reduction, _r)
        )
    )


def _total_loss(tf, x, y):
    out = tf.layers.dense(
        x,
        2,
        kernel_initializer=tf.constant_initializer(normal(4, 2, tag="k")),
        kernel_regularizer=lambda w: 0.1 * tf.reduce_sum(tf.square(w)),
    )
    tf.losses.mean_squared_error(y, out)
    return [tf.losses.get_total_loss(), tf.losses.get_regularization_loss(), tf.add_n(tf.losses.get_losses())]


T.case("losses.get_total_loss", A, normal(3, 2, tag="y"), **LAYERS)(_total_loss)


# tf.layers, from the same initial weights
def _const(tag: str, *shape: int, scale: float = 0.5) -> np.ndarray:
    return normal(*shape, tag=tag, scale=scale)


T.case("layers.dense", A, **LAYERS)(
    lambda tf, x: [
        tf.layers.dense(
            x,
            3,
            kernel_initializer=tf.constant_initializer(_const("d1", 4, 3)),
            bias_initializer=tf.constant_initializer(_const("d1b", 3)),
        ),
        tf.layers.dense(
            x,
            2,
            activation=tf.nn.relu,
            use_bias=False,
            name="second",
            kernel_initializer=tf.constant_initializer(_const("d2", 4, 2)),
        ),
    ]
)
T.case("layers.dense_unknown_batch", A, unknown_batch=True, **LAYERS)(
    lambda tf, x: tf.layers.dense(
        x, 3, tf.nn.tanh, kernel_initializer=tf.constant_initializer(_const("d3", 4, 3))
    )
)
for _pad in ["same", "valid"]:
    T.case(f"layers.conv2d_{_pad}", IMAGES, grad_atol=1e-4, **LAYERS)(
        lambda tf, x, _p=_pad: [
            tf.layers.conv2d(
                x,
                4,
                3,
                padding=_p,
                kernel_initializer=tf.constant_initializer(_const("c1", 3, 3, 3, 4)),
                bias_initializer=tf.constant_initializer(_const("c1b", 4)),
            ),
            tf.layers.conv2d(
                x,
                2,
                [2, 3],
                strides=2,
                padding=_p,
                activation=tf.nn.relu,
                kernel_initializer=tf.constant_initializer(_const("c2", 2, 3, 3, 2)),
            ),
        ]
    )
    T.case(f"layers.pooling2d_{_pad}", IMAGES, **LAYERS)(
        lambda tf, x, _p=_pad: [
            tf.layers.max_pooling2d(x, 2, 2, padding=_p),
            tf.layers.max_pooling2d(x, [3, 2], [2, 1], padding=_p),
            tf.layers.average_pooling2d(x, 2, 2, padding=_p),
            tf.layers.average_pooling2d(x, 3, 2, padding=_p),
        ]
    )
T.case("layers.flatten", IMAGES, **LAYERS)(lambda tf, x: tf.layers.flatten(x))
T.case("layers.flatten_unknown_batch", IMAGES, unknown_batch=True, **LAYERS)(
    lambda tf, x: tf.layers.flatten(x)
)
T.case("layers.dropout_inference", A, **LAYERS)(
    lambda tf, x: [tf.layers.dropout(x, 0.5), tf.layers.dropout(x, 0.3, training=False)]
)


def _batch_norm(training: bool, axis: int = -1):
    def build(tf, x):
        c = x.shape.as_list()[axis]
        return tf.layers.batch_normalization(
            x,
            axis=axis,
            training=training,
            momentum=0.9,
            epsilon=1e-3,
            gamma_initializer=tf.constant_initializer(positive(c, tag="gamma")),
            beta_initializer=tf.constant_initializer(_const("beta", c)),
            moving_mean_initializer=tf.constant_initializer(_const("mm", c)),
            moving_variance_initializer=tf.constant_initializer(positive(c, tag="mv")),
        )

    return build


BN = normal(6, 4, tag="bn")
T.case("layers.batch_normalization_training", BN, grad_atol=1e-4, **LAYERS)(_batch_norm(True))
T.case("layers.batch_normalization_inference", BN, **LAYERS)(_batch_norm(False))
T.case("layers.batch_normalization_training_nhwc", IMAGES, grad_atol=1e-4, **LAYERS)(_batch_norm(True))
T.case("layers.batch_normalization_inference_axis1", IMAGES, **LAYERS)(_batch_norm(False, axis=1))


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)
