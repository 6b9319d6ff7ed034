"""TFRecord files: writer, reader and ``tf_record_iterator``; plain or GZIP.

Framing of each record (little-endian): uint64 length, uint32 masked CRC-32C of those 8 bytes,
the data, uint32 masked CRC-32C of the data. The reader checks both CRCs, batched (crc32c.py),
and fails with ``DataLossError`` naming the file and offset of a corrupt or truncated record.
"""

from __future__ import annotations

import gzip
import os
import struct
from collections.abc import Iterator
from typing import IO, Any

import numpy as np

from antcolony.errors import DataLossError, InvalidArgumentError, NotFoundError

from .crc32c import crc32c, crc32c_many, mask

__all__ = [
    "TFRecordCompressionType",
    "TFRecordOptions",
    "TFRecordWriter",
    "frame",
    "open_input",
    "read_records",
    "tf_record_iterator",
]

_BATCH_RECORDS = 256
_BATCH_BYTES = 1 << 20


class TFRecordCompressionType:
    NONE = 0
    ZLIB = 1
    GZIP = 2


class TFRecordOptions:
    """``tf.io.TFRecordOptions``: only the compression type is honoured."""

    def __init__(self, compression_type: Any = None, **_: Any) -> None:
        self.compression_type = compression_of(compression_type)

    @staticmethod
    def get_compression_type_string(options: Any) -> str:
        return compression_of(options)


def compression_of(value: Any) -> str:
    """ "" or "GZIP" from a string, a TFRecordCompressionType value, options or None."""
    if isinstance(value, TFRecordOptions):
        return value.compression_type
    if value is None or value == TFRecordCompressionType.NONE:
        return ""
    if value == TFRecordCompressionType.GZIP:
        return "GZIP"
    if isinstance(value, bytes):
        value = value.decode()
    if isinstance(value, str) and value.upper() in ("", "GZIP"):
        return value.upper()
    raise InvalidArgumentError(
        None, None, f"compression type {value!r} is not supported; use None, '' or 'GZIP'"
    )


def open_input(path: str, compression: str) -> IO[bytes]:
    """``path`` opened for binary reading (gunzipped for GZIP); NotFoundError when missing."""
    try:
        raw = open(path, "rb")  # noqa: SIM115 - returned to the caller, who closes it
    except FileNotFoundError:
        raise NotFoundError(None, None, f"{path}; No such file or directory") from None
    except IsADirectoryError:
        raise InvalidArgumentError(None, None, f"{path} is a directory, not a file") from None
    if compression == "GZIP":
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    return raw


def _header(n: int) -> bytes:
    length = struct.pack("<Q", n)
    return length + struct.pack("<I", mask(crc32c(length)))


def frame(data: bytes) -> bytes:
    """One TFRecord: length, masked CRC of the length, the data, masked CRC of the data."""
    return _header(len(data)) + data + struct.pack("<I", mask(crc32c(data)))


class TFRecordWriter:
    """``tf.io.TFRecordWriter(path, options=None)``: ``write(record)``, ``flush()``, ``close()``."""

    def __init__(self, path: str, options: Any = None) -> None:
        self._path = os.fspath(path)
        compression = compression_of(options)
        directory = os.path.dirname(os.path.abspath(self._path))
        if not os.path.isdir(directory):
            raise NotFoundError(None, None, f"{self._path}: parent directory does not exist; create it first")
        raw = open(self._path, "wb")  # noqa: SIM115 - closed by close()
        self._file: IO[bytes] = raw
        if compression == "GZIP":
            self._file = gzip.GzipFile(fileobj=raw, mode="wb")  # type: ignore[assignment]
        self._raw = raw

    def write(self, record: bytes | str) -> None:
        data = record.encode() if isinstance(record, str) else bytes(record)
        self._file.write(frame(data))

    def flush(self) -> None:
        self._file.flush()
        if self._raw is not self._file:
            self._raw.flush()

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()
        if not self._raw.closed:
            self._raw.close()

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def read_records(path: str, compression: str = "") -> Iterator[bytes]:
    """The records of one TFRecord file, CRCs checked (in batches of records)."""
    with open_input(path, compression) as f:
        offset = 0
        while True:
            heads: list[bytes] = []
            datas: list[bytes] = []
            footers: list[int] = []
            starts: list[int] = []
            size = 0
            while len(datas) < _BATCH_RECORDS and size < _BATCH_BYTES:
                head = f.read(12)
                if not head:
                    break
                if len(head) < 12:
                    raise DataLossError(None, None, f"truncated record at {offset} in {path}")
                (n,) = struct.unpack_from("<Q", head)
                body = f.read(n + 4)
                if len(body) < n + 4:
                    raise DataLossError(None, None, f"truncated record at {offset} in {path}")
                heads.append(head)
                datas.append(body[:n])
                footers.append(struct.unpack_from("<I", body, n)[0])
                starts.append(offset)
                offset += 12 + n + 4
                size += n
            if not datas:
                return
            _check(path, heads, datas, footers, starts)
            yield from datas


def _check(path: str, heads: list[bytes], datas: list[bytes], footers: list[int], starts: list[int]) -> None:
    head_crcs = mask(crc32c_many([h[:8] for h in heads]))
    expected_heads = np.frombuffer(b"".join(h[8:] for h in heads), dtype="<u4")
    data_crcs = mask(crc32c_many(datas))
    bad = np.flatnonzero((head_crcs != expected_heads) | (data_crcs != np.asarray(footers, dtype=np.uint32)))
    if bad.size:
        raise DataLossError(
            None, None, f"corrupted record at {starts[int(bad[0])]} in {path}: its CRC-32C does not match"
        )


def tf_record_iterator(path: str, options: Any = None) -> Iterator[bytes]:
    """``tf.io.tf_record_iterator`` / ``tf.python_io.tf_record_iterator``: the records as bytes."""
    return read_records(os.fspath(path), compression_of(options))


def read_lines(path: str, compression: str = "") -> Iterator[bytes]:
    """The lines of a text file without their line ending (``\\n`` or ``\\r\\n``), as TF."""
    with open_input(path, compression) as f:
        for line in f:
            if line.endswith(b"\n"):
                line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
            yield line
