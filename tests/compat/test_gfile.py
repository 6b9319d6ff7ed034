"""``tf.gfile`` on local files, compared with what os/glob see."""

from __future__ import annotations

import os
from typing import Any

import pytest

import antcolony.compat.v1 as tf
from antcolony.errors import NotFoundError


def test_gfile_file_operations(tmp_path: Any) -> None:
    d = str(tmp_path / "a" / "b")
    assert not tf.gfile.Exists(d)
    tf.gfile.MakeDirs(d)
    assert tf.gfile.IsDirectory(d)
    with tf.gfile.GFile(os.path.join(d, "x.txt"), "w") as f:
        f.write("hello")
    tf.gfile.Copy(os.path.join(d, "x.txt"), os.path.join(d, "y.txt"))
    with pytest.raises(FileExistsError):
        tf.gfile.Copy(os.path.join(d, "x.txt"), os.path.join(d, "y.txt"))
    tf.gfile.Rename(os.path.join(d, "y.txt"), os.path.join(d, "z.txt"))
    assert sorted(tf.gfile.ListDirectory(d)) == ["x.txt", "z.txt"]
    assert tf.gfile.Glob(os.path.join(d, "*.txt")) == [os.path.join(d, "x.txt"), os.path.join(d, "z.txt")]
    with tf.gfile.FastGFile(os.path.join(d, "z.txt"), "rb") as f:
        assert f.read() == b"hello"
    tf.gfile.Remove(os.path.join(d, "z.txt"))
    with pytest.raises(NotFoundError, match=r"z\.txt"):
        tf.gfile.Remove(os.path.join(d, "z.txt"))
    tf.gfile.DeleteRecursively(str(tmp_path / "a"))
    assert not tf.gfile.Exists(str(tmp_path / "a"))
    with pytest.raises(NotFoundError, match="Could not find directory"):
        tf.gfile.ListDirectory(str(tmp_path / "a"))
