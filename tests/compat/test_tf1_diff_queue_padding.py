"""Differential tests against TensorFlow 1: ``tf.PaddingFIFOQueue`` and
``tf.train.batch(dynamic_pad=True)`` (components padded to the batch's longest), and queue ops
named as TF1 names them (``input_producer``, ``batch/fifo_queue``, ``fq_Dequeue``), so graph dumps
and checkpoints of queue-fed programs read as TF's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import park_tf_objects, run_both  # noqa: F401 - park_tf_objects: the autouse fixture


def _same(ours: Any, theirs: Any) -> None:
    assert type(ours) is type(theirs) or isinstance(theirs, np.ndarray), (ours, theirs)
    if isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, t in zip(ours, theirs):
            _same(a, t)
    else:
        a, t = np.asarray(ours), np.asarray(theirs)
        assert a.dtype == t.dtype and a.shape == t.shape, (a, t)
        np.testing.assert_array_equal(a, t)


def _padding_queue(tf: Any) -> list[Any]:
    with tf.Graph().as_default():
        seq = tf.placeholder(tf.int32, [None])
        grid = tf.placeholder(tf.float32, [None, 2])
        word = tf.placeholder(tf.string, [None])
        q = tf.PaddingFIFOQueue(10, [tf.int32, tf.float32, tf.string], shapes=[[None], [None, 2], [None]])
        put = q.enqueue([seq, grid, word])
        many, up_to = q.dequeue_many(2), q.dequeue_up_to(5)
        with tf.Session() as sess:
            for n in (3, 1, 4, 0, 2):
                feed = {seq: np.arange(n) + 1, grid: np.full((n, 2), n, np.float32), word: ["w"] * n}
                sess.run(put, feed)
            out = [sess.run(many), sess.run(many)]
            sess.run(q.close())
            out.append(sess.run(up_to))
            return out


def test_padding_fifo_queue_pads_each_batch_as_tf() -> None:
    got = run_both(_padding_queue)
    _same(got["antcolony"], got["tensorflow"])
    assert got["antcolony"][0][0].shape == (2, 3)


def _dynamic_pad_batch(tf: Any) -> list[Any]:
    with tf.Graph().as_default():
        n = tf.train.range_input_producer(6, shuffle=False).dequeue() + 1
        ragged = tf.range(n)
        block = tf.cast(tf.reshape(tf.range(2 * n), [-1, 2]), tf.float32)
        label = n * 10
        out_seq, out_block, out_label = tf.train.batch([ragged, block, label], batch_size=4, dynamic_pad=True)
        m = tf.train.range_input_producer(3, shuffle=False).dequeue()
        single = tf.train.batch([tf.range(m)], batch_size=2, dynamic_pad=True)
        static = (out_seq.shape.as_list(), out_block.shape.as_list(), out_label.shape.as_list())
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            try:
                got = [sess.run([out_seq, out_block, out_label]) for _ in range(2)]
                one = [sess.run(single) for _ in range(2)]
            finally:
                coord.request_stop()
            coord.join(threads)
    return [static, got, one]


def test_batch_with_dynamic_pad_matches_tf() -> None:
    got = run_both(_dynamic_pad_batch)
    ours, theirs = got["antcolony"], got["tensorflow"]
    assert ours[0] == theirs[0]
    _same(ours[1:], theirs[1:])
    assert ours[1][1][0].shape == (4, 6)  # the second batch (n = 5, 6, 1, 2) padded to 6


def _queue_names(tf: Any) -> dict[str, Any]:
    with tf.Graph().as_default() as g:
        named = tf.FIFOQueue(3, [tf.float32], name="filename_queue")
        tf.RandomShuffleQueue(3, 1, [tf.float32])
        files = tf.train.string_input_producer(["a", "b"])
        tf.train.string_input_producer(["a"], name="files")
        tf.train.slice_input_producer([tf.constant([1, 2, 3])])
        x = tf.constant([1.0, 2.0])
        one = tf.train.batch([x], 2)
        pair = tf.train.batch([x, x * 2.0], 2, allow_smaller_final_batch=True)
        shuffled = tf.train.shuffle_batch({"x": x}, 2, 10, 2)
        padded = tf.train.batch([tf.range(tf.size(x))], 2, dynamic_pad=True)
        with tf.name_scope("inputs"):
            inner = tf.FIFOQueue(3, [tf.float32])
            methods = [inner.enqueue([1.0]).name, inner.dequeue().name, inner.size().name, inner.close().name]
        return {
            "queue ops": sorted(op.name for op in g.get_operations() if "Queue" in op.type),
            "runners": sorted(qr.name for qr in tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)),
            "names": [named.name, files.name, named.queue_ref.name, inner.name, *methods],
            "batches": [one.name, [t.name for t in pair], shuffled["x"].name, padded.name],
        }


def test_queue_ops_are_named_as_tf1() -> None:
    got = run_both(_queue_names)
    ours, theirs = got["antcolony"], got["tensorflow"]
    for key in theirs:
        assert ours[key] == theirs[key], key
