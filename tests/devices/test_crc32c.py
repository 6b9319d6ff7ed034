"""CRC-32C (devices/data/crc32c.py) against a bit-at-a-time reference and the standard check
value, over the lengths where its lane layout changes (single strings and batches)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from antcolony.devices.data.crc32c import crc32c, crc32c_many


def _reference(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def test_the_standard_check_value() -> None:
    assert crc32c(b"123456789") == 0xE3069283


def test_lengths_around_every_lane_width() -> None:
    rng = np.random.default_rng(0)
    for n in (0, 1, 3, 4, 5, 15, 16, 17, 33, 255, 257, 1023, 4095, 4096, 4097, 11733, 70001):
        data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        assert crc32c(data) == _reference(data), n
        assert int(crc32c_many([data, data[: n // 2]])[0]) == _reference(data), n


@settings(max_examples=40, deadline=None)
@given(st.lists(st.binary(max_size=5000), max_size=6))
def test_batches_match_one_at_a_time(items: list[bytes]) -> None:
    assert (
        [int(c) for c in crc32c_many(items)] == [crc32c(b) for b in items] == [_reference(b) for b in items]
    )
