"""Reading TensorBoard event files back in tests: tensorboardX has no reader, so the TFRecord
framing is parsed here (length, masked CRC32C of the length, data, masked CRC32C of the data)
and each record is parsed with tensorboardX's Event proto."""

from __future__ import annotations

import struct

from tensorboardX.proto import event_pb2
from tensorboardX.record_writer import masked_crc32c


def read_events(path: str) -> list:
    """Every Event in a TFRecord file, checking both CRCs of each record."""
    events = []
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos < len(data):
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (header_crc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        assert header_crc == masked_crc32c(header)
        body = data[pos + 12:pos + 12 + length]
        (body_crc,) = struct.unpack("<I", data[pos + 12 + length:pos + 16 + length])
        assert body_crc == masked_crc32c(body)
        events.append(event_pb2.Event.FromString(body))
        pos += 16 + length
    return events
