"""``tf.gfile`` of the TF1 face: local files only (no GCS/HDFS), enough for the idioms TF1 programs
use, such as reading a frozen ``.pb``: ``with tf.gfile.GFile(path, "rb") as f: gd.ParseFromString(f.read())``."""

from __future__ import annotations

import glob as _glob
import os
import shutil
from typing import IO, Any

from antcolony.errors import NotFoundError

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


def GFile(name: str | os.PathLike[str], mode: str = "r") -> IO[Any]:
    """Open a local file (text mode unless ``mode`` has ``b``); NotFoundError names a missing file."""
    try:
        return open(os.fspath(name), mode)
    except FileNotFoundError:
        raise NotFoundError(None, None, f"{os.fspath(name)}; No such file or directory") from None


FastGFile = Open = GFile


def Exists(path: str) -> bool:
    return os.path.exists(path)


def IsDirectory(path: str) -> bool:
    return os.path.isdir(path)


def MakeDirs(path: str) -> None:
    os.makedirs(path, exist_ok=True)


def ListDirectory(path: str) -> list[str]:
    if not os.path.isdir(path):
        raise NotFoundError(None, None, f"Could not find directory {path}")
    return os.listdir(path)


def Glob(pattern: str) -> list[str]:
    return sorted(_glob.glob(pattern))


def Remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        raise NotFoundError(None, None, f"{path}; No such file or directory") from None


def DeleteRecursively(path: str) -> None:
    if os.path.isdir(path):
        shutil.rmtree(path)
    else:
        Remove(path)


def Copy(oldpath: str, newpath: str, overwrite: bool = False) -> None:
    if not overwrite and os.path.exists(newpath):
        raise FileExistsError(f"{newpath} exists; pass overwrite=True to replace it")
    shutil.copyfile(oldpath, newpath)


def Rename(oldname: str, newname: str, overwrite: bool = False) -> None:
    if not overwrite and os.path.exists(newname):
        raise FileExistsError(f"{newname} exists; pass overwrite=True to replace it")
    os.replace(oldname, newname)
