"""tf.summary ops and FileWriter: the event file read back (TFRecord framing and CRCs checked
here, protos parsed with tensorboardX's event_pb2) has the tags, steps and values written; the
writer never writes through a planted symlink."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

pytest.importorskip("tensorboardX")


import antcolony.compat.v1 as tf

from .event_reader import read_events


def _event_file(logdir) -> str:
    files = glob.glob(os.path.join(str(logdir), "events.out.tfevents.*"))
    assert len(files) == 1, files
    return files[0]


def test_scalars_and_a_histogram_round_trip_through_the_event_file(tmp_path):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [])
        w = tf.placeholder(tf.float32, [None])
        with tf.name_scope("train"):
            doubled = x * 2.0
            tf.summary.scalar("loss", doubled)
        tf.summary.scalar("lr", tf.constant(0.5))
        tf.summary.histogram("weights", w)
        merged = tf.summary.merge_all()
        with tf.Session() as sess:
            writer = tf.summary.FileWriter(str(tmp_path), g)
            for step in range(3):
                s = sess.run(merged, {x: step + 0.25, w: np.arange(10, dtype=np.float32) * step})
                assert isinstance(s, bytes)
                writer.add_summary(s, global_step=step * 10)
            writer.flush()
            events = read_events(_event_file(tmp_path))  # complete after flush, before close
            writer.close()
    assert events[0].file_version == "brain.Event:2"
    from tensorboardX.proto.graph_pb2 import GraphDef

    (graph_event,) = [e for e in events if e.HasField("graph_def")]
    nodes = {n.name: n for n in GraphDef.FromString(graph_event.graph_def).node}
    assert nodes["train/loss"].op == "ScalarSummary" and nodes["train/loss"].input == [doubled.op.name]
    assert set(nodes) == {op.name for op in g.get_operations()}
    summaries = [e for e in events if e.HasField("summary")]
    assert [e.step for e in summaries] == [0, 10, 20]
    for step, e in enumerate(summaries):
        values = {v.tag: v for v in e.summary.value}
        assert set(values) == {"train/loss", "lr", "weights"}
        assert values["train/loss"].simple_value == pytest.approx((step + 0.25) * 2.0)
        assert values["lr"].simple_value == 0.5
        h = values["weights"].histo
        data = np.arange(10) * step
        assert (h.num, h.min, h.max, h.sum) == (10, data.min(), data.max(), data.sum())
        assert h.sum_squares == pytest.approx(float(data @ data))
        # TF's buckets: a value counts in the first bucket whose (right) limit exceeds it
        want = np.zeros(len(h.bucket_limit), int)
        for v in data:
            want[np.searchsorted(h.bucket_limit, v, side="right")] += 1
        np.testing.assert_array_equal(h.bucket, want)
        if step:  # limits grow by 10 % as TF's default buckets (the last is the largest double)
            positive = np.array(h.bucket_limit[:-1])
            positive = positive[positive > 0]
            np.testing.assert_allclose(positive[1:] / positive[:-1], 1.1, rtol=1e-9)


def test_merge_of_given_summaries_and_duplicate_tags():
    g = tf.Graph()
    with g.as_default():
        a = tf.summary.scalar("a", tf.constant(1.0), collections=[])
        b = tf.summary.scalar("b", tf.constant(2), collections=[])
        assert tf.summary.merge_all() is None  # nothing in SUMMARIES
        both = tf.summary.merge([a, b])
        twice = tf.summary.merge([a, a])
        with tf.Session() as sess:
            from tensorboardX.proto.summary_pb2 import Summary

            got = Summary.FromString(sess.run(both))
            assert [(v.tag, v.simple_value) for v in got.value] == [("a", 1.0), ("b", 2.0)]
            with pytest.raises(tf.errors.InvalidArgumentError, match="Duplicate tag a"):
                sess.run(twice)


def test_summary_names_are_unique_and_scalar_needs_a_scalar():
    with tf.Graph().as_default():
        first = tf.summary.scalar("loss", tf.constant(1.0))
        second = tf.summary.scalar("loss", tf.constant(2.0))
        assert (first.op.name, second.op.name) == ("loss", "loss_1")
        with pytest.raises(ValueError, match="needs a scalar"):
            tf.summary.scalar("v", tf.constant([1.0, 2.0]))


def test_histogram_of_a_nan_is_an_invalid_argument():
    with tf.Graph().as_default():
        h = tf.summary.histogram("h", tf.constant([1.0, np.nan]))
        with (
            tf.Session() as sess,
            pytest.raises(tf.errors.InvalidArgumentError, match="Nan in summary histogram for: h"),
        ):
            sess.run(h)


def test_file_writer_never_follows_a_planted_symlink(tmp_path, monkeypatch):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    logdir = tmp_path / "logs"
    logdir.mkdir()
    # Plant a symlink at every name the writer could pick this second (time and host are known).
    import socket
    import time

    import antcolony.actors.summary.file_writer as sw

    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now)
    counter = next(sw._COUNTER) + 1
    name = f"events.out.tfevents.{str(now)[:10]}.{socket.gethostname()}.{os.getpid()}.{counter}"
    os.symlink(victim, logdir / name)
    with pytest.raises(FileExistsError):
        tf.summary.FileWriter(str(logdir))
    assert victim.read_text() == "precious"
    # the next writer takes the next name and writes normally
    writer = tf.summary.FileWriter(str(logdir))
    writer.add_summary(_summary_bytes(), 1)
    writer.close()
    assert victim.read_text() == "precious"
    files = [p for p in glob.glob(os.path.join(str(logdir), "events.*")) if not os.path.islink(p)]
    assert len(files) == 1 and [e.step for e in read_events(files[0]) if e.HasField("summary")] == [1]


def _summary_bytes() -> bytes:
    from tensorboardX.proto.summary_pb2 import Summary

    return Summary(value=[Summary.Value(tag="t", simple_value=3.0)]).SerializeToString()


def test_closed_writer_refuses_adds_and_reopen_starts_a_new_file(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path))
    writer.add_summary(_summary_bytes(), 1)
    writer.close()
    with pytest.raises(ValueError, match="closed"):
        writer.add_summary(_summary_bytes(), 2)
    writer.reopen()
    writer.add_summary(_summary_bytes(), 3)
    writer.close()
    files = sorted(glob.glob(os.path.join(str(tmp_path), "events.*")))
    steps = sorted(e.step for f in files for e in read_events(f) if e.HasField("summary"))
    assert len(files) == 2 and steps == [1, 3]
