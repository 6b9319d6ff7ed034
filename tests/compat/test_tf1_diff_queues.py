"""Differential tests against TensorFlow 1 for queue-based input: ``tf.FIFOQueue`` /
``tf.RandomShuffleQueue``, the readers, ``tf.decode_csv``, ``tf.count_up_to`` and the
``tf.train`` producers and batchers run by queue runners (hunkim's lab-04-4 reads its CSV so)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (  # noqa: F401 - park_tf_objects: the autouse fixture
    Table,
    compare,
    park_tf_objects,
    run_both,
    tensorflow,
)

T = Table()
CSV_LINES = ["1,2.5,a", ",3,", '4,,"x,y"', '7,1e3,"q""q"', "-2,-0.5,z"]
T.case("decode_csv_defaults_and_quotes", grad=False)(
    lambda tf: tf.decode_csv(tf.constant(CSV_LINES), record_defaults=[[0], [1.5], ["d"]])
)
T.case("decode_csv_scalar_int64_na_value", grad=False)(
    lambda tf: tf.decode_csv(
        tf.constant("NA;8;x"), [tf.constant([5], tf.int64), [0.0], [""]], field_delim=";", na_value="NA"
    )
)
T.case("decode_csv_select_cols", grad=False)(
    lambda tf: tf.decode_csv(tf.constant([["1,2,3", "4,5,6"]]), [[0.0], [0]], select_cols=[0, 2])
)
T.case("random_shuffle_of_one_row", grad=False)(lambda tf: tf.random_shuffle(tf.constant([[1.0, 2.0]])))


@pytest.mark.parametrize("case", T.params())
def test_case(case: Any) -> None:
    compare(case)


def _error(tf: Any, sess: Any, fetch: Any) -> str:
    try:
        sess.run(fetch)
    except tf.errors.OpError as e:
        return type(e).__name__
    return "no error"


def test_decode_csv_errors_match_tf() -> None:
    def errors(tf: Any) -> list[str]:
        with tf.Graph().as_default():
            rec = tf.placeholder(tf.string, [None])
            cols = tf.decode_csv(rec, [[0], tf.constant([], tf.float32)])
            with tf.Session() as sess:
                feeds = (["1,2"], ["1"], ["1,"], ["x,2"], ["1,2,3"])
                return [_run_error(tf, sess, cols, {rec: feed}) for feed in feeds]

    got = run_both(errors)
    assert got["antcolony"] == got["tensorflow"]
    assert got["antcolony"][0] == "no error" and "InvalidArgumentError" in got["antcolony"][1:]


def _run_error(tf: Any, sess: Any, fetch: Any, feed: Any) -> str:
    try:
        sess.run(fetch, feed)
    except tf.errors.OpError as e:
        return type(e).__name__
    return "no error"


def _fifo(tf: Any) -> list[Any]:
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, [tf.int32, tf.string], shapes=[[2], []])
        fill = q.enqueue_many([[[1, 2], [3, 4], [5, 6]], ["a", "b", "c"]])
        one = q.enqueue([[7, 8], "d"])
        many, up_to, single = q.dequeue_many(2), q.dequeue_up_to(5), q.dequeue()
        size = q.size()
        with tf.Session() as sess:
            sess.run(fill)
            sess.run(one)
            out: list[Any] = [sess.run(size), sess.run(many), sess.run(single), sess.run(size)]
            sess.run(q.close())
            out += [sess.run(up_to), _error(tf, sess, single), _error(tf, sess, one), sess.run(size)]
            return out


def test_fifo_queue_matches_tf() -> None:
    got = run_both(_fifo)
    ours, theirs = got["antcolony"], got["tensorflow"]
    assert len(ours) == len(theirs) == 8
    for a, t in zip(ours, theirs):
        if isinstance(t, list):
            for x, y in zip(a, t):
                np.testing.assert_array_equal(x, y)
        else:
            assert a == t if isinstance(t, str) else np.array_equal(a, t), (a, t)
    assert ours[5] == "OutOfRangeError" and ours[6] == "CancelledError"


def _count_up_to(tf: Any) -> list[Any]:
    with tf.Graph().as_default():
        v = tf.Variable(0, dtype=tf.int64)
        c = tf.count_up_to(v, 3)
        with tf.Session() as sess:
            sess.run(v.initializer)
            return [sess.run(c) for _ in range(3)] + [_error(tf, sess, c), sess.run(v)]


def test_count_up_to_matches_tf() -> None:
    got = run_both(_count_up_to)
    assert got["antcolony"] == got["tensorflow"] == [0, 1, 2, "OutOfRangeError", 3]


def _csv_pipeline(tf: Any, path: str) -> list[Any]:
    # lab-04-4's pipeline, with two epochs and a last short batch to see the end as TF ends it.
    with tf.Graph().as_default():
        names = tf.train.string_input_producer([path], shuffle=False, num_epochs=2)
        key, value = tf.TextLineReader(skip_header_lines=1).read(names)
        xy = tf.decode_csv(value, record_defaults=[[0.0], [0.0], [0.0], [0.0]])
        xs, ys, keys = tf.train.batch([xy[0:-1], xy[-1:], key], batch_size=4, allow_smaller_final_batch=True)
        out: list[Any] = []
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            try:
                while True:
                    out.append(sess.run([xs, ys, keys]))
            except tf.errors.OutOfRangeError:
                out.append("end")
            finally:
                coord.request_stop()
            coord.join(threads)
    return out


def test_csv_through_queue_runners_matches_tf(tmp_path: Any) -> None:
    path = tmp_path / "scores.csv"
    path.write_text("a,b,c,y\n" + "".join(f"{i},{i + 1},{2 * i},{i * 10}\n" for i in range(7)))
    got = run_both(lambda tf: _csv_pipeline(tf, str(path)))
    ours, theirs = got["antcolony"], got["tensorflow"]
    assert [len(b[0]) if b != "end" else b for b in ours] == [4, 4, 4, 2, "end"]
    assert len(ours) == len(theirs)
    for a, t in zip(ours[:-1], theirs[:-1]):
        for x, y in zip(a, t):
            np.testing.assert_array_equal(x, y)
    assert ours[0][2][0] == f"{path}:2".encode()  # keys count the header line, as TF's


def _shuffled(tf: Any) -> list[Any]:
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        labels = np.arange(12, dtype=np.int64)
        images = np.arange(24, dtype=np.float32).reshape(12, 2)
        image, label = tf.train.slice_input_producer([images, labels], num_epochs=1, shuffle=True)
        xb, yb = tf.train.shuffle_batch([image, label], 3, capacity=8, min_after_dequeue=4)
        seen: list[Any] = []
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            try:
                while True:
                    x, y = sess.run([xb, yb])
                    seen += [(int(b), tuple(a)) for a, b in zip(x, y)]
            except tf.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads)
        return seen


def test_shuffled_slices_come_once_each_and_rows_stay_together() -> None:
    got = run_both(_shuffled)
    for side, seen in got.items():
        # 12 rows, batches of 3; the closed queue gives up what is left only in whole batches
        assert len(seen) == 12, side
        assert sorted(seen) == [(i, (2.0 * i, 2.0 * i + 1)) for i in range(12)], side
    assert [label for label, _ in got["antcolony"]] != list(range(12))  # shuffled


def _records(tf: Any, paths: list[str]) -> list[Any]:
    with tf.Graph().as_default():
        names = tf.train.string_input_producer(paths, shuffle=False, num_epochs=1)
        read = [tf.TFRecordReader().read(names)]
        whole_names = tf.train.string_input_producer(paths[:1], shuffle=False, num_epochs=1)
        whole = tf.WholeFileReader().read(whole_names)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            out = [sess.run(read) for _ in range(5)] + [sess.run(whole)[0]]
            coord.request_stop()
            coord.join(threads)
        return out


def test_tfrecord_and_whole_file_readers_match_tf(tmp_path: Any) -> None:
    paths = [str(tmp_path / f"r{i}.tfrecord") for i in range(2)]
    for i, p in enumerate(paths):
        with tensorflow.io.TFRecordWriter(p) as w:
            for j in range(2 + i):
                w.write(f"record {i}.{j}".encode() * (j + 1))
    got = run_both(lambda tf: _records(tf, paths))
    assert got["antcolony"] == got["tensorflow"]
    assert os.path.basename(got["antcolony"][-1].decode()) == "r0.tfrecord"


_QUEUE_PROGRAM = """
import os, sys, tempfile
import antcolony.compat.v1 as tf
threads, queues = int(sys.argv[1]), int(sys.argv[2])
folder = tempfile.mkdtemp()
with tf.Graph().as_default():
    batches = []
    for k in range(queues):
        path = os.path.join(folder, f"f{k}.csv")
        with open(path, "w") as f:
            f.write("".join(f"{i},{i * 10 + k}\\n" for i in range(40)))
        names = tf.train.string_input_producer([path], shuffle=False)
        _, line = tf.TextLineReader().read(names)
        a, b = tf.decode_csv(line, [[0], [0]])
        batches.append(tf.train.batch([a, b], batch_size=4))
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=threads)) as sess:
        coord = tf.train.Coordinator()
        runners = tf.train.start_queue_runners(sess=sess, coord=coord)
        for _ in range(3):
            got = sess.run(batches)
        coord.request_stop()
        coord.join(runners)
print([b[1].tolist() for b in got])
"""


@pytest.mark.parametrize(("threads", "queues"), [(1, 1), (2, 2), (1, 3)])
def test_queue_input_runs_with_few_worker_threads_and_several_queues_in_one_step(
    threads: int, queues: int
) -> None:
    # A dequeue waits on the CPU worker's pool for waiting kernels, not on a compute thread: with
    # one compute thread, or with two queues dequeued in one step on two, it used to hang (the
    # readers the queue runners need never got a thread). A subprocess, so a hang fails the test.
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _QUEUE_PROGRAM, str(threads), str(queues)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    rows = eval(out.stdout.strip().splitlines()[-1])
    assert rows == [[i * 10 + k for i in range(8, 12)] for k in range(queues)]
