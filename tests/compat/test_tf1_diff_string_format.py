"""Differential test against TensorFlow 1 for ``tf.strings.format``: the layout of values of each
dtype and rank, the elision of long dimensions by ``summarize``, custom placeholders, and the
error for a template that does not match its inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import park_tf_objects, run_both  # noqa: F401 - autouse fixture

VALUES = {
    "float32": np.array([1.5, 2.0, 1 / 3, 1e10, 123456789.0, -0.0, np.nan, np.inf], np.float32),
    "float64": np.array([1 / 3, 0.1, 1e300, -2.5]),
    "float16": np.array([0.1, 2.0], np.float16),
    "int32": np.arange(12, dtype=np.int32).reshape(6, 2),
    "int64_wide": np.arange(14).reshape(2, 7),
    "uint8": np.array(200, np.uint8),
    "int8": np.array(-3, np.int8),
    "bool": np.array([True, False]),
    "rank3": np.arange(27).reshape(3, 3, 3),
    "square": np.arange(25).reshape(5, 5),
    "row": np.arange(6).reshape(1, 6),
    "empty": np.zeros((0, 3), np.float32),
    "strings": np.array([b'a"b\n', b"\xff", "hé'\t\x01\x7f".encode()], dtype=object),
    "string_scalar": np.array(b"ab", dtype=object),
    "scalar": np.float32(0.125),
}


def _formats(tf: Any) -> dict[str, Any]:
    with tf.Graph().as_default():
        xs = {k: tf.constant(v) for k, v in VALUES.items()}
        outs = {}
        for k, x in xs.items():
            for n in (1, 3, -1):
                outs[f"{k}/{n}"] = tf.strings.format("x={} !", x, summarize=n)
        outs["two"] = tf.strings.format("{} and {}", [xs["int32"], xs["float64"]], summarize=2)
        outs["tuple"] = tf.strings.format("a<> b<>", (xs["uint8"], xs["string_scalar"]), placeholder="<>")
        outs["none"] = tf.strings.format("no inputs", [])
        outs["named"] = tf.strings.format("{}", xs["bool"], name="fmt")
        p = tf.placeholder(tf.int32, [None])
        outs["fed"] = tf.strings.format("got {}", p)
        static = {k: (v.dtype == tf.string, v.shape.as_list()) for k, v in outs.items()}
        with tf.Session() as sess:
            got = sess.run(outs, feed_dict={p: np.arange(9, dtype=np.int32)})
        return {"values": got, "static": static, "name": outs["named"].op.name}


def test_strings_format_matches_tf() -> None:
    got = run_both(_formats)
    ours, ref = got["antcolony"], got["tensorflow"]
    assert ours["static"] == ref["static"]
    assert ours["name"] == ref["name"] == "fmt"
    for key, want in ref["values"].items():
        assert ours["values"][key] == want, key
    assert ours["values"]["int64_wide/3"] == b"x=[[0 1 2 ... 4 5 6]\n [7 8 9 ... 11 12 13]] !"


def _mismatch(tf: Any) -> str:
    with tf.Graph().as_default():
        try:
            tf.strings.format("{} {}", tf.constant(1))
        except ValueError:
            return "ValueError"
        return "built"


def test_strings_format_placeholder_count_must_match() -> None:
    got = run_both(_mismatch)
    assert got["antcolony"] == got["tensorflow"] == "ValueError"
