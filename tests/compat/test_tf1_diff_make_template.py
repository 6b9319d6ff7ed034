"""Differential test against TensorFlow 1: ``tf.make_template`` shares its variables across
calls and scopes; variable names, each call's op names, the template's scope and variable lists,
and the outputs equal TF1's (a second template of one name, one made with
``create_scope_now_``, calls from another scope)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import normal, park_tf_objects, run_both  # noqa: F401 - park_tf_objects: autouse

X = normal(4, 3, tag="tmpl")


def _affine(tf: Any, x: Any, scale: float) -> Any:
    w = tf.get_variable("w", [3, 2], initializer=tf.constant_initializer(np.arange(6.0).reshape(3, 2)))
    with tf.variable_scope("inner"):
        b = tf.get_variable("b", [2], initializer=tf.ones_initializer())
    return tf.matmul(x, w) * scale + b


def _templates(tf: Any) -> dict[str, Any]:
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        t = tf.make_template("lin", lambda v, scale: _affine(tf, v, scale), scale=2.0)
        first, second = t(x), t(x * 2.0)
        with tf.variable_scope("outer"):
            third = t(x)
            other = tf.make_template("lin", lambda v, scale: _affine(tf, v, scale), scale=1.0)
            fourth = other(x)
        early = tf.make_template("lin", lambda v: _affine(tf, v, 0.5), create_scope_now_=True)
        fifth = early(x)
        outs = [first, second, third, fourth, fifth]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run(outs, {x: X})
        return {
            "globals": [v.name for v in tf.global_variables()],
            "ops": [t.name for t in outs],
            "scopes": [t.variable_scope.name, t.variable_scope_name, early.variable_scope.name],
            "variables": [[v.name for v in t.trainable_variables], [v.name for v in other.variables]],
            "values": values,
        }


def test_make_template_matches_tf1() -> None:
    got = run_both(_templates)
    ours, theirs = got["antcolony"], got["tensorflow"]
    for key in ("globals", "ops", "scopes", "variables"):
        assert ours[key] == theirs[key], key
    for a, t in zip(ours["values"], theirs["values"]):
        np.testing.assert_allclose(a, t, rtol=1e-6)
