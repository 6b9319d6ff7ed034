"""``Actor``, the base class users subclass, and ``_Cell``, the kernel state behind each actor.

A cell owns the mailbox (a ``collections.deque``) and the current actor instance. A tell is
stored as the bare message (creating an ``Envelope`` would double the cost of the hot path); an
ask, or a told message that is itself an ``Envelope``, is stored as an ``Envelope``. Sends
append and, if the cell is idle, queue ``_Cell.drain`` on the runtime's ready queue, which one
``loop.call_soon`` callback empties in bounded batches (``Runtime.schedule_drain``); a drain
turn handles at most ``mailbox_batch`` messages, then requeues itself, so no actor starves
the others. Invariant: ``scheduled`` is True while a drain is
scheduled, running, or paused on an awaitable returned by ``on_receive``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar

from antcolony.errors import ActorDeadError, ActorError

from .envelope import Envelope, Stop
from .ref import ActorRef
from .supervision import Directive, handle_failure

if TYPE_CHECKING:
    from .runtime import Runtime

__all__ = ["Actor"]

INLINE_DEPTH = 24
"""Most handlers run inline inside one another (``_Cell.offer``): bounds the Python stack."""

logger = logging.getLogger(__name__)


class Actor:
    """Base class of actors: override the hooks you need.

    The kernel creates instances itself (``Runtime.spawn`` / ``Actor.spawn`` with the class and
    its arguments) and sets ``ref``, ``runtime`` and ``parent`` before ``on_start``. Every hook
    runs on the runtime's event loop, in the actor's own turn: an actor handles one message at
    a time and never concurrently with its other hooks.
    """

    mailbox_batch: ClassVar[int] = 64
    """Most messages handled in one drain turn before yielding to the loop."""

    inline_receive: ClassVar[bool] = False
    """True when ``on_receive`` is synchronous and returns None for every tell, so a sender may
    run it directly in the sender's own turn while this actor is idle (``ActorRef.direct``)."""

    ref: ActorRef
    runtime: Runtime
    parent: ActorRef | None

    def on_start(self) -> None:
        """Run synchronously inside ``spawn`` (or a restart), before the ref is returned.

        If it raises, ``spawn`` raises ``ActorStartError`` chained to the exception and the
        actor never handles a message (on a restart, the actor is stopped instead).
        """

    def on_receive(self, message: Any) -> Any:
        """Handle one message; the return value answers an ``ask``.

        May return an awaitable (e.g. be ``async def``): the kernel then runs it as a task
        tracked by the runtime and handles no further message of this actor until it is done;
        its result answers the ask. An exception answers the ask, or, for a tell, calls
        ``on_failure`` and the parent's ``supervise``. The default logs and ignores the message.
        """
        logger.warning("actor %s got a message it does not handle: %r", self.ref.name, message)
        return None

    def on_stop(self) -> None:
        """Run once on a normal stop (``ref.stop()``, parent stop, runtime shutdown).

        Children are already stopped. Not called when supervision stops the actor after a
        failure. Exceptions are logged and the stop continues.
        """

    def on_failure(self, exc: BaseException) -> None:
        """Run when handling a tell raised ``exc`` (or a child's failure was escalated here).

        Runs before the parent's ``supervise`` decides. Exceptions are logged and ignored.
        """

    def supervise(self, child: ActorRef, exc: BaseException) -> Directive:
        """Return what to do with ``child``, whose handling of a tell raised ``exc``.

        Runs synchronously in the child's failing turn (possibly while this actor awaits an
        async ``on_receive``), so it must only decide. If it raises, the child is stopped.
        The default stops the child.
        """
        return Directive.STOP

    def as_turn(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)``, this actor's code called back from outside its own turns (a timer,
        an engine grant, another actor's turn), as a turn of this actor: no message of it is
        handled meanwhile, not even inline. Exceptions propagate to the caller."""
        self.ref._cell.as_turn(fn, *args)

    def spawn(self, cls: type[Actor], /, *args: Any, name: str | None = None, **kwargs: Any) -> ActorRef:
        """Start a child actor ``cls(*args, **kwargs)`` supervised by this actor."""
        return self.runtime._spawn(cls, args, kwargs, name, self.ref._cell)


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


class _Cell:
    """Kernel state of one actor: mailbox, current instance, place in the supervision tree."""

    __slots__ = (
        "name",
        "ref",
        "runtime",
        "parent",
        "children",
        "factory",
        "instance",
        "mailbox",
        "batch",
        "call_soon",
        "alive",
        "stopping",
        "scheduled",
        "failed",
        "inflight",
        "inflight_reply",
        "stop_future",
        "inline",
    )

    def __init__(self, runtime: Runtime, name: str, parent: _Cell | None, factory: tuple[Any, ...]) -> None:
        self.name = name
        self.ref = ActorRef(self, name)
        self.runtime = runtime
        self.parent = parent
        self.children: dict[str, _Cell] = {}
        self.factory: tuple[Any, ...] | None = factory
        # Typed as always set, which holds whenever it is read: start_instance sets it before any
        # message is handled, and terminate clears it only once the actor is dead. Hot paths
        # (drain) read it with no None check.
        self.instance: Actor = None  # type: ignore[assignment]
        self.mailbox: deque[Any] = deque()
        self.batch: int = max(1, int(factory[0].mailbox_batch))
        self.call_soon = runtime.schedule_drain
        self.alive = True
        self.stopping = False
        self.scheduled = False
        self.failed = False
        self.inflight: asyncio.Task[Any] | None = None
        self.inflight_reply: asyncio.Future[Any] | None = None
        self.stop_future: asyncio.Future[None] | None = None
        self.inline = bool(factory[0].inline_receive)

    def start_instance(self) -> None:
        """Build a fresh instance from the factory and run its ``on_start`` (may raise)."""
        assert self.factory is not None, f"actor {self.name} restarted after it was stopped"
        cls, args, kwargs = self.factory
        instance = cls(*args, **kwargs)
        instance.ref = self.ref
        instance.runtime = self.runtime
        instance.parent = self.parent.ref if self.parent is not None else None
        self.instance = instance
        instance.on_start()

    def drain(self) -> None:
        """Handle up to ``batch`` queued messages; a loop callback scheduled by a send."""
        if not self.alive:
            self.scheduled = False
            return
        mailbox = self.mailbox
        receive = self.instance.on_receive
        handled = 0
        while mailbox and handled < self.batch:
            item = mailbox.popleft()
            handled += 1
            if item.__class__ is Envelope:
                message = item.message
                reply_to = item.reply_to
            else:
                message = item
                reply_to = None
            if message.__class__ is Stop:
                self.runtime._handled += handled
                self.terminate()
                if reply_to is not None and not reply_to.done():
                    reply_to.set_result(None)
                return
            try:
                result = receive(message)
            except (Exception, asyncio.CancelledError) as exc:
                # Drains run as loop callbacks, never inside a task, so a CancelledError here was
                # raised by the handler itself (e.g. a cancelled future's result): a plain failure.
                if reply_to is not None:
                    if not reply_to.done():
                        reply_to.set_exception(exc)
                    continue
                handle_failure(self, exc)
                if not self.alive:
                    self.runtime._handled += handled
                    return
                receive = self.instance.on_receive
                continue
            if result is not None and hasattr(result, "__await__"):
                self.runtime._handled += handled
                self._pause(result, reply_to, message)
                return
            if reply_to is not None and not reply_to.done():
                reply_to.set_result(result)
        self.runtime._handled += handled
        if mailbox and self.alive:  # _end_turn's, inlined: a drain ends most turns
            self.call_soon(self.drain)
        else:
            self.scheduled = False

    def offer(self, message: Any) -> None:
        """Deliver a tell: run the handler now, as this actor's turn inside the sender's, when the
        actor is idle (nothing queued, no turn running or scheduled) and the runtime's inline
        budget and depth allow; otherwise queue it as ``ActorRef.tell`` does. Only for actors
        with ``inline_receive``; ``message`` is never an ``Envelope``.

        Order holds: a message is run inline only when none is waiting before it. A raising
        handler fails this actor (``on_failure`` / supervise), never the sender.
        """
        runtime = self.runtime
        if (
            self.scheduled
            or runtime.inline_left <= 0
            or runtime.inline_depth >= INLINE_DEPTH
            or not self.alive
        ):
            self.ref.tell(message)  # queued, or a dead letter
            return
        self.scheduled = True
        runtime.inline_left -= 1
        runtime.inline_depth += 1
        try:
            try:
                self.instance.on_receive(message)
            except (Exception, asyncio.CancelledError) as exc:
                handle_failure(self, exc)
            runtime._handled += 1
            if self.mailbox and self.alive:
                # What the handler's own sends queued here (replies, Fetched) is handled now, in
                # order, rather than a loop turn later; drain requeues itself past its batch.
                self.drain()
            else:
                self.scheduled = False
        finally:
            runtime.inline_depth -= 1

    def as_turn(self, fn: Callable[..., Any], *args: Any) -> None:
        """``Actor.as_turn``: mark the actor busy around ``fn(*args)`` unless it already is."""
        if self.scheduled:
            fn(*args)
            return
        self.scheduled = True
        try:
            fn(*args)
        finally:
            self._end_turn()

    def _end_turn(self) -> None:
        """A turn is over: the next one is scheduled if messages wait, else the actor is idle."""
        if self.mailbox and self.alive:
            self.call_soon(self.drain)
        else:
            self.scheduled = False

    def _pause(self, awaitable: Any, reply_to: asyncio.Future[Any] | None, message: Any) -> None:
        coro = awaitable if asyncio.iscoroutine(awaitable) else _await(awaitable)
        task = self.runtime._track(coro, f"{self.name}.on_receive({type(message).__name__})")
        self.inflight = task
        self.inflight_reply = reply_to
        task.add_done_callback(self._resume_after)

    def _resume_after(self, task: asyncio.Task[Any]) -> None:
        if task is not self.inflight:
            return  # stale: the actor was stopped or restarted while the handler ran
        reply_to = self.inflight_reply
        self.inflight = self.inflight_reply = None
        if task.cancelled():
            if reply_to is not None:
                reply_to.cancel()
            else:
                logger.warning("async on_receive of %s was cancelled; continuing", self.name)
        elif (exc := task.exception()) is not None:
            if reply_to is not None:
                if not reply_to.done():
                    reply_to.set_exception(exc)
            else:
                handle_failure(self, exc)
        elif reply_to is not None and not reply_to.done():
            reply_to.set_result(task.result())
        if self.alive:
            self.drain()
        else:
            self.scheduled = False

    def _cancel_inflight(self, error: ActorError) -> bool:
        task, reply_to = self.inflight, self.inflight_reply
        if task is None:
            return False
        self.inflight = self.inflight_reply = None
        task.cancel()
        if reply_to is not None and not reply_to.done():
            reply_to.set_exception(error)
        return True

    def restart(self) -> None:
        """Replace the instance after a failure (``Directive.RESTART``); keeps ref and mailbox."""
        for child in reversed(list(self.children.values())):
            child.terminate()
        paused = self._cancel_inflight(ActorError(f"actor {self.name} restarted while handling the message"))
        try:
            self.start_instance()
        except Exception:
            logger.exception("on_start of %s raised during restart; stopping it", self.name)
            self.terminate()
            return
        self.failed = False
        if paused:
            if self.mailbox:
                self.call_soon(self.drain)
            else:
                self.scheduled = False

    def terminate(self) -> None:
        """Stop this actor and its subtree now: children first (depth-first), then this one."""
        order: list[_Cell] = []
        stack = [self]
        while stack:
            cell = stack.pop()
            cell.stopping = True
            order.append(cell)
            stack.extend(reversed(list(cell.children.values())))
        for cell in reversed(order):
            cell._finish()

    def _finish(self) -> None:
        if not self.alive:
            return
        self.alive = False
        self.runtime._forget(self)
        self._cancel_inflight(ActorDeadError(f"actor {self.name} stopped while handling the message"))
        if not self.failed and self.instance is not None:
            try:
                self.instance.on_stop()
            except Exception:
                logger.exception("on_stop of %s raised; the stop continues", self.name)
        # A dead actor's ref must not keep its state alive.
        self.instance = None  # type: ignore[assignment]
        self.factory = None
        dead: list[Any] = []
        mailbox = self.mailbox
        while mailbox:
            item = mailbox.popleft()
            message, reply_to = (item.message, item.reply_to) if item.__class__ is Envelope else (item, None)
            if reply_to is not None:
                if not reply_to.done():
                    reply_to.set_exception(
                        ActorDeadError(f"actor {self.name} stopped before handling {type(message).__name__}")
                    )
            elif message.__class__ is not Stop:
                dead.append(message)
        if dead:
            self.runtime._dead_letters(self.name, dead)
        if self.stop_future is not None and not self.stop_future.done():
            self.stop_future.set_result(None)
