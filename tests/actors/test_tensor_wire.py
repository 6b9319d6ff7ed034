"""Tensor frames (cluster/tensor_wire.py): every dtype round-trips with its shape and bytes, and a
hostile frame is refused with a clear error before anything large is allocated."""

from __future__ import annotations

import struct
import tracemalloc

import numpy as np
import pytest

from antcolony.actors.tensor_wire import (
    HEADER,
    decode_frame,
    encode_frame,
    parse_rendezvous_key,
    rendezvous_key,
)
from antcolony.errors import DataLossError, InvalidArgumentError

KEY = rendezvous_key(
    "/job:worker/replica:0/task:1/device:CPU:0",
    0xABC,
    "/job:ps/replica:0/task:0/device:CPU:0",
    "w/read:0",
    2,
    5,
)
RNG = np.random.default_rng(29)

VALUES = {
    "float32": RNG.standard_normal((3, 4)).astype(np.float32),
    "float64": RNG.standard_normal((2, 3, 2)),
    "float16": RNG.standard_normal(7).astype(np.float16),
    "int8": RNG.integers(-128, 127, (5,), dtype=np.int8),
    "uint8": RNG.integers(0, 255, (2, 2), dtype=np.uint8),
    "int16": RNG.integers(-1000, 1000, (4,), dtype=np.int16),
    "uint16": RNG.integers(0, 60000, (4,), dtype=np.uint16),
    "int32": RNG.integers(-(2**31), 2**31 - 1, (3, 3), dtype=np.int32),
    "uint32": RNG.integers(0, 2**32 - 1, (3,), dtype=np.uint32),
    "int64": RNG.integers(-(2**62), 2**62, (2, 5), dtype=np.int64),
    "uint64": RNG.integers(0, 2**63, (2,), dtype=np.uint64),
    "complex64": (RNG.standard_normal(3) + 1j * RNG.standard_normal(3)).astype(np.complex64),
    "complex128": RNG.standard_normal(3) + 1j * RNG.standard_normal(3),
    "bool": RNG.random((3, 2)) > 0.5,
    "scalar": np.float32(2.5),
    "scalar_int": np.array(7, dtype=np.int64),
    "empty": np.zeros((0, 4), dtype=np.float32),
    "empty_2": np.zeros((3, 0, 2), dtype=np.int32),
    "strided": RNG.standard_normal((6, 8)).astype(np.float32)[::2, 1::3],
    "transposed": RNG.standard_normal((3, 5)).T,
    "big_endian": np.arange(6, dtype=">i4").reshape(2, 3),
    "strings": np.array([[b"alpha", b""], [b"\x00\xff bytes", "unicode \u00e9".encode()]], dtype=object),
    "string_scalar": np.array(b"one", dtype=object),
    "strings_empty": np.zeros((0,), dtype=object),
}


def _join(buffers: list) -> bytes:
    return b"".join(bytes(b) for b in buffers)


@pytest.mark.parametrize("name", sorted(VALUES))
def test_round_trip_keeps_dtype_shape_and_values(name: str) -> None:
    value = np.asarray(VALUES[name])
    frame = decode_frame(_join(encode_frame(KEY, 41, value)))
    assert (frame.key, frame.step_id) == (KEY, 41)
    assert frame.value.shape == value.shape
    assert frame.value.dtype == value.dtype.newbyteorder("=") if value.dtype.kind != "O" else object
    np.testing.assert_array_equal(frame.value, value)


def test_contiguous_payload_is_not_copied() -> None:
    value = RNG.standard_normal(1000)
    _, payload = encode_frame(KEY, 0, value)
    assert np.shares_memory(np.frombuffer(payload, dtype=value.dtype), value)


def test_64_mib_round_trip() -> None:
    value = RNG.integers(0, 255, 64 << 20, dtype=np.uint8)
    frame = decode_frame(_join(encode_frame(KEY, 3, value)))
    np.testing.assert_array_equal(frame.value, value)


def test_rendezvous_key_is_tfs_format_and_parses_back() -> None:
    assert KEY == (
        "/job:worker/replica:0/task:1/device:CPU:0;0000000000000abc;"
        "/job:ps/replica:0/task:0/device:CPU:0;w/read:0;2:5"
    )
    parsed = parse_rendezvous_key(KEY)
    assert (parsed.src_incarnation, parsed.tensor_name, parsed.frame_id, parsed.iter_id) == (
        0xABC,
        "w/read:0",
        2,
        5,
    )
    for bad in ("a;b;c", "a;zz;c;d;0:0", "a;1;c;d;00", ";1;c;d;0:0"):
        with pytest.raises(InvalidArgumentError, match="invalid rendezvous key"):
            parse_rendezvous_key(bad)


@pytest.mark.parametrize(
    "value",
    [np.array(["text"]), np.array([object()], dtype=object), np.array([1, "a"], dtype=object)],
    ids=["unicode_array", "object", "mixed"],
)
def test_unencodable_values_are_refused(value: np.ndarray) -> None:
    with pytest.raises(InvalidArgumentError):
        encode_frame(KEY, 0, value)


def _frame(value: np.ndarray) -> bytearray:
    return bytearray(_join(encode_frame(KEY, 9, value)))


def _set_header(frame: bytearray, **fields: int | bytes) -> bytearray:
    names = ["magic", "version", "flags", "ndim", "dtype", "step_id", "key_len", "reserved", "payload_len"]
    values = dict(zip(names, HEADER.unpack_from(frame), strict=True))
    values.update(fields)
    HEADER.pack_into(frame, 0, *(values[n] for n in names))
    return frame


def _string_length(n: int) -> bytearray:
    """A one-string frame whose length prefix says ``n`` instead of 3."""
    frame = _frame(np.array([b"abc"], dtype=object))
    frame[-11:-3] = struct.pack("<Q", n)
    return frame


F32 = np.arange(12, dtype=np.float32).reshape(3, 4)

HOSTILE = {
    "bad_magic": (lambda: _set_header(_frame(F32), magic=b"NOPE"), "not a tensor frame"),
    "bad_version": (lambda: _set_header(_frame(F32), version=9), "version"),
    "unknown_dtype": (lambda: _set_header(_frame(F32), dtype=250), "unknown dtype number 250"),
    "rank_too_high": (lambda: _set_header(_frame(F32), ndim=65000), "rank"),
    "zero_key": (lambda: _set_header(_frame(F32), key_len=0), "key"),
    "huge_key": (lambda: _set_header(_frame(F32), key_len=2**31), "key"),
    "huge_payload_claim": (
        lambda: _set_header(_frame(F32), payload_len=2**62),
        "above this receiver's limit",
    ),
    "payload_shorter_than_claim": (lambda: _frame(F32)[:-4], "claims"),
    "payload_longer_than_claim": (lambda: _frame(F32) + b"xx", "claims"),
    "shape_disagrees": (lambda: _set_header(_frame(F32), dtype=2), "needs 96 bytes"),
    "huge_shape": (
        lambda: _frame(F32)[: HEADER.size + len(KEY)] + struct.pack("<2Q", 2**40, 2**40) + bytes(48),
        "needs",
    ),
    "truncated_header": (lambda: _frame(F32)[:10], "truncated"),
    "key_not_utf8": (
        lambda: _frame(F32)[: HEADER.size] + b"\xff" * len(KEY) + _frame(F32)[HEADER.size + len(KEY) :],
        "UTF-8",
    ),
    "string_runs_past": (lambda: _string_length(2**40), "runs past"),
    "string_leaves_bytes": (lambda: _string_length(1), "after the last string"),
    "string_count_too_big": (
        lambda: (
            _frame(np.array([b"a"], dtype=object))[: HEADER.size + len(KEY)]
            + struct.pack("<Q", 2**50)
            + bytes(9)
        ),
        "cannot fit",
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_frames_are_refused_before_allocating(name: str) -> None:
    make, match = HOSTILE[name]
    frame = bytes(make())
    tracemalloc.start()
    try:
        with pytest.raises(DataLossError, match=match):
            decode_frame(frame, max_payload=1 << 30)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < (1 << 20), f"decoding a {len(frame)}-byte hostile frame allocated {peak} bytes"
