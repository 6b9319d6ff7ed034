"""Reading TensorBoard event files back in tests: tensorboardX has no reader, so the TFRecord
framing is parsed here (little-endian uint64 length, masked CRC32C of the length bytes, the data,
masked CRC32C of the data) and each record is parsed with tensorboardX's Event proto. The CRC is
computed here too, not with the writer's own function, so a wrong checksum would show."""

from __future__ import annotations

import struct

from tensorboardX.proto import event_pb2


def _table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1  # Castagnoli polynomial, reflected
        table.append(c)
    return table


_TABLE = _table()


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """TFRecord's mask: rotate right by 15 bits and add a constant."""
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # the standard CRC-32C check value


def read_events(path: str) -> list:
    """Every Event in a TFRecord file, checking both CRCs of each record."""
    events = []
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos < len(data):
        header = data[pos : pos + 8]
        (length,) = struct.unpack("<Q", header)
        (header_crc,) = struct.unpack("<I", data[pos + 8 : pos + 12])
        assert header_crc == masked_crc32c(header)
        body = data[pos + 12 : pos + 12 + length]
        (body_crc,) = struct.unpack("<I", data[pos + 12 + length : pos + 16 + length])
        assert body_crc == masked_crc32c(body)
        events.append(event_pb2.Event.FromString(body))
        pos += 16 + length
    return events
