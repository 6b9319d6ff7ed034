"""scripts/model_profile.py (bench_models.py's per-kernel profile): the traced steps of a small
model give each op type's kernel time and node count per step, on antcolony and on TensorFlow 1,
and the side-by-side table lists them."""

from __future__ import annotations

import importlib.util
import pathlib
from types import ModuleType
from typing import Any

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _profile_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("model_profile", ROOT / "scripts" / "model_profile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tf(side: str) -> Any:
    if side == "antcolony":
        import antcolony.compat.v1 as tf

        return tf
    tf = pytest.importorskip("tensorflow.compat.v1")
    tf.disable_v2_behavior()
    return tf


def _build(tf: Any) -> Any:
    """Two MatMuls and a Relu per step, on fed inputs."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [8, 16])
        w = tf.constant(np.ones((16, 16), np.float32))
        y = tf.matmul(tf.nn.relu(tf.matmul(x, w)), w)
    sess = tf.Session(graph=graph)
    feed = {x: np.ones((8, 16), np.float32)}
    return lambda: sess.run(y, feed_dict=feed)


@pytest.mark.parametrize("side", ["antcolony", "tf1"])
def test_a_profile_counts_each_op_type_per_traced_step(side: str) -> None:
    mp = _profile_module()
    tf = _tf(side)
    original = tf.Session.run
    try:
        profile = mp.profiled_steps(tf, side, lambda: _build(tf), warmup=2, steps=4)
    finally:
        tf.Session.run = original
    assert profile["MatMul"][1] == pytest.approx(2.0)
    assert profile["Relu"][1] == pytest.approx(1.0)
    assert profile["MatMul"][0] > 0.0
    table = "\n".join(mp.format_profile("tiny", profile, profile))
    matmul_row = next(line for line in table.splitlines() if line.strip().startswith("MatMul"))
    assert matmul_row.count("(") == 2 and "2.0)" in matmul_row
    assert "all kernels" in table


def test_untraced_steps_are_not_counted() -> None:
    mp = _profile_module()
    tf = _tf("antcolony")
    original = tf.Session.run
    try:
        recorder = mp.RunRecorder(tf, "antcolony")
        step = _build(tf)
        step()
        assert recorder.steps == 0
        recorder.on = True
        step()
        step()
        assert recorder.steps == 2
    finally:
        tf.Session.run = original


def test_a_fused_loop_counts_its_inner_kernels_once() -> None:
    """A fused loop's record spans its inner kernels' records: only theirs are summed."""
    mp = _profile_module()
    tf = _tf("antcolony")
    original = tf.Session.run

    def build() -> Any:
        graph = tf.Graph()
        with graph.as_default():
            n = tf.placeholder(tf.int32, [])
            _, total = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s * 2.0 + 1.0), [0, 0.0])
        sess = tf.Session(graph=graph)
        return lambda: sess.run(total, feed_dict={n: 3})

    try:
        profile = mp.profiled_steps(tf, "antcolony", build, warmup=1, steps=2)
    finally:
        tf.Session.run = original
    assert "FusedLoop" not in profile
    assert profile["Mul"][1] == pytest.approx(3.0)  # one per iteration, from inside the fused loop
