"""The per-session state of TF1's queues and readers (graph/ops/queues.py, readers.py).

A ``QueueResource`` holds tuples of component arrays under a condition variable. A dequeue waits
on its worker thread until enough elements arrive (a RandomShuffleQueue also keeps
``min_after_dequeue`` back until closed), or the queue is closed (then OutOfRangeError when too
few are left, as TF), or the session closes (CancelledError). Enqueues never wait: the capacity
is kept by ``QueueRunner`` threads, which wait for room outside any step (``wait_for_room``)
before running their enqueue op. A waiting kernel holds a CPU worker thread, so a producer's
step must not wait too: a runner-driven enqueue then never holds one, and a reader waits only
while its file-name queue is open and empty.

A ``ReaderResource`` reads records of its current file and takes the next file name from a queue
when the file is done; keys are ``"<file>:<n>"`` (line number, or the record's byte offset for
TFRecords) and the file name for a whole-file reader, as TF writes them.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from antcolony.errors import CancelledError, InvalidArgumentError, OutOfRangeError

from .tfrecord import read_records

__all__ = ["QueueResource", "ReaderResource", "queues_of"]

_POLL = 0.1  # seconds between checks of a runner's stop request while it waits for room


class QueueResource:
    #: counted as one element when a node weighs its inputs (as a variable reference)
    size = 1

    def __init__(
        self, name: str, capacity: int, min_after_dequeue: int = 0, rng: Any = None, pads: bool = False
    ) -> None:
        self.name = name
        self.pads = pads  # a PaddingFIFOQueue: batches pad each component to their longest
        self.capacity = capacity
        self._keep = min_after_dequeue
        self._rng = rng  # None: first in, first out
        self._items: collections.deque[tuple[Any, ...]] = collections.deque()
        self._cond = threading.Condition()
        self.closed = False
        self._released = False

    def __len__(self) -> int:
        return len(self._items)

    def enqueue(self, elements: list[tuple[Any, ...]], op: Any) -> None:
        with self._cond:
            if self.closed or self._released:
                raise CancelledError(None, op, f"Queue '{self.name}' is closed.")
            self._items.extend(elements)
            self._cond.notify_all()

    def wait_for_room(self, should_stop: Callable[[], bool]) -> bool:
        """Until the queue has room (True), or is closed or ``should_stop()`` (False)."""
        with self._cond:
            while len(self._items) >= self.capacity:
                if self.closed or self._released or should_stop():
                    return False
                self._cond.wait(_POLL)
            return not (self.closed or self._released)

    def dequeue(self, n: int, op: Any, up_to: bool = False) -> list[tuple[Any, ...]]:
        with self._cond:
            while True:
                if self._released:
                    raise CancelledError(None, op, f"Queue '{self.name}': the session was closed")
                have = len(self._items)
                if self.closed:
                    if have >= n or (up_to and have > 0):
                        return self._take(min(n, have))
                    raise OutOfRangeError(
                        None,
                        op,
                        f"{op.name}: Queue '{self.name}' is closed and has insufficient elements "
                        f"(requested {n}, current size {have})",
                    )
                if have >= n + self._keep:
                    return self._take(n)
                self._cond.wait()

    def _take(self, n: int) -> list[tuple[Any, ...]]:
        if self._rng is None:
            out = [self._items.popleft() for _ in range(n)]
        else:
            out = []
            for _ in range(n):
                i = int(self._rng.integers(len(self._items)))
                self._items.rotate(-i)
                out.append(self._items.popleft())
                self._items.rotate(i)
        self._cond.notify_all()
        return out

    def close(self, cancel_pending_enqueues: bool = False) -> None:
        # No enqueue ever waits here, so there is none to cancel; runners waiting for room see
        # ``closed`` and stop.
        with self._cond:
            self.closed = True
            self._cond.notify_all()

    def release(self) -> None:
        """The session closed: waiting dequeues end with CancelledError."""
        with self._cond:
            self._released = True
            self._cond.notify_all()


class ReaderResource:
    size = 1

    def __init__(self, kind: str, skip_header_lines: int = 0, compression: str = "") -> None:
        self.kind = kind
        self._skip = skip_header_lines
        self._compression = compression
        self._lock = threading.Lock()
        self._records: Iterator[tuple[bytes, bytes]] | None = None

    def read(self, queue: QueueResource, op: Any) -> tuple[bytes, bytes]:
        with self._lock:
            while True:
                if self._records is None:
                    (name,) = queue.dequeue(1, op)[0]
                    name = name.item() if isinstance(name, np.ndarray) else name
                    self._records = self._open(name.decode() if isinstance(name, bytes) else str(name))
                record = next(self._records, None)
                if record is not None:
                    return record
                self._records = None

    def _open(self, path: str) -> Iterator[tuple[bytes, bytes]]:
        try:
            if self.kind == "whole":
                with open(path, "rb") as f:
                    yield path.encode(), f.read()
            elif self.kind == "tfrecord":
                offset = 0
                for record in read_records(path, self._compression):
                    yield f"{path}:{offset}".encode(), record
                    offset += len(record) + 16  # length, its CRC, the data, its CRC
            else:
                with open(path, "rb") as f:
                    for number, line in enumerate(f, 1):
                        if number > self._skip:
                            yield f"{path}:{number}".encode(), line.rstrip(b"\n").rstrip(b"\r")
        except FileNotFoundError:
            raise InvalidArgumentError(
                None, None, f"{path}: no such file (named in the reader's queue)"
            ) from None

    def release(self) -> None:
        self._records = None


def queues_of(resources: Any) -> dict[str, Any]:
    """The session's queue and reader table (``SessionResources.queues``)."""
    table: dict[str, Any] = resources.queues
    return table


def stacked(
    elements: list[tuple[Any, ...]], shapes: list[Any], dtypes: list[Any], pad: bool = False
) -> tuple[np.ndarray, ...]:
    """Dequeued elements as one array per component, the batch axis first; with ``pad``, each
    component padded at the end of every axis to the batch's longest (zeros, b"" for strings)."""
    if elements and pad:
        return tuple(_padded([e[i] for e in elements], d) for i, d in enumerate(dtypes))
    if elements:
        return tuple(np.stack([e[i] for e in elements]).astype(d, copy=False) for i, d in enumerate(dtypes))
    return tuple(np.zeros((0, *(s or ())), dtype=d) for s, d in zip(shapes, dtypes))


def _padded(parts: list[Any], dtype: Any) -> np.ndarray:
    arrays = [np.asarray(p) for p in parts]
    longest = tuple(max(sizes) for sizes in zip(*(a.shape for a in arrays)))
    out = np.full((len(arrays), *longest), b"" if np.dtype(dtype) == object else 0, dtype=dtype)
    for i, a in enumerate(arrays):
        region: tuple[int | slice, ...] = (i, *(slice(0, n) for n in a.shape))
        out[region] = a
    return out
