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


def _control_on_fed_placeholder(tf: Any) -> list[Any]:
    """A control dependency on a fed placeholder's op (TF1 moves it onto the feed), and
    ``tf.metrics.mean`` of a fed placeholder (its count update waits on the values)."""
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None], name="p")
        v = tf.Variable([1.0, 2.0], name="v")
        with tf.control_dependencies([p.op]):
            bump = tf.assign_add(v, [1.0, 1.0])
        value, update = tf.metrics.mean(p)
        out = []
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            out.append(sess.run(bump, {p: [0.0]}))
            for batch in ([1.0, 2.0], [3.0], [4.0, 5.0, 6.0]):
                out.append(sess.run(update, {p: batch}))
            out.append(sess.run(value))
        return out


def test_control_dependency_on_fed_placeholder_runs_as_tf() -> None:
    got = run_both(_control_on_fed_placeholder)
    np.testing.assert_allclose(got["antcolony"][0], got["tensorflow"][0])
    np.testing.assert_allclose(got["antcolony"][1:], got["tensorflow"][1:], rtol=1e-6)


def test_unfed_control_placeholder_still_asks_for_its_feed() -> None:
    import antcolony.compat.v1 as tf

    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [2], name="needed")
        with tf.control_dependencies([p.op]):
            y = tf.constant(1.0) + 1.0
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="needed"):
            sess.run(y)


def _shape_strings(tf: Any) -> list[str]:
    with tf.Graph().as_default():
        shapes = [
            tf.zeros([32]).get_shape(),
            tf.zeros([2, 3]).shape,
            tf.constant(1.0).shape,
            tf.TensorShape(None),
        ]
        return [str(s) for s in shapes]


def test_printed_shapes_read_as_tf() -> None:
    # pkmital's 01_basics.py prints z.get_shape(); TF prints "(32,)"
    got = run_both(_shape_strings)
    assert got["antcolony"] == got["tensorflow"]


def test_unknown_dimensions_print_as_tf1() -> None:
    import antcolony.compat.v1 as tf

    with tf.Graph().as_default():
        assert str(tf.placeholder(tf.float32, [None, 3]).shape) == "(?, 3)"  # TF 1.x; TF 2 writes None
