"""The bytes of one tensor between task processes: a framed message, never a pickle.

A frame is a fixed header, the rendezvous key, the shape, then the raw element bytes::

    magic b"ACTW" | version u8 | flags u8 | ndim u16 | dtype u32 (TF's DataType number)
    | step_id i64 | key_len u32 | reserved u32 | payload_len u64          (32 bytes, little-endian)
    key (UTF-8, key_len bytes) | shape (ndim x u64) | payload (payload_len bytes)

The key is the rendezvous key as TF builds it (:func:`rendezvous_key`). Numeric payloads are the
array's C-order little-endian bytes; a string tensor's payload is each element as u64 length +
bytes. Decoding checks every field before it allocates anything: a frame claiming more than
``max_payload`` bytes, a dtype number it does not know, a shape whose element count disagrees
with the byte count, or string lengths running past the payload is a :class:`DataLossError`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from antcolony.errors import DataLossError, InvalidArgumentError

__all__ = [
    "HEADER",
    "MAX_KEY_BYTES",
    "MAX_NDIM",
    "Frame",
    "FrameHeader",
    "decode_frame",
    "encode_frame",
    "parse_header",
    "parse_rendezvous_key",
    "payload_array",
    "rendezvous_key",
]

MAGIC = b"ACTW"
VERSION = 1
HEADER = struct.Struct("<4sBBHIqIIQ")
MAX_KEY_BYTES = 64 * 1024
MAX_NDIM = 64  # TF allows 254; no real tensor comes near 64
DEFAULT_MAX_PAYLOAD = 1 << 34  # 16 GiB: above any one tensor a task sends; a receiver may lower it
_LEN = struct.Struct("<Q")

# TF's DataType enum numbers (types.proto), fixed by TF.
_CODE_TO_DTYPE: dict[int, np.dtype] = {
    1: np.dtype("<f4"),
    2: np.dtype("<f8"),
    3: np.dtype("<i4"),
    4: np.dtype("u1"),
    5: np.dtype("<i2"),
    6: np.dtype("i1"),
    7: np.dtype(object),  # DT_STRING: bytes elements
    8: np.dtype("<c8"),
    9: np.dtype("<i8"),
    10: np.dtype("?"),
    17: np.dtype("<u2"),
    18: np.dtype("<c16"),
    19: np.dtype("<f2"),
    22: np.dtype("<u4"),
    23: np.dtype("<u8"),
}
_DTYPE_TO_CODE: dict[np.dtype, int] = {v: k for k, v in _CODE_TO_DTYPE.items()}
DT_STRING = 7


def rendezvous_key(
    src_device: str,
    src_incarnation: int,
    dst_device: str,
    tensor_name: str,
    frame_id: int = 0,
    iter_id: int = 0,
) -> str:
    """TF's rendezvous key: ``src_device;src_incarnation;dst_device;tensor_name;frame_id:iter_id``,
    the incarnation as 16 hex digits (a number the sending task draws at start, so a restarted
    task's stale sends never match)."""
    return (
        f"{src_device};{src_incarnation & (2**64 - 1):016x};{dst_device};{tensor_name};{frame_id}:{iter_id}"
    )


@dataclass(frozen=True)
class ParsedKey:
    src_device: str
    src_incarnation: int
    dst_device: str
    tensor_name: str
    frame_id: int
    iter_id: int


def parse_rendezvous_key(key: str) -> ParsedKey:
    parts = key.split(";")
    if len(parts) != 5 or not all(parts[:4]):
        raise InvalidArgumentError(
            None,
            None,
            f"invalid rendezvous key {key!r}: want src_device;incarnation;dst_device;name;frame:iter",
        )
    frame, sep, it = parts[4].partition(":")
    try:
        incarnation = int(parts[1], 16)
        frame_id, iter_id = int(frame), int(it)
    except ValueError:
        raise InvalidArgumentError(
            None, None, f"invalid rendezvous key {key!r}: incarnation must be hex, frame:iter integers"
        ) from None
    if not sep:
        raise InvalidArgumentError(None, None, f"invalid rendezvous key {key!r}: no frame:iter")
    return ParsedKey(parts[0], incarnation, parts[2], parts[3], frame_id, iter_id)


@dataclass(frozen=True)
class FrameHeader:
    """The validated fixed part of a frame; ``rest`` bytes (key + shape) follow, then the payload."""

    dtype: np.dtype
    ndim: int
    step_id: int
    key_len: int
    payload_len: int

    @property
    def rest(self) -> int:
        return self.key_len + 8 * self.ndim


@dataclass(frozen=True)
class Frame:
    key: str
    step_id: int
    value: np.ndarray


def _check_value(value: np.ndarray) -> tuple[np.dtype, int]:
    dt = value.dtype
    code = _DTYPE_TO_CODE.get(dt if dt.kind == "O" else dt.newbyteorder("<"))
    if code is None:
        raise InvalidArgumentError(
            None,
            None,
            f"dtype {dt} has no wire encoding (strings go as an object array of bytes); supported: "
            + ", ".join(sorted(str(d) for d in _DTYPE_TO_CODE)),
        )
    return _CODE_TO_DTYPE[code], code


def encode_frame(key: str, step_id: int, value: np.ndarray) -> list[memoryview | bytes]:
    """The frame as buffers to write in order: header+key+shape, then the payload. The payload of
    a C-contiguous numeric array is a view of its memory (no copy)."""
    value = np.asarray(value)
    wire_dt, code = _check_value(value)
    if code == DT_STRING:
        payload: memoryview | bytes = _string_payload(value)
    else:
        arr = np.ascontiguousarray(value, dtype=wire_dt)  # copies only if strided or byte-swapped
        payload = arr.reshape(-1).view(np.uint8).data if arr.size else b""
    key_b = key.encode()
    if len(key_b) > MAX_KEY_BYTES:
        raise InvalidArgumentError(
            None, None, f"rendezvous key of {len(key_b)} bytes exceeds {MAX_KEY_BYTES}"
        )
    if value.ndim > MAX_NDIM:
        raise InvalidArgumentError(None, None, f"tensor of rank {value.ndim} exceeds the wire's {MAX_NDIM}")
    head = HEADER.pack(MAGIC, VERSION, 0, value.ndim, code, step_id, len(key_b), 0, len(payload))
    shape = struct.pack(f"<{value.ndim}Q", *value.shape)
    return [head + key_b + shape, payload]


def _string_payload(value: np.ndarray) -> bytes:
    parts = []
    for item in value.reshape(-1):
        if isinstance(item, str):
            item = item.encode()
        if not isinstance(item, (bytes, bytearray, memoryview)):
            raise InvalidArgumentError(
                None, None, f"a string tensor holds {type(item).__name__}; only bytes (or str) go on the wire"
            )
        b = bytes(item)
        parts.append(_LEN.pack(len(b)))
        parts.append(b)
    return b"".join(parts)


def parse_header(buf: bytes | memoryview, max_payload: int = DEFAULT_MAX_PAYLOAD) -> FrameHeader:
    """Validate the fixed header (``HEADER.size`` bytes) before anything is allocated for the rest."""
    if len(buf) < HEADER.size:
        raise DataLossError(None, None, f"tensor frame header truncated: {len(buf)} of {HEADER.size} bytes")
    magic, version, _flags, ndim, code, step_id, key_len, _res, payload_len = HEADER.unpack_from(buf)
    if magic != MAGIC:
        raise DataLossError(None, None, f"not a tensor frame: magic {magic!r}, want {MAGIC!r}")
    if version != VERSION:
        raise DataLossError(None, None, f"tensor frame version {version}, this build reads {VERSION}")
    dtype = _CODE_TO_DTYPE.get(code)
    if dtype is None:
        raise DataLossError(None, None, f"tensor frame has unknown dtype number {code}")
    if ndim > MAX_NDIM:
        raise DataLossError(None, None, f"tensor frame claims rank {ndim}, above the wire's {MAX_NDIM}")
    if key_len == 0 or key_len > MAX_KEY_BYTES:
        raise DataLossError(None, None, f"tensor frame claims a {key_len}-byte key (1..{MAX_KEY_BYTES})")
    if payload_len > max_payload:
        raise DataLossError(
            None,
            None,
            f"tensor frame claims {payload_len} payload bytes, above this receiver's limit {max_payload}",
        )
    return FrameHeader(dtype, ndim, step_id, key_len, payload_len)


def parse_rest(header: FrameHeader, rest: bytes | memoryview) -> tuple[str, tuple[int, ...]]:
    """The key and shape, checked against the payload length the header claims."""
    try:
        key = bytes(rest[: header.key_len]).decode()
    except UnicodeDecodeError:
        raise DataLossError(None, None, "tensor frame key is not UTF-8") from None
    shape = struct.unpack_from(f"<{header.ndim}Q", rest, header.key_len)
    if header.dtype != np.dtype(object):
        count = 0 if 0 in shape else 1
        for d in shape if count else ():
            count *= d
            if count * header.dtype.itemsize > header.payload_len:
                break  # dims are >= 1 here: the product only grows; stop before it gets huge
        want = count * header.dtype.itemsize
        if want != header.payload_len:
            raise DataLossError(
                None,
                None,
                f"tensor frame {key!r}: shape {shape} of {header.dtype} needs {want} bytes, "
                f"the frame carries {header.payload_len}",
            )
    else:
        count = 0 if 0 in shape else 1
        for d in shape if count else ():
            count *= d
            if count * _LEN.size > header.payload_len:
                raise DataLossError(
                    None,
                    None,
                    f"tensor frame {key!r}: {shape} strings cannot fit in {header.payload_len} bytes",
                )
    return key, shape


def payload_array(header: FrameHeader, shape: tuple[int, ...]) -> np.ndarray:
    """An empty array for a numeric payload to be read into (its size was checked)."""
    return np.empty(shape, dtype=header.dtype)


def strings_from_payload(key: str, shape: tuple[int, ...], payload: bytes | memoryview) -> np.ndarray:
    count = 1
    for d in shape:
        count *= d
    out = np.empty(count, dtype=object)
    pos, end = 0, len(payload)
    for i in range(count):
        if pos + _LEN.size > end:
            raise DataLossError(None, None, f"tensor frame {key!r}: string {i} length runs past the payload")
        (n,) = _LEN.unpack_from(payload, pos)
        pos += _LEN.size
        if n > end - pos:
            raise DataLossError(
                None, None, f"tensor frame {key!r}: string {i} of {n} bytes runs past the payload"
            )
        out[i] = bytes(payload[pos : pos + n])
        pos += n
    if pos != end:
        raise DataLossError(None, None, f"tensor frame {key!r}: {end - pos} bytes after the last string")
    return out.reshape(shape)


def decode_frame(buf: bytes | memoryview, max_payload: int = DEFAULT_MAX_PAYLOAD) -> Frame:
    """A whole frame in memory (the object-store transport) -> its key, step and value. A numeric
    value is a read-only view of ``buf`` (no copy)."""
    view = memoryview(buf).cast("B")
    header = parse_header(view, max_payload)
    start = HEADER.size + header.rest
    if len(view) < start:
        raise DataLossError(None, None, f"tensor frame truncated: {len(view)} bytes, header needs {start}")
    key, shape = parse_rest(header, view[HEADER.size : start])
    if len(view) != start + header.payload_len:
        raise DataLossError(
            None,
            None,
            f"tensor frame {key!r} is {len(view)} bytes, its header claims {start + header.payload_len}",
        )
    payload = view[start:]
    if header.dtype == np.dtype(object):
        value = strings_from_payload(key, shape, payload)
    else:
        value = np.frombuffer(payload, dtype=header.dtype).reshape(shape)
    return Frame(key, header.step_id, value)
