"""Variable names of tf.layers under re-entered and reused variable scopes, against TF1.

A GAN's discriminator is called twice, the second time in its scope with ``reuse_variables()``:
TF1 numbers the default-named layer scopes (``dense``, ``dense_1``) from the start on each entry
of a scope opened by name, so the second call finds the first call's variables (a public TF1
tutorial, golbin/TensorFlow-Tutorials' GAN2, failed here before: ``dense_2`` does not exist)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.compat.tf1_diff import acv1, tf1


def _build(tf: Any) -> list[str]:
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3])

        def discriminator(inputs: Any, reuse: bool = False) -> Any:
            with tf.variable_scope("discriminator") as scope:
                if reuse:
                    scope.reuse_variables()
                hidden = tf.layers.dense(inputs, 4, activation=tf.nn.relu)
                return tf.layers.dense(hidden, 1)

        discriminator(x)
        discriminator(x * 2.0, reuse=True)
        with tf.variable_scope("outer"):
            with tf.variable_scope("inner"):
                tf.layers.dense(x, 2)
                tf.layers.dense(x, 2)
            with tf.variable_scope("inner", reuse=True):
                tf.layers.dense(x, 2)
                tf.layers.dense(x, 2)
            with tf.variable_scope("kept") as kept:
                tf.layers.dense(x, 2)
            with tf.variable_scope(kept, reuse=True):
                tf.layers.dense(x, 2)
            for _ in range(2):
                with tf.variable_scope(None, default_name="block"):
                    tf.layers.dense(x, 2)
        return sorted(v.name for v in tf.global_variables())


def test_layer_variables_under_reentered_and_reused_scopes_are_named_as_tf1_names_them():
    ours, theirs = _build(acv1), _build(tf1)
    assert ours == theirs
    assert "discriminator/dense_1/kernel:0" in ours and not any("dense_2" in n for n in ours)


def test_a_second_unreused_entry_of_a_named_scope_collides_as_in_tf1():
    for tf in (acv1, tf1):  # ValueError in TF1; antcolony's GraphError is one
        g = tf.Graph()
        with g.as_default():
            x = tf.placeholder(tf.float32, [None, 3])
            with tf.variable_scope("twice"):
                tf.layers.dense(x, 2)
            with (
                pytest.raises(ValueError, match="twice/dense/kernel already exists"),
                tf.variable_scope("twice"),
            ):
                tf.layers.dense(x, 2)
