"""Decoding serialized ``tf.train.Example`` protos from the wire format, without protobuf.

Scoped to Example only (what ``parse_example`` reads): Example{1: Features}; Features{1: map
entries {1: key, 2: Feature}}; Feature{1: BytesList, 2: FloatList, 3: Int64List}, each list
field 1, packed or not. Unknown fields are skipped, as protobuf parsers do; a malformed buffer
raises ValueError.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["decode_example"]

# Feature kinds, by field number of the Feature's oneof.
BYTES, FLOAT, INT64 = 1, 2, 3


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _fields(buf: bytes, start: int, end: int) -> Iterator[tuple[int, int, Any]]:
    """(field number, wire type, value): an int for varint, bytes for fixed, (start, end) for LEN."""
    pos = start
    value: Any
    while pos < end:
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            n, pos = _varint(buf, pos)
            if pos + n > end:
                raise ValueError("truncated length-delimited field")
            value = (pos, pos + n)
            pos += n
        elif wire == 5:
            value = buf[pos : pos + 4]
            pos += 4
        elif wire == 1:
            value = buf[pos : pos + 8]
            pos += 8
        else:
            raise ValueError(f"unsupported wire type {wire}")
        if pos > end:
            raise ValueError("truncated field")
        yield field, wire, value


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _feature(buf: bytes, start: int, end: int) -> tuple[int, Any]:
    kind, values = BYTES, list[Any]()  # an empty Feature: no values (TF treats it as an empty list)
    for field, wire, value in _fields(buf, start, end):
        if field not in (BYTES, FLOAT, INT64) or wire != 2:
            continue
        kind = field
        s, e = value
        values = list[Any]()
        for f, w, v in _fields(buf, s, e):
            if f != 1:
                continue
            if kind == BYTES and w == 2:
                values.append(buf[v[0] : v[1]])
            elif kind == FLOAT and w == 2 and not values:
                # The usual case, one packed run: kept as a numpy array, not a list of floats.
                values = np.frombuffer(buf, dtype="<f4", count=(v[1] - v[0]) // 4, offset=v[0])  # type: ignore[assignment]
            elif kind == FLOAT and w == 2:
                values = [*values, *np.frombuffer(buf[v[0] : v[1]], dtype="<f4").tolist()]
            elif kind == FLOAT and w == 5:
                values.append(struct.unpack("<f", v)[0])
            elif kind == INT64 and w == 2:
                pos = v[0]
                while pos < v[1]:
                    n, pos = _varint(buf, pos)
                    values.append(_signed(n))
            elif kind == INT64 and w == 0:
                values.append(_signed(v))
    return kind, values


def decode_example(data: bytes) -> dict[str, tuple[int, Any]]:
    """key -> (kind, values) of a serialized Example (kind: BYTES, FLOAT or INT64); values is a
    list, or a float32 array for a packed FloatList."""
    buf = bytes(data)
    out: dict[str, tuple[int, Any]] = {}
    for field, wire, value in _fields(buf, 0, len(buf)):
        if field != 1 or wire != 2:
            continue
        for f, w, entry in _fields(buf, *value):
            if f != 1 or w != 2:
                continue
            key, feature = "", (BYTES, list[Any]())
            for ef, ew, ev in _fields(buf, *entry):
                if ef == 1 and ew == 2:
                    key = buf[ev[0] : ev[1]].decode()
                elif ef == 2 and ew == 2:
                    feature = _feature(buf, *ev)
            out[key] = feature  # a repeated key: the last one wins, as protobuf maps
    return out
