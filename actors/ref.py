"""``ActorRef``: the only handle other code holds on an actor."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from antcolony.errors import ActorDeadError, AskTimeoutError

from .envelope import STOP, Envelope

if TYPE_CHECKING:
    from .actor import _Cell

__all__ = ["ActorRef"]


class ActorRef:
    """A handle to send messages to one actor; it stays valid across restarts.

    All methods must be called from the runtime's event-loop thread. They never block: a send
    appends to the actor's mailbox and, if the actor is idle, schedules its drain with
    ``loop.call_soon``.
    """

    __slots__ = ("_cell", "name")

    def __init__(self, cell: _Cell, name: str) -> None:
        self._cell = cell
        self.name: str = name

    def __repr__(self) -> str:
        state = "alive" if self._cell.alive else "dead"
        return f"<ActorRef {self.name} {state}>"

    @property
    def is_alive(self) -> bool:
        """True until the actor has stopped (a queued stop does not count yet)."""
        return self._cell.alive

    @property
    def direct(self) -> Callable[[Any], None]:
        """A tell for hot paths: for an actor with ``inline_receive`` it runs the handler at
        once, in the caller's turn, when the actor is idle (bounded depth and budget per loop
        callback), else it queues the message as ``tell``. Never for ``Envelope`` messages."""
        cell = self._cell
        return cell.offer if cell.inline else self.tell

    @property
    def mailbox_size(self) -> int:
        """Messages waiting in the actor's mailbox now (read on the loop's thread)."""
        return len(self._cell.mailbox)

    def tell(self, message: Any) -> None:
        """Send ``message`` without waiting for a reply.

        Never raises for a dead actor: the message becomes a dead letter of the runtime.
        """
        cell = self._cell
        if cell.alive:
            # A bare message is a tell; only an Envelope needs wrapping to stay a message.
            cell.mailbox.append(Envelope(message) if message.__class__ is Envelope else message)
            if not cell.scheduled:
                cell.scheduled = True
                cell.call_soon(cell.drain)
        else:
            cell.runtime._dead_letter(self.name, message)

    def ask(self, message: Any, timeout: float | None = None) -> Awaitable[Any]:
        """Send ``message`` and return an awaitable of the reply (``on_receive``'s return value).

        With ``timeout=None`` this is the reply ``asyncio.Future`` itself; otherwise a coroutine
        that raises ``AskTimeoutError`` when no reply came within ``timeout`` seconds. An
        exception raised by the handler is raised to the asker; a dead actor raises
        ``ActorDeadError``.
        """
        cell = self._cell
        future: asyncio.Future[Any] = cell.runtime.loop.create_future()
        if cell.alive:
            cell.mailbox.append(Envelope(message, future))
            if not cell.scheduled:
                cell.scheduled = True
                cell.call_soon(cell.drain)
        else:
            future.set_exception(
                ActorDeadError(f"actor {self.name} is stopped; cannot handle {type(message).__name__}")
            )
        if timeout is None:
            return future
        return self._await_reply(future, message, timeout)

    async def _await_reply(self, future: asyncio.Future[Any], message: Any, timeout: float) -> Any:
        deadline = asyncio.timeout(timeout)
        try:
            async with deadline:
                return await future
        except TimeoutError as exc:
            # A TimeoutError raised by the handler itself is a reply, not our timeout.
            if not deadline.expired():
                raise
            raise AskTimeoutError(
                f"ask to actor {self.name} got no reply to {type(message).__name__} within {timeout}s"
            ) from exc

    def stop(self) -> asyncio.Future[None]:
        """Stop the actor after the messages already in its mailbox; idempotent.

        Children are stopped first, then ``on_stop`` runs; asks still queued fail with
        ``ActorDeadError`` and tells still queued become dead letters. The returned future
        resolves once the actor is stopped (also if it is stopped another way first).
        """
        cell = self._cell
        future = cell.stop_future
        if future is None:
            future = cell.stop_future = cell.runtime.loop.create_future()
            if cell.alive:
                cell.mailbox.append(STOP)
                if not cell.scheduled:
                    cell.scheduled = True
                    cell.call_soon(cell.drain)
            else:
                future.set_result(None)
        return future
