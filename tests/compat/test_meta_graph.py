"""The TF1 'load a model and continue training' idiom: ``saver.save`` writes ``<prefix>.meta``;
a fresh graph ``import_meta_graph``s it, restores the checkpoint and keeps training."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

import antcolony.compat.v1 as tf
from antcolony.errors import GraphError, NotFoundError

RNG = np.random.default_rng(11)
XS = RNG.standard_normal((16, 3)).astype(np.float32)
YS = (XS @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
LR = 0.1


def _numpy_steps(w: np.ndarray, b: np.ndarray, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Plain gradient descent on mean squared error, the reference for the graph's train_op."""
    for _ in range(steps):
        err = XS @ w + b - YS
        w = w - LR * 2.0 * XS.T @ err / err.size
        b = b - LR * 2.0 * err.mean(axis=0)
    return w, b


def _train_and_save(prefix: str) -> tuple[np.ndarray, np.ndarray, str]:
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        w = tf.Variable(np.zeros((3, 1), np.float32), name="w")
        b = tf.Variable(np.zeros(1, np.float32), name="b")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y), name="loss")
        step = tf.train.get_or_create_global_step()
        train_op = tf.train.GradientDescentOptimizer(LR).minimize(loss, global_step=step)
        tf.add_to_collection("train_op", train_op)
        saver = tf.train.Saver()
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train_op, {x: XS, y: YS})
            path = saver.save(sess, prefix, global_step=step)
            wv, bv = sess.run([w, b])
    return wv, bv, path


def test_import_meta_graph_restore_and_continue_training(tmp_path: Any) -> None:
    w3, b3, path = _train_and_save(str(tmp_path / "model.ckpt"))
    assert path.endswith("-3") and os.path.exists(path + ".meta")
    np.testing.assert_allclose(
        w3, _numpy_steps(np.zeros((3, 1), np.float32), np.zeros(1, np.float32), 3)[0], rtol=1e-5
    )
    g = tf.Graph()
    with g.as_default():
        saver = tf.train.import_meta_graph(path + ".meta")
        train_op = tf.get_collection("train_op")[0]
        x = g.get_tensor_by_name("x:0")
        y = g.get_tensor_by_name("y:0")
        loss = g.get_tensor_by_name("loss:0")
        assert [v.op.name for v in tf.trainable_variables()] == ["w", "b"]
        with tf.Session(graph=g) as sess:
            saver.restore(sess, path)
            np.testing.assert_allclose(sess.run("w:0"), w3)
            for _ in range(2):
                sess.run(train_op, {x: XS, y: YS})
            w5, b5 = sess.run(["w:0", "b:0"])
            assert int(sess.run(tf.train.get_global_step())) == 5
            final_loss = sess.run(loss, {x: XS, y: YS})
    want_w, want_b = _numpy_steps(w3, b3, 2)
    np.testing.assert_allclose(w5, want_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b5, want_b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(final_loss, np.mean((XS @ want_w + want_b - YS) ** 2), rtol=1e-5)


def test_export_meta_graph_round_trips_collections_and_scope(tmp_path: Any) -> None:
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(2.0, name="v")
        out = tf.multiply(v, 3.0, name="out")
        tf.add_to_collection("outputs", out)
        tf.add_to_collection("outputs", "a note")
        meta = tf.train.export_meta_graph(str(tmp_path / "m.meta"))
    assert meta["collections"]["outputs"][1] == {"value": "a note"}
    g2 = tf.Graph()
    with g2.as_default():
        saver = tf.train.import_meta_graph(str(tmp_path / "m.meta"), import_scope="net")
        assert saver is not None
        got, note = tf.get_collection("outputs")
        assert got.name == "net/out:0" and note == "a note"
        with tf.Session(graph=g2) as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(got) == pytest.approx(6.0)


def test_saver_save_without_meta_graph_and_missing_meta_file(tmp_path: Any) -> None:
    g = tf.Graph()
    with g.as_default():
        tf.Variable(1.0, name="v")
        saver = tf.train.Saver()
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "m"), write_meta_graph=False)
    assert not os.path.exists(path + ".meta")
    with tf.Graph().as_default(), pytest.raises(NotFoundError, match=r"m\.meta"):
        tf.train.import_meta_graph(path + ".meta")
    (tmp_path / "bad.meta").write_bytes(b"\x08\x01")
    with tf.Graph().as_default(), pytest.raises(GraphError, match=r"bad\.meta"):
        tf.train.import_meta_graph(str(tmp_path / "bad.meta"))


def test_graph_with_an_unserialisable_attr_saves_its_checkpoint_without_a_meta_graph(
    tmp_path: Any, caplog: Any
) -> None:
    g = tf.Graph()
    with g.as_default():
        tf.Variable(4.0, name="v")
        g.create_op("NoOp", [], {"handle": object()}, "odd")
        saver = tf.train.Saver()
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            with caplog.at_level("WARNING"):
                path = saver.save(sess, str(tmp_path / "m"))
    assert os.path.exists(path + ".safetensors") and not os.path.exists(path + ".meta")
    assert "without a meta graph" in caplog.text


def test_max_to_keep_deletes_old_meta_graphs_with_their_checkpoints(tmp_path: Any) -> None:
    g = tf.Graph()
    with g.as_default():
        tf.Variable(1.0, name="v")
        saver = tf.train.Saver(max_to_keep=1)
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            first = saver.save(sess, str(tmp_path / "m"), global_step=1)
            assert os.path.exists(first + ".meta")
            second = saver.save(sess, str(tmp_path / "m"), global_step=2)
    assert not os.path.exists(first + ".meta") and not os.path.exists(first + ".safetensors")
    assert os.path.exists(second + ".meta")
