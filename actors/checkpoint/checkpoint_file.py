"""Reading a safetensors checkpoint file without trusting it.

Format (safetensors): an 8-byte little-endian header length ``N``, ``N`` bytes of JSON mapping
each tensor name to ``{"dtype", "shape", "data_offsets": [begin, end]}`` (offsets into the data
that follows the header; ``"__metadata__"`` holds string pairs), then the data.

Everything the header claims is checked against the file before a tensor byte is read: the
header fits in the file, each entry's byte range matches its dtype and shape and lies inside the
file. A file whose header claims 2 GiB of a 4 KiB file is ``DataLossError`` at once, not after
reading (or mapping) 2 GiB. The file is opened without blocking and must be a regular file: a
FIFO or a directory at the path is named as such. OS errors become ``tf.errors`` classes naming
the file (``actors/checkpoint/file_errors.py``).

Which files the runtime trusts, and how far: docs/design.md section 9.
"""

from __future__ import annotations

import json
import math
import os
import stat
from dataclasses import dataclass
from typing import Any

import numpy as np

from antcolony.config.bounded_read import file_kind
from antcolony.errors import DataLossError, FailedPreconditionError, NotFoundError

from .file_errors import op_error_from_os_error

__all__ = ["DTYPES", "MAX_HEADER_BYTES", "CheckpointFile", "TensorEntry"]

#: safetensors' own limit on the header.
MAX_HEADER_BYTES = 100 << 20
#: safetensors dtype names numpy can hold.
DTYPES: dict[str, np.dtype[Any]] = {
    name: np.dtype(t)
    for name, t in (
        ("BOOL", np.bool_),
        ("U8", np.uint8),
        ("I8", np.int8),
        ("U16", np.uint16),
        ("I16", np.int16),
        ("F16", np.float16),
        ("U32", np.uint32),
        ("I32", np.int32),
        ("F32", np.float32),
        ("U64", np.uint64),
        ("I64", np.int64),
        ("F64", np.float64),
    )
}
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
_CHUNK = 64 << 20


@dataclass(frozen=True)
class TensorEntry:
    """One tensor of the header: ``dtype`` is None for a safetensors dtype numpy cannot hold
    (``dtype_name`` says which)."""

    name: str
    dtype_name: str
    dtype: np.dtype[Any] | None
    shape: tuple[int, ...]
    begin: int
    end: int


class CheckpointFile:
    """An open checkpoint file whose header has been read and checked (a context manager)."""

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            self._fd = os.open(path, _OPEN_FLAGS)
        except FileNotFoundError:
            raise NotFoundError(
                None,
                None,
                f"no checkpoint at {path}: the file does not exist; pass a prefix Saver.save returned",
            ) from None
        except OSError as exc:
            raise op_error_from_os_error(exc, f"cannot open checkpoint file {path}") from None
        try:
            st = os.fstat(self._fd)
            if not stat.S_ISREG(st.st_mode):
                raise FailedPreconditionError(
                    None,
                    None,
                    f"{path} is {file_kind(st.st_mode)}, not a checkpoint file; pass the prefix of a "
                    "checkpoint that Saver.save wrote",
                )
            # Reads of a regular file never block; clear O_NONBLOCK for plain read semantics.
            os.set_blocking(self._fd, True)
            self.size = st.st_size
            self.entries, self.metadata = self._read_header()
        except BaseException:
            os.close(self._fd)
            raise

    def __enter__(self) -> CheckpointFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def _corrupt(self, what: str) -> DataLossError:
        return DataLossError(
            None, None, f"checkpoint {self.path} is corrupt or not a safetensors file: {what}"
        )

    def _read_exact(self, offset: int, n: int, out: memoryview | None = None) -> bytes | None:
        buf = out if out is not None else memoryview(bytearray(n))
        done = 0
        try:
            while done < n:
                got = os.preadv(self._fd, [buf[done : done + _CHUNK]], offset + done)
                if not got:
                    raise self._corrupt(f"it ends at byte {offset + done}, {n - done} bytes early")
                done += got
        except OSError as exc:
            raise op_error_from_os_error(exc, f"cannot read checkpoint file {self.path}") from None
        return None if out is not None else bytes(buf)

    def _read_header(self) -> tuple[dict[str, TensorEntry], dict[str, Any]]:
        if self.size < 8:
            raise self._corrupt(f"it holds {self.size} bytes, fewer than the 8 of a header length")
        head = self._read_exact(0, 8)
        assert head is not None
        n = int.from_bytes(head, "little")
        if n > self.size - 8 or n > MAX_HEADER_BYTES:
            raise self._corrupt(
                f"its header claims {n} bytes but the file holds {self.size} (header limit {MAX_HEADER_BYTES})"
            )
        raw = self._read_exact(8, n)
        assert raw is not None
        try:
            header = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            raise self._corrupt(f"its header is not valid JSON ({type(exc).__name__})") from None
        if not isinstance(header, dict):
            raise self._corrupt("its header is not a JSON object")
        metadata = header.pop("__metadata__", None) or {}
        data_start, room = 8 + n, self.size - 8 - n
        entries = {name: self._entry(name, spec, room, data_start) for name, spec in header.items()}
        return entries, metadata if isinstance(metadata, dict) else {}

    def _entry(self, name: str, spec: Any, room: int, data_start: int) -> TensorEntry:
        if not isinstance(spec, dict):
            raise self._corrupt(f"the header entry of {name!r} is not an object")
        dtype_name, shape, offsets = spec.get("dtype"), spec.get("shape"), spec.get("data_offsets")
        if not isinstance(dtype_name, str):
            raise self._corrupt(f"{name!r} has no dtype")
        if not (isinstance(shape, list) and all(type(d) is int and d >= 0 for d in shape)):
            raise self._corrupt(f"{name!r} has shape {shape!r}, not a list of sizes")
        if not (
            isinstance(offsets, list)
            and len(offsets) == 2
            and all(type(o) is int and o >= 0 for o in offsets)
        ):
            raise self._corrupt(f"{name!r} has data_offsets {offsets!r}, not [begin, end]")
        begin, end = offsets
        if begin > end or end > room:
            raise self._corrupt(
                f"{name!r} claims bytes [{begin}, {end}) of a data section of {room} bytes (the file "
                "is truncated or its header is wrong)"
            )
        dtype = DTYPES.get(dtype_name)
        if dtype is not None and math.prod(shape) * dtype.itemsize != end - begin:
            raise self._corrupt(
                f"{name!r} is {dtype_name} of shape {shape} ({math.prod(shape) * dtype.itemsize} bytes) "
                f"but spans {end - begin} bytes"
            )
        return TensorEntry(name, dtype_name, dtype, tuple(shape), data_start + begin, data_start + end)

    def read(self, entry: TensorEntry) -> np.ndarray:
        """The tensor's values (its dtype must be one numpy holds; the caller checked it)."""
        if entry.dtype is None:
            raise self._corrupt(f"{entry.name!r} has dtype {entry.dtype_name}, which cannot be read")
        out = np.empty(entry.shape, entry.dtype)
        if out.nbytes:
            self._read_exact(entry.begin, out.nbytes, out.data.cast("B"))
        return out
