"""Differential test against TensorFlow 1: a known dimension of a static shape is TF1's
``Dimension`` as programs use it (``x.get_shape()[1].value``, ``int(...)``, arithmetic,
comparison, ``str`` and ``repr``), through indexing and iteration."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import park_tf_objects, run_both  # noqa: F401 - park_tf_objects: autouse


def _uses(tf: Any) -> list[Any]:
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3, 4])
        d = x.get_shape()[1]
        flat = tf.reshape(x, [-1, x.shape[1].value * x.get_shape()[-1].value])
        return [
            d.value, int(d), d == 3, d != 4, int(d * 2), str(d), repr(d), [repr(v) for v in x.shape][1:],
            [v.value for v in list(x.shape)[1:]],
            flat.shape.as_list(), tf.dimension_value(d), x.shape.as_list(),
        ]  # fmt: skip


def test_known_dimensions_behave_as_tf1() -> None:
    got = run_both(_uses)
    assert got["antcolony"] == got["tensorflow"]
