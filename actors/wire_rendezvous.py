"""A step's rendezvous when some of its partitions run in other task processes.

Keys of transfers that stay in this process go to a :class:`LocalRendezvous` as in any step;
keys of transfers that cross tasks (``routes``: local key -> (peer task, wire key)) become
frames on the tensor wire under the wire key (TF's rendezvous key, with full device names, so
both tasks name a transfer alike) and the step's wire id, drawn by the task that started the
step and shared by every partition of it. A receive or send that fails (the peer died: the
mailbox's UnavailableError names it) aborts the step through ``on_error``.

Frames of one process to one peer leave in the order they were asked for (:class:`PeerSends`),
so a partition's registration precedes its first run request, and a run request its abort.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from antcolony.devices.resources import VarRef
from antcolony.errors import UnimplementedError

from .frames import DEAD
from .rendezvous import LocalRendezvous
from .wire_mailbox import TensorWire

__all__ = ["PeerSends", "WireRendezvous", "from_wire", "to_wire"]

logger = logging.getLogger(__name__)

# A control token on the wire: one int8, 1 when the producer was dead.
_LIVE = np.zeros(1, np.int8)
_DEAD = np.ones(1, np.int8)


def to_wire(key: str, value: Any, control: bool) -> np.ndarray:
    """A value a partition sends, as the array its frame carries."""
    if control:
        return _DEAD if value is DEAD else _LIVE
    if value is DEAD:
        raise UnimplementedError(
            None,
            None,
            f"transfer {key!r}: a dead value (an untaken cond branch) cannot cross tasks; "
            "place the cond and its consumers on one task",
        )
    if isinstance(value, VarRef):
        value = value.read()  # a variable's reference crosses as its value, as in TF
    if not isinstance(value, np.ndarray) and hasattr(value, "get"):
        value = value.get()  # a GPU array (CuPy) goes from host memory
    return np.asarray(value)


def from_wire(value: np.ndarray, control: bool) -> Any:
    if control:
        return DEAD if value.size and value.reshape(-1)[0] else None
    return value


class PeerSends:
    """Sends of one wire, in order per peer: each waits for the one before it to the same peer."""

    def __init__(self, wire: TensorWire) -> None:
        self.wire = wire
        self._tails: dict[str, asyncio.Future[None]] = {}

    def send(
        self, peer: str, key: str, step_id: int, value: np.ndarray, on_error: Callable[[BaseException], None]
    ) -> None:
        before = self._tails.get(peer)
        task = asyncio.ensure_future(self._send_after(before, peer, key, step_id, value, on_error))
        self._tails[peer] = task
        task.add_done_callback(partial(self._done, peer))

    def _done(self, peer: str, task: asyncio.Future[None]) -> None:
        if self._tails.get(peer) is task:
            del self._tails[peer]

    async def _send_after(
        self,
        before: asyncio.Future[None] | None,
        peer: str,
        key: str,
        step_id: int,
        value: np.ndarray,
        on_error: Callable[[BaseException], None],
    ) -> None:
        if before is not None and not before.done():
            await asyncio.wait([before])
        try:
            await self.wire.send(peer, key, step_id, value)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # UnavailableError naming the peer, an encoding error
            on_error(exc)


class WireRendezvous:
    """One step's rendezvous: local keys in a LocalRendezvous, routed keys over the wire."""

    __slots__ = (
        "_local",
        "_routes",
        "_sends",
        "_step_id",
        "_on_error",
        "_on_abort",
        "_receives",
        "_failed",
        "_aborted",
    )

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        routes: dict[str, tuple[str, str, bool]],
        sends: PeerSends,
        step_id: int,
        on_error: Callable[[BaseException], None],
        on_abort: Callable[[BaseException], None],
    ) -> None:
        """``routes``: local key -> (peer task, wire key, is a control token); ``step_id``: the
        step's wire id; ``on_error`` aborts the step (called at most once); ``on_abort`` is told
        when the step was aborted (whatever aborted it)."""
        self._local = LocalRendezvous(loop)
        self._routes = routes
        self._sends = sends
        self._step_id = step_id
        self._on_error = on_error
        self._on_abort = on_abort
        self._receives: list[asyncio.Future[None]] = []
        self._failed = False
        self._aborted = False

    @property
    def step_id(self) -> int:
        return self._step_id

    def fail(self, error: BaseException) -> None:
        """The step fails with ``error`` (once)."""
        if not self._failed:
            self._failed = True
            self._on_error(error)

    def send(self, key: str, value: Any) -> None:
        route = self._routes.get(key)
        if route is None:
            self._local.send(key, value)
            return
        peer, wire_key, control = route
        try:
            frame = to_wire(wire_key, value, control)
        except Exception as exc:
            self.fail(exc)
            return
        self._sends.send(peer, wire_key, self._step_id, frame, self.fail)

    def recv(self, key: str) -> asyncio.Future[Any]:
        route = self._routes.get(key)
        if route is None:
            return self._local.recv(key)
        fut = self._local.recv(key)  # the slot a Recv waits on; filled when the frame arrives
        self._receives.append(asyncio.ensure_future(self._receive(key, route, fut)))
        return fut

    async def _receive(self, key: str, route: tuple[str, str, bool], fut: asyncio.Future[Any]) -> None:
        _, wire_key, control = route
        try:
            value = await self._sends.wire.recv(wire_key, self._step_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.fail(exc)
            return
        if not fut.done():
            fut.set_result(from_wire(value, control))

    def watch(self, receive: asyncio.Future[None]) -> None:
        """Cancel ``receive`` (a task waiting on the wire for this step) when the step aborts."""
        self._receives.append(receive)

    def clear(self) -> None:
        self._local.clear()
        self._receives.clear()

    def abort(self, error: BaseException) -> None:
        if self._aborted:
            return
        self._aborted = self._failed = True
        self._on_abort(error)
        self._local.abort(error)
        receives, self._receives = self._receives, []
        for task in receives:
            task.cancel()
        self._sends.wire.mailbox.abort_step(self._step_id, error)
