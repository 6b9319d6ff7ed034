"""Rendezvous: where a Send leaves a value under a key and the matching Recv picks it up.

One per step. The in-process version is a dict of futures on the event loop; the interface
(``send``, ``recv``, ``abort``) is all partitions rely on, so a distributed rendezvous (e.g. Ray's
object store) can replace it.
"""

from __future__ import annotations

import asyncio
from typing import Any


class LocalRendezvous:
    """Keys -> futures, created by whichever side comes first. Loop-thread only."""

    __slots__ = ("_loop", "_slots", "_error")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._slots: dict[str, asyncio.Future[Any]] = {}
        self._error: BaseException | None = None

    def _slot(self, key: str) -> asyncio.Future[Any]:
        fut = self._slots.get(key)
        if fut is None:
            fut = self._slots[key] = self._loop.create_future()
            if self._error is not None:
                fut.set_exception(self._error)
        return fut

    def send(self, key: str, value: Any) -> None:
        fut = self._slot(key)
        if fut.done():
            if self._error is None:
                raise RuntimeError(f"rendezvous key {key!r} was sent twice in one step")
            return
        fut.set_result(value)

    def recv(self, key: str) -> asyncio.Future[Any]:
        return self._slot(key)

    def clear(self) -> None:
        """Drop every slot (the step completed: all sends were received), freeing the values."""
        self._slots.clear()

    def abort(self, error: BaseException) -> None:
        """Fail every pending receive and drop every slot; later sends are dropped."""
        self._error = error
        slots, self._slots = self._slots, {}
        # Values sent and not yet received are dropped now (they may be device tensors), and a
        # pending receive's callback (which references the step) runs and goes: nothing keeps
        # the step in a cycle step -> rendezvous -> future -> callback -> step.
        for fut in slots.values():
            if not fut.done():
                fut.set_exception(error)
                fut.exception()  # mark retrieved: an aborted transfer is not an unhandled error


class _NoRendezvous:
    """The rendezvous of a single-partition step: nothing is ever sent across partitions."""

    __slots__ = ()

    def clear(self) -> None:
        return None

    def abort(self, error: BaseException) -> None:
        return None


NO_RENDEZVOUS = _NoRendezvous()
