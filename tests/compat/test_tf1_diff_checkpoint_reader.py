"""Differential test against TensorFlow 1: reading checkpoints without a Saver (tf.train.
list_variables, load_variable, NewCheckpointReader, load_checkpoint) and the fine-tuning idiom
tf.train.init_from_checkpoint (names, scopes, errors). Each side reads checkpoints its own Saver
wrote (the file formats differ: antcolony writes safetensors); the answers must be the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import FRAMEWORKS, park_tf_objects  # noqa: F401

W = np.arange(6, dtype=np.float32).reshape(2, 3)
B = np.array([0.5, -1.0, 2.0], np.float32)
STEP = np.int64(7)


def _save(fw: str, directory: Path) -> str:
    tf = FRAMEWORKS[fw]
    directory.mkdir(parents=True, exist_ok=True)
    with tf.Graph().as_default():
        with tf.variable_scope("old"):
            tf.get_variable("w", initializer=tf.constant(W))
            tf.get_variable("b", initializer=tf.constant(B))
        tf.Variable(STEP, name="global_step")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return str(saver.save(sess, str(directory / "model.ckpt"), global_step=7))


@pytest.mark.parametrize("fw", ["antcolony", "tensorflow"])
def test_listing_and_loading_what_a_saver_wrote(fw: str, tmp_path: Path) -> None:
    tf = FRAMEWORKS[fw]
    prefix = _save(fw, tmp_path)
    for where in (prefix, str(tmp_path)):  # a prefix, or a directory (its latest checkpoint)
        assert tf.train.list_variables(where) == [("global_step", []), ("old/b", [3]), ("old/w", [2, 3])]
        np.testing.assert_array_equal(tf.train.load_variable(where, "old/w"), W)
        np.testing.assert_array_equal(tf.train.load_variable(where, "old/b:0"), B)
    reader = tf.train.NewCheckpointReader(prefix)
    assert reader.has_tensor("old/b") and not reader.has_tensor("old/x")
    assert reader.get_variable_to_shape_map() == {"global_step": [], "old/b": [3], "old/w": [2, 3]}
    assert reader.get_tensor("global_step") == STEP
    assert tf.train.load_checkpoint(str(tmp_path)).get_tensor("old/w").shape == (2, 3)
    with pytest.raises(Exception, match="not found"):
        reader.get_tensor("old/x")


def _fine_tune(fw: str, prefix: str, assignment: Any) -> dict[str, np.ndarray]:
    tf = FRAMEWORKS[fw]
    with tf.Graph().as_default():
        with tf.variable_scope("new"):
            w = tf.get_variable("w", shape=[2, 3], initializer=tf.zeros_initializer())
            b = tf.get_variable("b", shape=[3], initializer=tf.ones_initializer())
        head = tf.get_variable("head", shape=[3], initializer=tf.zeros_initializer())
        tf.train.init_from_checkpoint(prefix, assignment(w))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return dict(zip(["w", "b", "head"], sess.run([w, b, head]), strict=True))


ASSIGNMENTS = {
    "scope": lambda w: {"old/": "new/"},
    "one_name": lambda w: {"old/b": "new/b"},
    "one_variable": lambda w: {"old/w": w},
}


@pytest.mark.parametrize("how", sorted(ASSIGNMENTS))
def test_init_from_checkpoint_loads_the_mapped_variables_as_tf1(how: str, tmp_path: Path) -> None:
    got = {fw: _fine_tune(fw, _save(fw, tmp_path / fw), ASSIGNMENTS[how]) for fw in FRAMEWORKS}
    for name in ("w", "b", "head"):
        np.testing.assert_array_equal(got["antcolony"][name], got["tensorflow"][name])
    loaded = got["antcolony"]
    if how == "scope":
        np.testing.assert_array_equal(loaded["w"], W)
        np.testing.assert_array_equal(loaded["b"], B)
    np.testing.assert_array_equal(loaded["head"], np.zeros(3))


@pytest.mark.parametrize("fw", ["antcolony", "tensorflow"])
def test_init_from_checkpoint_refuses_a_missing_name_or_a_wrong_shape(fw: str, tmp_path: Path) -> None:
    tf = FRAMEWORKS[fw]
    prefix = _save(fw, tmp_path)
    with tf.Graph().as_default():
        v = tf.get_variable("v", shape=[4], initializer=tf.zeros_initializer())
        with pytest.raises(ValueError):
            tf.train.init_from_checkpoint(prefix, {"old/missing": "v"})
        with pytest.raises(ValueError):
            tf.train.init_from_checkpoint(prefix, {"old/b": v})
