"""Differential test against TensorFlow 1: layers written by subclassing ``tf.layers.Layer``
(``build`` with ``add_weight`` / ``add_variable``, ``call``): built once, variables and ops named as
TF1 names them, shared on later calls and from other scopes, regularizers and non-trainable
weights; outputs and gradients as TF1's with the same initial weights (see tf1_diff.py)."""

from __future__ import annotations

import numpy as np
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

pytestmark = [
    pytest.mark.filterwarnings("ignore:`tf.layers.:UserWarning"),
    pytest.mark.filterwarnings("ignore:`layer.add_variable`:UserWarning"),
    needs_tf_layers,
]
T = Table()
X = normal(3, 4, tag="sx")
W = normal(4, 5, tag="sw") * 0.5
B = normal(5, tag="sb")


def _classes(tf):
    """The same two layer classes, written against either framework's ``tf``."""

    class Affine(tf.layers.Layer):
        def __init__(self, units, scale=1.0, **kwargs):
            super().__init__(**kwargs)
            self.units, self.scale = units, scale

        def build(self, input_shape):
            n_in = input_shape[-1].value  # TF1's Dimension
            self.w = self.add_weight(
                "w",
                shape=[n_in, self.units],
                initializer=tf.constant_initializer(W[:n_in, : self.units]),
                regularizer=lambda v: 0.5 * tf.reduce_sum(tf.square(v)),
            )
            self.b = self.add_variable(
                "b", shape=[self.units], initializer=tf.constant_initializer(B[: self.units])
            )
            self.count = self.add_weight(
                "count", shape=[], initializer=tf.zeros_initializer(), trainable=False
            )
            super().build(input_shape)

        def call(self, inputs, squash=False):
            out = tf.matmul(inputs, self.w) * self.scale + self.b
            return tf.nn.tanh(out) if squash else out

    class Block(tf.layers.Layer):
        """A layer of layers: one made in __init__, one functional layer inside call."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.inner = Affine(5, scale=0.5)

        def call(self, inputs):
            h = self.inner(inputs, squash=True)
            return tf.layers.dense(h, 2, kernel_initializer=tf.constant_initializer(W.T[:, :2]))

    return Affine, Block


def _shared(tf, x):
    affine, _ = _classes(tf)
    layer = affine(5)
    first = layer(x)
    with tf.variable_scope("elsewhere"):
        second = layer(x * 2.0, squash=True)  # the same variables, from another scope
    named = affine(3, name="named")(x)
    return [first, second, named, tf.add_n(tf.losses.get_regularization_losses())]


def _nested(tf, x):
    _, block = _classes(tf)
    layer = block()
    return [layer(x), layer(x[::-1])]


T.case("subclass_shared_across_scopes", X)(_shared)
T.case("subclass_of_layers", X)(_nested)


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)


def _names(fw: str) -> dict[str, object]:
    tf = FRAMEWORKS[fw]
    affine, block = _classes(tf)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        layer = affine(5)
        built_before = layer.built
        out1, out2 = layer(x), layer(x)
        with tf.variable_scope("outer"):
            other = affine(2)
            out3 = other(x)
        again = affine(2)
        again(x)
        nested = block()
        out4 = nested(x)
        frozen = affine(2, trainable=False)
        frozen(x)
        return {
            "built": (built_before, layer.built),
            "globals": [v.name for v in tf.global_variables()],
            "trainables": [v.name for v in tf.trainable_variables()],
            "ops": [out1.name, out2.name, out3.name, out4.name],
            "layer": [
                [v.name for v in layer.trainable_weights],
                [v.name for v in layer.non_trainable_weights],
                [v.name for v in layer.variables],
                [v.name for v in nested.trainable_variables],
                [v.name for v in frozen.trainable_weights],
                sorted(v.name for v in frozen.non_trainable_weights),
            ],
            "scopes": [other.scope_name, again.scope_name],
            "losses": [len(layer.losses), len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES))],
            "is_layer": [isinstance(tf.layers.Dense(2), tf.layers.Layer), isinstance(layer, tf.layers.Layer)],
        }


def test_names_and_bookkeeping_as_tf1() -> None:
    ours, ref = _names("antcolony"), _names("tensorflow")
    for key in ref:
        assert ours[key] == ref[key], key


def test_base_layer_returns_its_inputs_and_counts_weights() -> None:
    tf = FRAMEWORKS["antcolony"]
    affine, _ = _classes(tf)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        passthrough = tf.layers.Layer(name="identity")(x)
        layer = affine(5)
        layer(x)
        with tf.Session() as sess:
            got = sess.run(passthrough, {x: X})
    np.testing.assert_array_equal(got, X)
    assert layer.count_params() == 4 * 5 + 5 + 1
