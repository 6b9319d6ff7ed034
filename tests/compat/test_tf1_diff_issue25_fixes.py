"""Differential test against TensorFlow 1 for TF1 names programs use: ``tf.arg_max`` /
``tf.arg_min``, ``trainable_variables(scope=)`` / ``global_variables(scope=)`` (regex matched at
the start of the name), and string tensors fetched as ``bytes``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import Table, compare, normal, park_tf_objects, run_both  # noqa: F401 - autouse fixture

T = Table()
T.case("arg_max_dimension", normal(4, 5, tag="am"), grad=False)(
    lambda tf, x: [tf.arg_max(x, 1), tf.arg_max(x, 0, output_type=tf.int32)]
)
T.case("arg_min_dimension", normal(4, 5, tag="am"), grad=False)(
    lambda tf, x: [tf.arg_min(x, 1), tf.arg_min(x, dimension=0, output_type=tf.int32, name="m")]
)


@pytest.mark.parametrize("case", T.params())
def test_case(case: Any) -> None:
    compare(case)


def _scoped_names(tf: Any) -> dict[str, list[str]]:
    with tf.Graph().as_default():
        with tf.variable_scope("enc"):
            tf.get_variable("w", [2])
            with tf.variable_scope("inner"):
                tf.get_variable("b", [2])
        with tf.variable_scope("encoder"):
            tf.get_variable("w", [2])
        with tf.variable_scope("dec"):
            tf.get_variable("w", [2], trainable=False)
            tf.Variable(1.0, name="count", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        return {
            f"{kind}:{scope}": [v.op.name for v in fn(scope=scope)]
            for kind, fn in [
                ("trainable", tf.trainable_variables),
                ("global", tf.global_variables),
                ("local", tf.local_variables),
            ]
            for scope in (None, "enc", "enc/", "enc.*/w", "dec", "inner", "")
        }


def test_variables_by_scope_match_tf() -> None:
    got = run_both(_scoped_names)
    assert got["antcolony"] == got["tensorflow"]
    assert got["antcolony"]["trainable:enc/"] == ["enc/w", "enc/inner/b"]


def _strings(tf: Any) -> list[Any]:
    with tf.Graph().as_default():
        p = tf.placeholder(tf.string, [None])
        q = tf.placeholder(tf.string, [])
        outs = [
            tf.constant("héllo"),
            tf.constant(["a", "bc"]),
            tf.constant(b"raw"),
            tf.identity(p),
            tf.identity(q),
        ]
        with tf.Session() as sess:
            return sess.run(outs, {p: ["x", "yz"], q: "ü"}) + sess.run(
                [tf.identity(p)], {p: np.array(["u", "v"])}
            )


def test_string_fetches_are_bytes_as_tf() -> None:
    got = run_both(_strings)
    assert len(got["antcolony"]) == len(got["tensorflow"])
    for ours, ref in zip(got["antcolony"], got["tensorflow"]):
        assert type(ours) is type(ref)
        if isinstance(ref, np.ndarray):
            assert ours.dtype == ref.dtype and ours.shape == ref.shape
            assert ours.tolist() == ref.tolist()
            assert all(type(a) is type(b) for a, b in zip(ours.tolist(), ref.tolist()))
        else:
            assert ours == ref
