"""Differential tests of tf.data, TFRecord files and parse_example against TensorFlow 1: the
same pipeline built in both gives the same elements and static shapes; files written by either
are read by the other; Examples serialized by TF parse to the same values."""

from __future__ import annotations

import os
import pathlib

import numpy as np
import pytest

from .tf1_diff import FRAMEWORKS, park_tf_objects, tf1  # noqa: F401 - the fixture is used by name

acv1 = FRAMEWORKS["antcolony"]


def _run_pipeline(tf, build):
    with tf.Graph().as_default():
        ds = build(tf)
        nxt = tf.data.make_one_shot_iterator(ds).get_next()
        flat = nxt if isinstance(nxt, (tuple, list)) else [nxt]
        shapes = [t.shape.as_list() if t.shape.ndims is not None else None for t in flat]
        dts = [
            np.dtype(t.dtype.as_numpy_dtype) if hasattr(t.dtype, "as_numpy_dtype") else t.dtype for t in flat
        ]
        out = []
        with tf.Session() as sess:
            while True:
                try:
                    out.append(sess.run(flat))
                except tf.errors.OutOfRangeError:
                    break
    return shapes, dts, out


PIPELINES = {
    "slices_map_batch": lambda tf: (
        tf.data.Dataset.from_tensor_slices(
            (np.arange(12, dtype=np.uint8).reshape(6, 2), np.arange(6, dtype=np.int64))
        )
        .map(lambda x, y: (tf.cast(x, tf.float32) / 255.0, y * 2))
        .batch(4)
    ),
    "drop_remainder": lambda tf: tf.data.Dataset.range(10).batch(3, drop_remainder=True),
    "filter_skip_take_repeat": lambda tf: (
        tf.data.Dataset.range(20).filter(lambda x: tf.equal(x % 3, 1)).skip(2).take(3).repeat(2)
    ),
    "zip_dict": lambda tf: tf.data.Dataset.zip(
        (tf.data.Dataset.range(4), tf.data.Dataset.from_tensor_slices({"a": np.ones((4, 2), np.float32)}))
    ).map(lambda i, d: (i, d["a"] * tf.cast(i, tf.float32))),
    "generator_padded_batch": lambda tf: tf.data.Dataset.from_generator(
        lambda: (np.arange(n) * n for n in range(1, 6)), tf.int64, [None]
    ).padded_batch(2, padded_shapes=[None]),
    "from_tensors_concat_prefetch": lambda tf: (
        tf.data.Dataset.from_tensors(np.float64([1.0, 2.0]))
        .concatenate(tf.data.Dataset.from_tensors(np.float64([3.0, 4.0])))
        .prefetch(2)
    ),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_pipeline_matches_tf(name):
    build = PIPELINES[name]
    want_shapes, want_dtypes, want = _run_pipeline(tf1, build)
    shapes, dts, got = _run_pipeline(acv1, build)
    assert shapes == want_shapes
    assert dts == want_dtypes
    assert len(got) == len(want)
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def _tf_example(i):
    t = tf1.train
    return t.Example(
        features=t.Features(
            feature={
                "x": t.Feature(float_list=t.FloatList(value=[i * 0.25, -i])),
                "y": t.Feature(int64_list=t.Int64List(value=[-(2**40) * i])),
                "s": t.Feature(bytes_list=t.BytesList(value=[b"\x00ab" * i])),
                "v": t.Feature(float_list=t.FloatList(value=[0.5] * (i % 3))),
            }
        )
    ).SerializeToString()


def _features(tf):
    return {
        "x": tf.io.FixedLenFeature([2], tf.float32),
        "y": tf.io.FixedLenFeature([], tf.int64),
        "s": tf.io.FixedLenFeature([], tf.string),
        "v": tf.io.VarLenFeature(tf.float32),
        "d": tf.io.FixedLenFeature([2], tf.int64, default_value=[7, 8]),
    }


def _parse(tf, serialized):
    with tf.Graph().as_default():
        ser = tf.placeholder(tf.string, [None])
        parsed = tf.io.parse_example(ser, _features(tf))
        with tf.Session() as sess:
            return sess.run(parsed, {ser: serialized})


def test_parse_example_of_tf_serialized_examples_matches_tf():
    serialized = [_tf_example(i) for i in range(5)]
    want, got = _parse(tf1, serialized), _parse(acv1, serialized)
    for key in ("x", "y", "d"):
        np.testing.assert_array_equal(got[key], want[key])
        assert got[key].dtype == want[key].dtype
    assert list(got["s"]) == list(want["s"])
    for part in ("indices", "values", "dense_shape"):
        np.testing.assert_array_equal(getattr(got["v"], part), getattr(want["v"], part))


def test_examples_serialized_here_parse_in_tf():
    a = acv1.train
    ours = [
        a.Example(
            features=a.Features(
                feature={
                    "x": a.Feature(float_list=a.FloatList(value=[i * 0.25, -i])),
                    "y": a.Feature(int64_list=a.Int64List(value=[-(2**40) * i])),
                    "s": a.Feature(bytes_list=a.BytesList(value=[b"\x00ab" * i])),
                    "v": a.Feature(float_list=a.FloatList(value=[0.5] * (i % 3))),
                }
            )
        ).SerializeToString()
        for i in range(5)
    ]
    assert ours == [_tf_example(i) for i in range(5)]


@pytest.mark.parametrize("compression", [None, "GZIP"])
def test_tfrecord_files_cross_read(tmp_path, compression):
    records = [os.urandom(n) for n in (0, 1, 100, 5000, 70000)] + [b"x\x00"]
    ours, theirs = str(tmp_path / "ours.tfrecord"), str(tmp_path / "theirs.tfrecord")
    with acv1.io.TFRecordWriter(ours, acv1.io.TFRecordOptions(compression_type=compression)) as w:
        for r in records:
            w.write(r)
    with tf1.io.TFRecordWriter(theirs, tf1.io.TFRecordOptions(compression_type=compression)) as w:
        for r in records:
            w.write(r)
    opts = tf1.io.TFRecordOptions(compression_type=compression)
    assert list(tf1.io.tf_record_iterator(ours, opts)) == records
    assert (
        list(acv1.io.tf_record_iterator(theirs, acv1.io.TFRecordOptions(compression_type=compression)))
        == records
    )
    if compression is None:
        assert pathlib.Path(ours).read_bytes() == pathlib.Path(theirs).read_bytes()
    with acv1.Graph().as_default():
        nxt = acv1.data.make_one_shot_iterator(
            acv1.data.TFRecordDataset(theirs, compression_type=compression or "")
        ).get_next()
        with acv1.Session() as sess:
            assert [sess.run(nxt) for _ in records] == records


@pytest.mark.parametrize("cycle, block", [(2, 1), (3, 2), (1, 1)])
def test_list_files_interleave_matches_tf(tmp_path, cycle, block):
    for name, rows in (("a", 3), ("b", 2), ("c", 1), ("d", 4)):
        (tmp_path / f"{name}.txt").write_bytes(b"".join(b"%s%d\n" % (name.encode(), i) for i in range(rows)))
    pattern = str(tmp_path / "*.txt")

    def build(tf):
        files = tf.data.Dataset.list_files(pattern, shuffle=False)
        return files.interleave(tf.data.TextLineDataset, cycle_length=cycle, block_length=block)

    want = _run_pipeline(tf1, build)
    got = _run_pipeline(acv1, build)
    assert got[0] == want[0]
    assert [list(e) for e in got[2]] == [list(e) for e in want[2]]
