"""Checkpoints under hostile or broken files: lying headers, FIFOs, devices, killed saves, OS errors.

Cases where the old code hung (a FIFO opened for reading) run in a child process with a timeout.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import antcolony.compat.v1 as tf


def _model():
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
        init = tf.global_variables_initializer()
        saver = tf.train.Saver()
    return g, w, init, saver


def _lying_file(path, header: dict, size: int) -> None:
    """A safetensors file with ``header``, made sparse up to ``size`` bytes."""
    raw = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(len(raw).to_bytes(8, "little") + raw)
        f.truncate(size)


@pytest.mark.parametrize(
    ("header", "what"),
    [
        ({"w": {"dtype": "F32", "shape": [1 << 29], "data_offsets": [0, 1 << 31]}}, "claims bytes"),
        ({"w": {"dtype": "F32", "shape": [1 << 38], "data_offsets": [0, 1 << 40]}}, "claims bytes"),
        ({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 4 << 30]}}, "claims bytes"),
        ({"w": {"dtype": "F32", "shape": [1 << 20], "data_offsets": [0, 24]}}, "spans 24 bytes"),
        ({"w": {"dtype": "F32", "shape": "big", "data_offsets": [0, 24]}}, "not a list of sizes"),
        ({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [24, 0]}}, "claims bytes"),
    ],
    ids=["2GiB_in_4KiB", "1TiB_in_4KiB", "offsets_past_the_end", "shape_vs_bytes", "bad_shape", "reversed"],
)
def test_a_header_that_claims_more_than_the_file_is_data_loss_before_any_read(tmp_path, header, what):
    g, _w, _init, saver = _model()
    _lying_file(tmp_path / "m.safetensors", header, 4096)
    with tf.Session(graph=g) as sess, pytest.raises(tf.errors.DataLossError, match=what) as info:
        saver.restore(sess, str(tmp_path / "m"))
    assert "m.safetensors" in str(info.value)


def test_a_header_length_larger_than_the_file_is_data_loss(tmp_path):
    g, _w, _init, saver = _model()
    (tmp_path / "m.safetensors").write_bytes((1 << 40).to_bytes(8, "little") + b"{}")
    with tf.Session(graph=g) as sess, pytest.raises(tf.errors.DataLossError, match="header claims"):
        saver.restore(sess, str(tmp_path / "m"))
    (tmp_path / "m.safetensors").write_bytes(b"\x01\x02")
    with tf.Session(graph=g) as sess, pytest.raises(tf.errors.DataLossError, match="fewer than the 8"):
        saver.restore(sess, str(tmp_path / "m"))


def test_a_shape_or_dtype_mismatch_is_reported_from_the_header(tmp_path):
    g, _w, _init, saver = _model()
    for header, match in (
        ({"w": {"dtype": "F32", "shape": [3, 2], "data_offsets": [0, 24]}}, r"shape \(3, 2\)"),
        (
            {"w": {"dtype": "I32", "shape": [2, 3], "data_offsets": [0, 24]}},
            "as int32 but variable w is float32",
        ),
        (
            {"w": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [0, 12]}},
            "as BF16 but variable w is float32",
        ),
    ):
        _lying_file(tmp_path / "m.safetensors", header, 4096)
        with tf.Session(graph=g) as sess, pytest.raises(tf.errors.InvalidArgumentError, match=match):
            saver.restore(sess, str(tmp_path / "m"))


def test_a_directory_at_the_checkpoint_path_says_so_on_restore_and_save(tmp_path):
    g, _w, init, saver = _model()
    (tmp_path / "m.safetensors").mkdir()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        with pytest.raises(tf.errors.FailedPreconditionError, match=r"m\.safetensors is a directory"):
            saver.restore(sess, str(tmp_path / "m"))
        with pytest.raises(tf.errors.FailedPreconditionError, match=r"m\.safetensors.*Is a directory"):
            saver.save(sess, str(tmp_path / "m"))


def test_os_errors_of_a_save_are_tf_errors_naming_the_file(tmp_path, monkeypatch):
    g, _w, init, saver = _model()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        for code, cls in (
            (errno.ENOSPC, tf.errors.ResourceExhaustedError),
            (errno.EDQUOT, tf.errors.ResourceExhaustedError),
            (errno.EACCES, tf.errors.PermissionDeniedError),
            (errno.EROFS, tf.errors.PermissionDeniedError),
        ):

            def refuse(src, dst, code=code):
                raise OSError(code, os.strerror(code), dst)

            with monkeypatch.context() as m:
                m.setattr(os, "replace", refuse)
                with pytest.raises(cls, match=r"cannot write checkpoint .*m\.safetensors") as info:
                    saver.save(sess, str(tmp_path / "m"))
            assert isinstance(info.value, tf.errors.OpError) and os.strerror(code) in str(info.value)
        assert saver.save(sess, str(tmp_path / "m")) == str(tmp_path / "m")  # and then it works


def test_a_save_killed_midway_leaves_a_temporary_the_next_save_removes(tmp_path):
    code = textwrap.dedent(
        f"""
        import os, signal, numpy as np
        import antcolony.compat.v1 as tf
        g = tf.Graph()
        with g.as_default():
            w = tf.Variable(np.ones((256, 1024), np.float32), name="w")
            init = tf.global_variables_initializer()
            saver = tf.train.Saver()
        with tf.Session(graph=g) as sess:
            sess.run(init)
            os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)  # dies with the data written
            saver.save(sess, {str(tmp_path / "model.ckpt")!r}, global_step=100)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == -9, out.stderr
    left = [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
    assert len(left) == 1 and left[0].startswith(".model.ckpt-100.safetensors."), left
    assert os.path.getsize(tmp_path / left[0]) >= 1 << 20
    other = tmp_path / ".other.ckpt-100.safetensors.0123456789ab.tmp"  # another prefix's: kept
    other.write_bytes(b"x")
    g = tf.Graph()
    with g.as_default():
        tf.Variable(np.ones((256, 1024), np.float32), name="w")
        init = tf.global_variables_initializer()
        saver = tf.train.Saver()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        prefix = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=200)
    assert sorted(f for f in os.listdir(tmp_path) if f.endswith(".tmp")) == [other.name]
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefix


CHILD = textwrap.dedent(
    """
    import logging, os, sys, numpy as np
    import antcolony.compat.v1 as tf
    logging.basicConfig(level=logging.WARNING)
    d = sys.argv[1]
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(np.ones(3, np.float32), name="w")
        saver = tf.train.Saver()
    print("latest", tf.train.latest_checkpoint(d), flush=True)
    print("state", tf.train.get_checkpoint_state(d), flush=True)
    with tf.Session(graph=g) as sess:
        try:
            saver.restore(sess, os.path.join(d, "m"))
        except tf.errors.OpError as exc:
            print("restore", type(exc).__name__, exc.message, flush=True)
    """
)


@pytest.mark.parametrize("plant", ["fifo", "dev_zero_link"])
def test_a_fifo_or_device_as_state_file_or_checkpoint_is_refused_not_waited_on(tmp_path, plant):
    if plant == "fifo":
        os.mkfifo(tmp_path / "checkpoint")
        os.mkfifo(tmp_path / "m.safetensors")
        kind = "a FIFO"
    else:
        (tmp_path / "checkpoint").symlink_to("/dev/zero")
        (tmp_path / "m.safetensors").symlink_to("/dev/zero")
        kind = "a character device"
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "latest None" and lines[1] == "state None", out.stdout
    assert lines[2].startswith("restore FailedPreconditionError") and f"m.safetensors is {kind}" in lines[2]
    assert f"checkpoint state file {tmp_path / 'checkpoint'} is {kind}" in out.stderr, out.stderr
