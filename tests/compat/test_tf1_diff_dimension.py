"""Differential test against TensorFlow 1: a dimension of a static shape is TF1's ``Dimension`` as
programs use it (``x.get_shape()[1].value``, ``int(...)``, arithmetic, comparison, ``str`` and
``repr``), through indexing and iteration; an unknown one is ``Dimension(None)``, whose ``.value``
is None (``[d.value for d in x.get_shape()]`` over an unknown batch)."""

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


def _unknown_uses(tf: Any) -> list[Any]:
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        d = x.get_shape()[0]
        try:
            int(d)
            as_int = "int"
        except TypeError:
            as_int = "TypeError"
        return [
            d.value, repr(d), str(d), d == 3, d == None, d != 2, (d * 2).value, (2 + d).value,  # noqa: E711
            [v.value for v in x.get_shape()], [repr(v) for v in x.shape], as_int,
            d.is_compatible_with(7), d.merge_with(5).value, x.get_shape()[1].merge_with(d).value,
            tf.Dimension(None).value, tf.Dimension(4).value, repr(tf.Dimension(None)), tf.dimension_value(d),
            tf.placeholder(tf.float32, list(x.get_shape())).shape.as_list(),
        ]  # fmt: skip


def test_unknown_dimensions_behave_as_tf1() -> None:
    got = run_both(_unknown_uses)
    assert got["antcolony"] == got["tensorflow"]
