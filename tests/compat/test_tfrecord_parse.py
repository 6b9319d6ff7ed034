"""TFRecord files (framing, CRC-32C, GZIP), tf.train.Example protos and parse_example, checked
against the format's definition (independent CRC and byte layout) and numpy."""

from __future__ import annotations

import os
import pathlib
import struct

import numpy as np
import pytest

import antcolony.compat.v1 as tf


def _crc32c_bitwise(data: bytes) -> int:
    # The definition, one bit at a time: independent of the implementation's tables and lanes.
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def _masked(crc: int) -> int:
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


@pytest.mark.parametrize("size", [0, 3, 17, 5000, 70001])
def test_records_are_framed_with_masked_crc32c_of_length_and_data(tmp_path, size):
    data = os.urandom(size)
    path = str(tmp_path / "r.tfrecord")
    with tf.python_io.TFRecordWriter(path) as w:
        w.write(data)
    raw = pathlib.Path(path).read_bytes()
    length = struct.pack("<Q", size)
    assert raw == (
        length
        + struct.pack("<I", _masked(_crc32c_bitwise(length)))
        + data
        + struct.pack("<I", _masked(_crc32c_bitwise(data)))
    )
    assert list(tf.io.tf_record_iterator(path)) == [data]


def test_gzip_round_trip_and_many_records(tmp_path):
    records = [os.urandom(n) for n in range(0, 3000, 7)]
    path = str(tmp_path / "r.gz")
    options = tf.io.TFRecordOptions(compression_type="GZIP")
    with tf.io.TFRecordWriter(path, options) as w:
        for r in records:
            w.write(r)
    assert pathlib.Path(path).read_bytes()[:2] == b"\x1f\x8b"
    assert list(tf.io.tf_record_iterator(path, options)) == records
    with tf.Graph().as_default():
        nxt = tf.data.TFRecordDataset([path], compression_type="GZIP").make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            got = [sess.run(nxt) for _ in records]
    assert got == records


def test_a_corrupt_or_truncated_record_is_data_loss_naming_the_file(tmp_path):
    path = str(tmp_path / "bad.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        w.write(b"hello world")
        w.write(b"second")
    raw = bytearray(pathlib.Path(path).read_bytes())
    raw[14] ^= 0x01
    pathlib.Path(path).write_bytes(bytes(raw))
    with pytest.raises(tf.errors.DataLossError, match=r"bad\.tfrecord"):
        list(tf.io.tf_record_iterator(path))
    pathlib.Path(path).write_bytes(bytes(raw[:-3]))
    with pytest.raises(tf.errors.DataLossError, match="truncated"):
        list(tf.io.tf_record_iterator(path))


def _example(i: int) -> bytes:
    f = tf.train
    return f.Example(
        features=f.Features(
            feature={
                "img": f.Feature(float_list=f.FloatList(value=[i, i + 0.5, -i])),
                "label": f.Feature(int64_list=f.Int64List(value=[i - 2])),
                "name": f.Feature(bytes_list=f.BytesList(value=[b"n%d" % i])),
                "tags": f.Feature(int64_list=f.Int64List(value=list(range(i)))),
            }
        )
    ).SerializeToString()


FEATURES = {
    "img": tf.io.FixedLenFeature([3], tf.float32),
    "label": tf.io.FixedLenFeature([], tf.int64),
    "name": tf.io.FixedLenFeature([], tf.string),
    "tags": tf.io.VarLenFeature(tf.int64),
    "weight": tf.io.FixedLenFeature([], tf.float32, default_value=1.5),
}


def test_parse_example_gives_dense_and_sparse_features():
    serialized = [_example(i) for i in range(4)]
    with tf.Graph().as_default():
        ser = tf.placeholder(tf.string, [None])
        parsed = tf.parse_example(ser, FEATURES)
        assert parsed["img"].shape.as_list() == [None, 3]
        dense_tags = tf.sparse.to_dense(parsed["tags"], default_value=-1)
        with tf.Session() as sess:
            out, tags = sess.run((parsed, dense_tags), {ser: serialized})
    np.testing.assert_allclose(out["img"], [[i, i + 0.5, -i] for i in range(4)])
    np.testing.assert_array_equal(out["label"], [-2, -1, 0, 1])
    assert list(out["name"]) == [b"n0", b"n1", b"n2", b"n3"]
    np.testing.assert_array_equal(out["weight"], [1.5] * 4)
    sp = out["tags"]
    np.testing.assert_array_equal(sp.dense_shape, [4, 3])
    np.testing.assert_array_equal(sp.indices, [[1, 0], [2, 0], [2, 1], [3, 0], [3, 1], [3, 2]])
    np.testing.assert_array_equal(sp.values, [0, 0, 1, 0, 1, 2])
    np.testing.assert_array_equal(tags, [[-1, -1, -1], [0, -1, -1], [0, 1, -1], [0, 1, 2]])


def test_parse_single_example_in_a_tfrecord_pipeline(tmp_path):
    path = str(tmp_path / "ex.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for i in range(5):
            w.write(_example(i))

    def parse(record):
        p = tf.io.parse_single_example(record, FEATURES)
        return p["img"], p["label"], tf.sparse.to_dense(p["tags"])

    with tf.Graph().as_default():
        ds = tf.data.TFRecordDataset(path).map(parse).padded_batch(5, padded_shapes=([3], [], [None]))
        img, label, tags = ds.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            im, lab, t = sess.run((img, label, tags))
    np.testing.assert_array_equal(lab, np.arange(5) - 2)
    np.testing.assert_allclose(im[:, 1], np.arange(5) + 0.5)
    assert t.shape == (5, 4) and list(t[4]) == [0, 1, 2, 3]


def test_missing_required_feature_and_wrong_type_are_invalid_argument():
    with tf.Graph().as_default():
        ser = tf.placeholder(tf.string, [])
        missing = tf.parse_single_example(ser, {"nope": tf.io.FixedLenFeature([], tf.int64)})
        wrong = tf.parse_single_example(ser, {"label": tf.io.FixedLenFeature([], tf.float32)})
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="nope"):
                sess.run(missing, {ser: _example(1)})
            with pytest.raises(tf.errors.InvalidArgumentError, match="Data types don't match"):
                sess.run(wrong, {ser: _example(1)})


def test_string_placeholders_take_bytes_and_str_lists_keeping_trailing_nul_bytes():
    with tf.Graph().as_default():
        s = tf.placeholder(tf.string, [None])
        out = tf.identity(s)
        with tf.Session() as sess:
            got = sess.run(out, {s: [b"ab\x00", "é", b""]})
    assert list(got) == [b"ab\x00", "é".encode(), b""]
