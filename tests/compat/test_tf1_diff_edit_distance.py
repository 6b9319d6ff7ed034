"""Differential test against TensorFlow 1: ``tf.edit_distance`` between SparseTensors of strings
and of ints, normalised or not, with groups present on one side only, and fed through
``tf.sparse_placeholder`` (nfmcclure's address-matching recipe does so)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import park_tf_objects, run_both  # noqa: F401 - park_tf_objects: autouse


def _word_sparse(tf: Any, words: list[str], shape: list[int]) -> Any:
    idx = [[i, 0, j] for i, w in enumerate(words) for j in range(len(w))]
    return tf.SparseTensor(idx, [c for w in words for c in w], shape)


def _distances(tf: Any) -> list[Any]:
    with tf.Graph().as_default():
        hyp = _word_sparse(tf, ["bear", "bar", "tensor", "flow"], [4, 1, 6])
        truth = _word_sparse(tf, ["beers", "beers", "", "flow"], [4, 1, 5])
        ints_h = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([1, 2, 3], tf.int64), [3, 2])
        ints_t = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], tf.constant([1, 5, 6], tf.int64), [3, 2])
        fed_h = tf.sparse_placeholder(tf.string)
        fed_t = tf.sparse_placeholder(tf.string)
        fed = tf.edit_distance(fed_h, fed_t, normalize=True)
        outs = [
            tf.edit_distance(hyp, truth, normalize=False),
            tf.edit_distance(hyp, truth),
            tf.edit_distance(ints_h, ints_t, normalize=False),
            tf.edit_distance(ints_h, ints_t, normalize=True),
        ]
        feed = {
            fed_h: tf.SparseTensorValue([[0, 0], [0, 1], [1, 0]], [b"a", b"b", b"c"], [2, 2]),
            fed_t: tf.SparseTensorValue([[0, 0], [1, 0], [1, 1]], [b"a", b"c", b"d"], [2, 2]),
        }
        with tf.Session() as sess:
            values = [*sess.run(outs), sess.run(fed, feed)]
        return [[str(t.shape) for t in outs], *values]


def test_edit_distance_matches_tf1() -> None:
    got = run_both(_distances)
    ours, theirs = got["antcolony"], got["tensorflow"]
    assert ours[0] == theirs[0]
    for a, t in zip(ours[1:], theirs[1:]):
        assert a.dtype == t.dtype and a.shape == t.shape
        np.testing.assert_array_equal(a, t)
