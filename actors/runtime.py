"""``Runtime``: one per event loop; the root guardian of the actor tree, task and service owner."""

from __future__ import annotations

import asyncio
import itertools
import logging
import reprlib
import time
import weakref
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from antcolony.errors import ActorError, ActorStartError

from .actor import Actor, _Cell
from .ref import ActorRef

__all__ = ["Runtime", "RuntimeStats", "get_runtime"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

clock = time.perf_counter  # the clock of ``yield_due``

_MIN_CLEANUP_SECONDS = 0.5
"""Time granted to cancelled tasks and ``aclose`` even when the shutdown timeout is used up."""


@dataclass(frozen=True, slots=True)
class RuntimeStats:
    """A snapshot of a runtime's counters (no I/O)."""

    actors_alive: int
    messages_handled: int
    dead_letter_count: int
    tasks_pending: int


class Runtime:
    """Owns the actors, tasks and extensions of one event loop, and shuts them down in order.

    The runtime is the root guardian: top-level actors are its children, and when one of them
    fails (or a failure escalates to it) it logs the error and stops that actor. Use it from the
    loop's thread only. Usually reached through ``get_runtime()``.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.loop: asyncio.AbstractEventLoop = loop if loop is not None else asyncio.get_running_loop()
        # (recipient, description): a description only, so an undelivered kernel result or step
        # does not keep its tensors (device memory) alive after the step ended.
        self.dead_letters: deque[tuple[str, str]] = deque(maxlen=100)
        self.dead_letter_count: int = 0
        self._handled = 0
        self._cells: dict[str, _Cell] = {}
        self._top: dict[str, _Cell] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._extensions: dict[str, Any] = {}
        self._creating: set[str] = set()
        self._ids = itertools.count(1)
        self._closing = False
        # True once ``shutdown`` has finished; read-only outside this class. A plain attribute,
        # not a property: ``Session.run`` reads it every step.
        self.closed = False
        self._extensions_closed = False
        self._shutdown_done: asyncio.Future[None] | None = None
        self._ready: deque[Callable[[], None]] = deque()
        self._dispatch_pending = False
        # Handlers run inline by ``_Cell.offer``: left in this loop callback, and nested now.
        self.inline_left = self.inline_budget
        self.inline_depth = 0
        self.yielded_at = 0.0  # when the loop last turned for ``yield_due``

    def __repr__(self) -> str:
        state = "closed" if self.closed else "closing" if self._closing else "open"
        return f"<Runtime {state} actors={len(self._cells)} tasks={len(self._tasks)}>"

    def spawn(self, cls: type[Actor], /, *args: Any, name: str | None = None, **kwargs: Any) -> ActorRef:
        """Start a top-level actor ``cls(*args, **kwargs)``; raises ``ActorStartError`` if its
        ``on_start`` raises, ``ActorError`` once shutdown has begun."""
        return self._spawn(cls, args, kwargs, name, None)

    def schedule_drain(self, drain: Callable[[], None]) -> None:
        """Queue an actor's drain on the runtime's ready queue (the cells' ``call_soon``).

        One loop callback (``_dispatch``) runs many ready drains in a row instead of one loop turn
        per actor hop, and yields to the loop after ``dispatch_budget`` drains, so other tasks and
        I/O still run between batches.
        """
        self._ready.append(drain)
        if not self._dispatch_pending:
            self._dispatch_pending = True
            self.loop.call_soon(self._dispatch)

    def yield_due(self) -> bool:
        """True at most once per ``yield_s``: a caller whose work completed without awaiting
        (a step run entirely inline) then yields to the loop, so a tight loop of such calls
        never starves other tasks."""
        now = clock()
        if now - self.yielded_at < self.yield_s:
            return False
        self.yielded_at = now
        self.inline_left = self.inline_budget  # the loop turns next: a new callback's budget
        return True

    yield_s = 0.001
    dispatch_budget = 256
    inline_budget = 1024
    """Most handlers run inline (``_Cell.offer``) or nodes run by segments per dispatch
    callback: past it the callback ends, so the loop turns at least that often."""

    def _dispatch(self) -> None:
        ready = self._ready
        budget = self.dispatch_budget
        self.inline_left = self.inline_budget
        try:
            while ready and budget and self.inline_left > 0:
                ready.popleft()()
                budget -= 1
        finally:
            if ready:
                self.loop.call_soon(self._dispatch)
            else:
                self._dispatch_pending = False

    def stats(self) -> RuntimeStats:
        """Current counters."""
        return RuntimeStats(len(self._cells), self._handled, self.dead_letter_count, len(self._tasks))

    def create_task(self, coro: Coroutine[Any, Any, T], *, name: str | None = None) -> asyncio.Task[T]:
        """Run ``coro`` as a task that ``shutdown`` cancels and awaits.

        A task that fails with nobody retrieving its exception is reported by asyncio's
        "Task exception was never retrieved" handler once dropped.
        """
        if self.closed:
            coro.close()
            raise ActorError("runtime is shut down; cannot create a task")
        return self._track(coro, name)

    def extension(self, key: str, factory: Callable[[Runtime], T]) -> T:
        """The runtime's singleton for ``key``, created with ``factory(self)`` on first use.

        Shutdown closes extensions in reverse creation order (``await obj.aclose()`` if present,
        else ``obj.close()``), so one created inside another's factory outlives it.
        """
        try:
            return self._extensions[key]
        except KeyError:
            pass
        if self._extensions_closed:
            raise ActorError(f"runtime is shut down; cannot create extension {key!r}")
        if key in self._creating:
            raise ActorError(f"extension {key!r} depends on itself")
        self._creating.add(key)
        try:
            obj = factory(self)
        finally:
            self._creating.discard(key)
        self._extensions[key] = obj
        return obj

    async def shutdown(self, timeout: float = 5.0) -> None:
        """Stop every actor, cancel and await tracked tasks, close extensions; idempotent.

        Top-level actors get an ordered stop in reverse spawn order (children stop before their
        parent); those not stopped within ``timeout`` seconds are stopped at once. Must not be
        awaited from inside an actor's handler, since that actor is stopped too.
        """
        if self._shutdown_done is not None:
            await asyncio.shield(self._shutdown_done)
            return
        self._shutdown_done = self.loop.create_future()
        self._closing = True
        deadline = self.loop.time() + timeout
        try:
            await self._stop_actors(deadline)
            await self._cancel_tasks(deadline)
            await self._close_extensions(deadline)
            await self._cancel_tasks(deadline)
        finally:
            for cell in reversed(list(self._top.values())):
                cell.terminate()
            for task in self._tasks:
                task.cancel()
            if self._extensions:
                logger.warning("shutdown interrupted; extensions left open: %s", list(self._extensions))
            self.closed = True
            if _RUNTIMES.get(self.loop) is self:
                del _RUNTIMES[self.loop]
            self._shutdown_done.set_result(None)

    async def _stop_actors(self, deadline: float) -> None:
        try:
            async with asyncio.timeout_at(deadline):
                for cell in reversed(list(self._top.values())):
                    # shield: a timeout must not cancel the actor's shared stop future
                    await asyncio.shield(cell.ref.stop())
        except TimeoutError:
            logger.warning("shutdown: %d actors did not stop in time; stopping them now", len(self._cells))
        for cell in reversed(list(self._top.values())):
            cell.terminate()

    async def _cancel_tasks(self, deadline: float) -> None:
        current = asyncio.current_task()
        for _ in range(3):  # cancelled tasks may create a few more while cleaning up
            tasks = [task for task in self._tasks if task is not current and not task.done()]
            if not tasks:
                return
            for task in tasks:
                task.cancel()
            wait = max(deadline - self.loop.time(), _MIN_CLEANUP_SECONDS)
            done, pending = await asyncio.wait(tasks, timeout=wait)
            for task in done:
                if not task.cancelled() and task.exception() is not None:
                    logger.error("task %s failed while cancelled", task.get_name(), exc_info=task.exception())
            if pending:
                logger.warning("shutdown: tasks ignored cancellation: %s", [t.get_name() for t in pending])
                return

    async def _close_extensions(self, deadline: float) -> None:
        self._extensions_closed = True
        for key, obj in reversed(list(self._extensions.items())):
            try:
                aclose = getattr(obj, "aclose", None)
                if callable(aclose):
                    async with asyncio.timeout(max(deadline - self.loop.time(), _MIN_CLEANUP_SECONDS)):
                        await aclose()
                elif callable(close := getattr(obj, "close", None)):
                    close()
            except Exception:
                logger.exception("shutdown: closing extension %r failed", key)
        self._extensions.clear()

    def _spawn(
        self,
        cls: type[Actor],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        name: str | None,
        parent: _Cell | None,
    ) -> ActorRef:
        if self.closed or (parent is None and self._closing):
            raise ActorError(f"runtime is shut down; cannot spawn {getattr(cls, '__name__', cls)!s}")
        if parent is not None and (not parent.alive or parent.stopping):
            raise ActorError(f"actor {parent.name} is stopped; cannot spawn a child {cls.__name__}")
        if not (isinstance(cls, type) and issubclass(cls, Actor)):
            raise TypeError(f"spawn needs an Actor subclass, got {cls!r}")
        name = self._unique_name(cls, name)
        cell = _Cell(self, name, parent, (cls, args, kwargs))
        self._cells[name] = cell
        (parent.children if parent is not None else self._top)[name] = cell
        try:
            cell.start_instance()
        except Exception as exc:
            cell.failed = True
            cell.terminate()
            raise ActorStartError(f"actor {name} ({cls.__name__}) failed to start: {exc!r}") from exc
        return cell.ref

    def _unique_name(self, cls: type[Actor], name: str | None) -> str:
        candidate = name if name is not None else f"{cls.__name__}-{next(self._ids)}"
        while candidate in self._cells:
            candidate = f"{name or cls.__name__}-{next(self._ids)}"
        return candidate

    def _forget(self, cell: _Cell) -> None:
        if self._cells.get(cell.name) is cell:
            del self._cells[cell.name]
        siblings = cell.parent.children if cell.parent is not None else self._top
        if siblings.get(cell.name) is cell:
            del siblings[cell.name]

    def _dead_letter(self, name: str, message: Any) -> None:
        self.dead_letter_count += 1
        self.dead_letters.append((name, describe_message(message)))
        logger.warning("dead letter: %s for stopped actor %s", type(message).__name__, name)

    def _dead_letters(self, name: str, messages: list[Any]) -> None:
        """Tells still queued when ``name`` stopped: one log line for the lot."""
        self.dead_letter_count += len(messages)
        self.dead_letters.extend((name, describe_message(message)) for message in messages[-100:])
        kinds = sorted({type(message).__name__ for message in messages})
        logger.warning(
            "%d dead letters (%s) queued for stopped actor %s", len(messages), ", ".join(kinds), name
        )

    def _track(self, coro: Coroutine[Any, Any, T], name: str | None) -> asyncio.Task[T]:
        task = self.loop.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


_SCALARS = (str, bytes, int, float, complex, bool, type(None))
_short = reprlib.Repr()
_short.maxstring = _short.maxother = 60


def describe_message(message: Any) -> str:
    """A short text naming a dead letter that keeps no reference to it: plain scalars by their
    (bounded) repr, anything else by its type and the step it belongs to, if any."""
    if isinstance(message, _SCALARS):
        return _short.repr(message)
    kind = type(message).__name__
    # an Input is a tuple (tag, slot, value) whose tag is a step or a loop frame
    carrier = message[0] if isinstance(message, tuple) and message else message
    step = getattr(carrier, "step", None)
    step_id = getattr(step, "id", None)
    return f"{kind}(step {step_id})" if isinstance(step_id, int) else kind


_RUNTIMES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Runtime] = weakref.WeakKeyDictionary()


def get_runtime(loop: asyncio.AbstractEventLoop | None = None) -> Runtime:
    """The runtime of ``loop`` (default: the running loop), created on first use or after close."""
    if loop is None:
        loop = asyncio.get_running_loop()
    runtime = _RUNTIMES.get(loop)
    if runtime is None or runtime.closed:
        # A runtime references its loop, so an entry never expires by itself: drop closed loops.
        for stale in [key for key in list(_RUNTIMES.keys()) if key.is_closed()]:
            _RUNTIMES.pop(stale, None)
        runtime = _RUNTIMES[loop] = Runtime(loop)
    return runtime
