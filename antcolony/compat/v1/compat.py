"""``tf.compat`` as TF1 code uses it: ``tf.compat.v1`` (this same TF1 face, so code written for
TF 2's ``tf.compat.v1`` runs with ``import antcolony.compat.v1 as tf``) and the text helpers
``as_bytes``, ``as_text``, ``as_str``, ``as_str_any``, ``path_to_str``."""

from __future__ import annotations

import importlib as _importlib
import os as _os
import typing as _typing

__all__ = ["as_bytes", "as_str", "as_str_any", "as_text", "path_to_str", "v1"]  # noqa: F822 - v1: __getattr__


def as_bytes(bytes_or_text: _typing.Any, encoding: str = "utf-8") -> bytes:
    """``bytes_or_text`` as bytes (text encoded with ``encoding``)."""
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text: _typing.Any, encoding: str = "utf-8") -> str:
    """``bytes_or_text`` as str (bytes decoded with ``encoding``)."""
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, (bytes, bytearray)):
        return bytes(bytes_or_text).decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def as_str_any(value: _typing.Any) -> str:
    """``as_str`` of bytes, ``str()`` of anything else."""
    return as_str(value) if isinstance(value, (bytes, bytearray)) else str(value)


def path_to_str(path: _typing.Any) -> _typing.Any:
    """A path-like object as its str; anything else unchanged."""
    return _os.fspath(path) if isinstance(path, _os.PathLike) else path


def __getattr__(name: str) -> _typing.Any:
    # The face imports this module, so it cannot bind itself here at import time.
    if name == "v1":
        return _importlib.import_module("antcolony.compat.v1")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
