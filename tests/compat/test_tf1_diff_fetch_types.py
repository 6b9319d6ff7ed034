"""Differential test against TensorFlow 1: the Python types session.run returns. A 0-d result is
a numpy scalar (np.float32, np.int64, np.bool_; bytes for a string), whatever op made it (a
variable, an assign, a reduction, a constant), alone or inside a fetch structure, as TF1's; arrays
of rank >= 1 stay arrays."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import park_tf_objects, run_both  # noqa: F401


def _fetch(tf: Any) -> list[tuple[str, str, Any]]:
    with tf.Graph().as_default():
        v = tf.Variable(1.5, name="v")
        n = tf.Variable(np.int64(3), name="n")
        fetches = {
            "variable": v,
            "assign": tf.assign(v, 2.5),
            "assign_add": tf.assign_add(n, 2),
            "reduce_sum": tf.reduce_sum(tf.ones([3])),
            "reduce_mean_int": tf.reduce_mean(tf.constant([1, 2, 4])),
            "constant": tf.constant(2.0),
            "string": tf.constant("x"),
            "bool": tf.reduce_all(tf.constant([True, False])),
            "argmax": tf.argmax(tf.constant([1.0, 3.0, 2.0])),
            "vector": tf.ones([2]),
            "matrix_row_sum": tf.reduce_sum(tf.ones([2, 3]), 1),
        }
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = []
            for key, t in fetches.items():
                alone = sess.run(t)
                nested = sess.run({"x": [t]})["x"][0]
                for how, x in (("alone", alone), ("nested", nested)):
                    out.append((f"{key} {how}", type(x).__name__, getattr(x, "dtype", None)))
            return out


def test_fetched_values_have_tf1s_python_types() -> None:
    got = run_both(_fetch)
    assert got["antcolony"] == got["tensorflow"]
