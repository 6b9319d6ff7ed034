"""CRC-32C (Castagnoli), as TFRecord framing uses it, in numpy: no compiled extension needed.

A byte-at-a-time table loop in Python runs at a few MB/s; here the work is vectorised instead.
The raw (no pre/post inversion) reflected CRC is linear over GF(2), and starting it from state 0
ignores leading zero bytes, so:

- a string is left-padded with zeros to whole lanes and cut into equal lanes; all lanes (of many
  strings at once) are advanced one byte column at a time, every lane in one numpy operation (the
  standard initial value 0xFFFFFFFF is folded into each string's first four bytes: for a
  reflected CRC, state s then bytes b0..b3 equals state 0 then bytes b_i ^ byte i of s);
- each string's lane CRCs are then folded left to right with the "advance over one lane of zero
  bytes" map, itself linear and applied as four 256-entry tables: vectorised across strings for
  many short strings, a scalar loop for one long string.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

__all__ = ["crc32c", "crc32c_many", "mask", "unmask"]

_POLY = 0x82F63B78  # Castagnoli, reflected


def _table() -> np.ndarray:
    t = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        t = np.where(t & 1, (t >> 1) ^ np.uint32(_POLY), t >> 1).astype(np.uint32)
    return t


_T = _table()
_T_LIST = _T.tolist()
_LANE = 1024  # bytes per lane for one long string
_SHORT_LANE = 64  # bytes per lane when many strings are batched
_SHORT = 4096  # strings up to this length are batched
_GROUP_BYTES = 1 << 20  # padded bytes per batched group
_lock = threading.Lock()
_advance_tables: dict[int, np.ndarray] = {}


def _raw_rows(rows: np.ndarray) -> np.ndarray:
    """The raw CRC (state 0, no final inversion) of each row of a uint8 matrix."""
    state = np.zeros(rows.shape[0], dtype=np.uint32)
    table = _T
    for k in range(rows.shape[1]):
        state = (state >> 8) ^ table[(state ^ rows[:, k]) & 0xFF]  # a strided column view: no copy
    return state


def _python_crc(data: bytes) -> int:
    crc = 0xFFFFFFFF
    table = _T_LIST
    for b in data:
        crc = (crc >> 8) ^ table[(crc ^ b) & 0xFF]
    return crc ^ 0xFFFFFFFF


def _advance(lane: int) -> np.ndarray:
    """Tables (4, 256) of the linear map 'raw CRC state advanced over ``lane`` zero bytes'."""
    with _lock:
        tables = _advance_tables.get(lane)
        if tables is None:
            state = np.uint32(1) << np.arange(32, dtype=np.uint32)  # the images of the 32 basis bits
            for _ in range(lane):
                state = (state >> 8) ^ _T[state & 0xFF]
            tables = np.zeros((4, 256), dtype=np.uint32)
            v = np.arange(256)
            for k in range(4):
                for bit in range(8):
                    tables[k] ^= np.where((v >> bit) & 1, state[8 * k + bit], 0).astype(np.uint32)
            _advance_tables[lane] = tables
        return tables


def _batched(items: Sequence[bytes], lens: np.ndarray) -> np.ndarray:
    """CRC-32C of strings of 4.._SHORT bytes: every string cut into lanes, all lanes of all
    strings advanced together, then each string's lanes folded (vectorised across strings)."""
    lane = _SHORT_LANE
    n = len(items)
    width = -(-int(lens.max()) // lane) * lane
    buf = np.zeros(n * width, dtype=np.uint8)
    # Each string right-aligned in its row (leading zeros leave a raw CRC from 0 unchanged).
    starts = np.arange(n, dtype=np.int64) * width + width - lens
    first = int(lens[0])
    if (lens == first).all():
        rows = buf.reshape(n, width)
        rows[:, width - first :] = np.frombuffer(b"".join(items), dtype=np.uint8).reshape(n, first)
    elif n <= 4096:
        for r, (b, at) in enumerate(zip(items, starts.tolist())):
            buf[at : (r + 1) * width] = np.frombuffer(b, dtype=np.uint8)
    else:  # many short strings: one scatter from the joined bytes beats a row loop
        offsets = np.cumsum(lens) - lens
        data = np.frombuffer(b"".join(items), dtype=np.uint8)
        buf[np.repeat(starts - offsets, lens) + np.arange(data.size)] = data
    for k in range(4):
        buf[starts + k] ^= 0xFF  # the initial value, folded into the first four bytes
    lanes = width // lane
    parts = _raw_rows(buf.reshape(-1, lane)).reshape(n, lanes)
    t0, t1, t2, t3 = _advance(lane)
    state = parts[:, 0]
    for k in range(1, lanes):
        state = (
            t0[state & 0xFF]
            ^ t1[(state >> 8) & 0xFF]
            ^ t2[(state >> 16) & 0xFF]
            ^ t3[state >> 24]
            ^ parts[:, k]
        )
    return state ^ np.uint32(0xFFFFFFFF)


def crc32c_many(items: Sequence[bytes]) -> np.ndarray:
    """CRC-32C of each byte string (uint32 array), vectorised across strings."""
    out = np.zeros(len(items), dtype=np.uint32)
    if not items:
        return out
    lens = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
    for i in np.flatnonzero((lens < 4) | (lens > _SHORT)).tolist():
        b = items[i]
        out[i] = _python_crc(b) if len(b) < 4 else crc32c(b)
    short = np.flatnonzero((lens >= 4) & (lens <= _SHORT))
    short = short[np.argsort(lens[short], kind="stable")]
    sorted_lens = lens[short]
    start = 0
    while start < short.size:
        # The longest run from ``start`` whose padded matrix stays under _GROUP_BYTES (lengths
        # are sorted, so one long string does not pad many short ones).
        padded = (np.arange(1, short.size - start + 1) * sorted_lens[start:]).astype(np.int64)
        end = start + max(1, int(np.searchsorted(padded, _GROUP_BYTES, side="right")))
        group = short[start:end]
        out[group] = _batched([items[i] for i in group.tolist()], sorted_lens[start:end])
        start = end
    return out


def _lane_for(n: int) -> int:
    """Lane width for one string of ``n`` bytes: about sqrt(n) / 4, a power of two in [16,
    _LANE], so the column steps (one numpy operation each, on every lane) and the lanes folded
    (one Python step each) stay few together. Fixed 1 KiB lanes took 1024 column steps for any
    string: 8-10 ms for an 11.7 KB TensorBoard event, 0.4-0.9 ms with 32-byte lanes (measured
    on a loaded 2-core machine; 128-256 bytes suit 1 MiB)."""
    return min(_LANE, 1 << max(4, (max(n, 1).bit_length() + 1) // 2 - 2))


def crc32c(data: bytes) -> int:
    """CRC-32C of ``data``."""
    n = len(data)
    if n < 4:
        return _python_crc(data)
    lane = _lane_for(n)
    lanes = -(-n // lane)
    buf = np.zeros(lanes * lane, dtype=np.uint8)
    start = lanes * lane - n  # leading zeros do not change a raw CRC started from 0
    buf[start:] = np.frombuffer(data, dtype=np.uint8)
    buf[start : start + 4] ^= 0xFF
    parts = _raw_rows(buf.reshape(lanes, lane)).tolist()
    t0, t1, t2, t3 = (t.tolist() for t in _advance(lane))
    state = 0
    for p in parts:
        state = t0[state & 0xFF] ^ t1[state >> 8 & 0xFF] ^ t2[state >> 16 & 0xFF] ^ t3[state >> 24] ^ p
    return state ^ 0xFFFFFFFF


def mask(crc: int | np.ndarray) -> int | np.ndarray:
    """TFRecord's masked CRC: rotate right by 15 bits and add 0xa282ead8 (mod 2**32)."""
    if isinstance(crc, np.ndarray):
        c = crc.astype(np.uint64)
        return ((((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF).astype(np.uint32)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def unmask(masked: int) -> int:
    rot = (masked - 0xA282EAD8) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF
