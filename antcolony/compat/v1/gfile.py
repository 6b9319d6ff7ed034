"""``tf.gfile`` of the TF1 face: local files only (no GCS/HDFS), enough for the idioms TF1 programs
use, such as reading a frozen ``.pb``: ``with tf.gfile.GFile(path, "rb") as f: gd.ParseFromString(f.read())``."""

from __future__ import annotations

import glob as _glob
import os as _os
import shutil as _shutil
from typing import IO as _IO
from typing import Any as _Any

from antcolony.errors import NotFoundError as _NotFoundError

__all__ = [
    "Copy",
    "DeleteRecursively",
    "Exists",
    "FastGFile",
    "GFile",
    "Glob",
    "IsDirectory",
    "ListDirectory",
    "MakeDirs",
    "Open",
    "Remove",
    "Rename",
]


def GFile(name: str | _os.PathLike[str], mode: str = "r") -> _IO[_Any]:
    """Open a local file (text mode unless ``mode`` has ``b``); NotFoundError names a missing file."""
    try:
        return open(_os.fspath(name), mode)
    except FileNotFoundError:
        raise _NotFoundError(None, None, f"{_os.fspath(name)}; No such file or directory") from None


FastGFile = Open = GFile


def Exists(path: str) -> bool:
    return _os.path.exists(path)


def IsDirectory(path: str) -> bool:
    return _os.path.isdir(path)


def MakeDirs(path: str) -> None:
    _os.makedirs(path, exist_ok=True)


def ListDirectory(path: str) -> list[str]:
    if not _os.path.isdir(path):
        raise _NotFoundError(None, None, f"Could not find directory {path}")
    return _os.listdir(path)


def Glob(pattern: str) -> list[str]:
    return sorted(_glob.glob(pattern))


def Remove(path: str) -> None:
    try:
        _os.remove(path)
    except FileNotFoundError:
        raise _NotFoundError(None, None, f"{path}; No such file or directory") from None


def DeleteRecursively(path: str) -> None:
    if _os.path.isdir(path):
        _shutil.rmtree(path)
    else:
        Remove(path)


def Copy(oldpath: str, newpath: str, overwrite: bool = False) -> None:
    if not overwrite and _os.path.exists(newpath):
        raise FileExistsError(f"{newpath} exists; pass overwrite=True to replace it")
    _shutil.copyfile(oldpath, newpath)


def Rename(oldname: str, newname: str, overwrite: bool = False) -> None:
    if not overwrite and _os.path.exists(newname):
        raise FileExistsError(f"{newname} exists; pass overwrite=True to replace it")
    _os.replace(oldname, newname)
