"""GraphDefs with run-time shapes both ways: a graph TF1 wrote whose Pad, Tile, Slice, StridedSlice,
Reshape and Fill take tensors computed at run time (``tf.pad(x, [[0, 0], [i, 1], [0, 0]])``,
``tf.zeros([tf.shape(x)[0], 3])``, ``x[:, i]``) imports and runs here with TF's values and static
shapes, and the same graph built here is read and run by TF with the same values."""

from __future__ import annotations

from typing import Any

import numpy as np

from .tf1_diff import acv1, park_tf_objects, run_in_tf, tf1  # noqa: F401 - the fixture applies by import

FEED = {"x:0": np.arange(120, dtype=np.float32).reshape(6, 4, 5), "i:0": np.int32(1)}


def _build(tf: Any) -> list[Any]:
    x = tf.placeholder(tf.float32, [None, 4, 5], name="x")
    i = tf.placeholder(tf.int32, [], name="i")
    n = tf.shape(x)[0]
    return [
        tf.pad(x, [[0, 0], [i, 1], [0, 0]]),
        tf.pad(x, [[0, 0], [1, 1], [0, 0]], constant_values=2.0),
        tf.tile(x, [n, 1, 1]),
        tf.slice(x, [0, i, 0], [-1, 1, -1]),
        x[:, i],
        x[:, 1:3],
        tf.reshape(x, tf.stack([n, 20])),
        tf.zeros([n, 3]) + 1.0,
        tf.fill(tf.stack([n, 2]), 3.0),
    ]


def _tf_values_and_proto() -> tuple[list[np.ndarray], list[Any], Any]:
    g = tf1.Graph()
    with g.as_default():
        outs = _build(tf1)
        with tf1.Session(graph=g) as sess:
            values = sess.run(outs, FEED)
    return values, outs, g.as_graph_def()


def test_a_tf_graph_with_run_time_shapes_runs_here_with_tfs_values_and_shapes() -> None:
    want, tf_outs, proto = _tf_values_and_proto()
    g = acv1.Graph()
    with g.as_default():
        acv1.import_graph_def(proto, name="")
    names = [t.name for t in tf_outs]
    assert [g.get_tensor_by_name(n).shape.as_list() for n in names] == [t.shape.as_list() for t in tf_outs]
    with acv1.Session(graph=g) as sess:
        got = sess.run(names, FEED)
    for name, a, b in zip(names, got, want, strict=True):
        np.testing.assert_array_equal(a, b, err_msg=name)


def test_the_same_graph_built_here_runs_in_tf_with_the_same_values(tmp_path: Any) -> None:
    want, _, _ = _tf_values_and_proto()
    g = acv1.Graph()
    with g.as_default():
        names = [t.name for t in _build(acv1)]
    acv1.io.write_graph(g, str(tmp_path), "dyn.pb", as_text=False)
    got = run_in_tf((tmp_path / "dyn.pb").read_bytes(), names, FEED)
    for name, a, b in zip(names, got, want, strict=True):
        np.testing.assert_array_equal(a, b, err_msg=name)
