"""The tensor wire over Ray's object store: the payload goes by ``ray.put``, the frame's header
(key, step, dtype, shape) by an actor call to the receiving task.

The sender puts the array's raw bytes (a uint8 view: no copy before Ray's own into shared
memory) and calls the peer task actor's ``wire_deliver(head, [ref])`` (the ref inside a list so
Ray hands it over unresolved). The receiver checks the header as the TCP wire does, fetches the
payload (from shared memory on the same node, without a copy: the value is then read-only),
checks it is exactly the bytes the header claims, and views it as the tensor.

Ray's own (de)serialisation carries the payload object here: a task that can run actors on the
cluster is trusted as Ray trusts it. What the receiver accepts is still only a uint8 array of the
announced length; anything else is a DataLossError.

A peer's death is seen through a call held open on it (``wire_hold``): Ray fails that call when
the actor dies, and every receive waiting on the task fails with UnavailableError naming it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import numpy as np

from antcolony.actors.tensor_wire import (
    DEFAULT_MAX_PAYLOAD,
    HEADER,
    encode_frame,
    parse_header,
    parse_rest,
    strings_from_payload,
)
from antcolony.actors.wire_mailbox import TensorWire, task_name
from antcolony.errors import DataLossError, UnavailableError

from .ray_support import require_ray

__all__ = ["RayWire"]

logger = logging.getLogger(__name__)


class RayWire(TensorWire):
    """One task's end of the object-store wire; peers are Ray actor handles of task actors."""

    def __init__(self, task: str, max_payload: int = DEFAULT_MAX_PAYLOAD) -> None:
        super().__init__(task)
        self.max_payload = max_payload
        self._ray = require_ray()
        self._peers: dict[str, Any] = {}
        self._watches: dict[str, asyncio.Task[None]] = {}

    def add_peer(self, peer: str, handle: Any, watch: bool = True) -> None:
        """Task ``peer`` is the actor ``handle`` (with ``wire_deliver`` and ``wire_hold``)."""
        peer = task_name(peer)
        self._peers[peer] = handle
        if watch and peer not in self._watches:
            self._watches[peer] = asyncio.ensure_future(self._watch(peer, handle))

    async def _watch(self, peer: str, handle: Any) -> None:
        try:
            await handle.wire_hold.remote()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # Ray's actor-died errors differ by version; all mean gone
            self.mailbox.peer_down(peer, f"its Ray actor died ({type(exc).__name__})")

    async def send(self, peer: str, key: str, step_id: int, value: np.ndarray) -> None:
        peer = task_name(peer)
        handle = self._peers.get(peer)
        if handle is None:
            raise UnavailableError(
                None, None, f"task {peer} is not a known peer of {self.task}; add_peer() it first"
            )
        head, payload = encode_frame(key, step_id, value)
        ref = self._ray.put(np.frombuffer(payload, dtype=np.uint8)) if len(payload) else None
        try:
            await handle.wire_deliver.remote(bytes(head), [ref])
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if isinstance(exc, DataLossError):
                raise
            raise UnavailableError(
                None,
                None,
                f"task {peer} is unavailable: delivering {key!r} failed ({type(exc).__name__}: {exc})",
            ) from exc

    async def deliver(self, head: bytes, refs: list[Any]) -> None:
        """The receiving side of a send: validate, fetch the payload, hand it to the mailbox."""
        header = parse_header(head, self.max_payload)
        if len(head) != HEADER.size + header.rest:
            raise DataLossError(
                None,
                None,
                f"tensor frame header of {len(head)} bytes, its fields claim {HEADER.size + header.rest}",
            )
        key, shape = parse_rest(header, memoryview(head)[HEADER.size :])
        if not isinstance(refs, list) or len(refs) != 1:
            raise DataLossError(None, None, f"tensor frame {key!r} came without its payload reference")
        payload: Any = b""
        if header.payload_len:
            payload = await refs[0]
            if not (isinstance(payload, np.ndarray) and payload.dtype == np.uint8 and payload.ndim == 1):
                raise DataLossError(None, None, f"tensor frame {key!r}: the payload is not raw bytes")
            if payload.nbytes != header.payload_len:
                raise DataLossError(
                    None,
                    None,
                    f"tensor frame {key!r}: payload of {payload.nbytes} bytes, header claims {header.payload_len}",
                )
        if header.dtype == np.dtype(object):
            value = strings_from_payload(key, shape, memoryview(payload))
        else:
            value = np.frombuffer(payload, dtype=header.dtype).reshape(shape)
        self.mailbox.deliver(header.step_id, key, value)

    async def close(self) -> None:
        for watch in self._watches.values():
            watch.cancel()
        for watch in self._watches.values():
            with contextlib.suppress(asyncio.CancelledError):
                await watch
        self._watches.clear()
        for peer in self._peers:
            self.mailbox.peer_down(peer, f"the wire of {self.task} is closed")
