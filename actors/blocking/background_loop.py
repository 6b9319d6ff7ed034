"""An event loop on a daemon thread, for blocking (TF1-style) callers of the async runtime.

Every blocking session of the process shares this one loop, so they share one Runtime (device
workers, allocators, services) as async sessions on one loop do. A blocking call from a thread
that is itself running an event loop is refused: it would stall that loop until the step ends.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import os
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from antcolony.errors import BlockingCallInEventLoopError

logger = logging.getLogger(__name__)

T = TypeVar("T")

_SHUTDOWN_TIMEOUT_S = 10.0


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def refuse_in_event_loop(what: str) -> None:
    """Raise if the calling thread runs an event loop: ``what`` would block it."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise BlockingCallInEventLoopError(
        f"{what} blocks until the step finishes and was called from a running event loop, which it would "
        "stall; in async code use `async with ac.Session(graph) as sess:` and `await sess.run(...)`"
    )


class BackgroundLoop:
    """Starts its loop thread on first use (and again in a forked child, whose copy has no thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pid = -1

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if (
                self._loop is None
                or self._pid != os.getpid()
                or not self._thread
                or not self._thread.is_alive()
            ):
                self._start()
            assert self._loop is not None
            return self._loop

    def _start(self) -> None:
        loop = _new_loop()
        started = threading.Event()

        def main() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(started.set)
            try:
                loop.run_forever()
            finally:
                loop.close()

        thread = threading.Thread(target=main, name="antcolony-blocking-sessions", daemon=True)
        thread.start()
        started.wait()
        self._loop, self._thread, self._pid = loop, thread, os.getpid()
        logger.debug("started the event loop thread for blocking sessions")

    def call(self, what: str, fn: Callable[..., Coroutine[Any, Any, T]], *args: Any, **kwargs: Any) -> T:
        """Run ``fn(*args, **kwargs)`` on the loop and wait for its result, as a blocking call."""
        refuse_in_event_loop(what)
        loop = self.loop()
        call = _BlockingCall(fn(*args, **kwargs))
        loop.call_soon_threadsafe(call.start, loop)
        return call.wait(loop)

    def call_sync(self, what: str, fn: Callable[..., T], *args: Any) -> T:
        """Run a plain function on the loop's thread (for session methods that need the loop)."""

        async def apply() -> T:
            return fn(*args)

        return self.call(what, apply)

    def close_soon(self, fn: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        """Start ``fn()`` on the loop without waiting (from any thread; a no-op once the loop is gone)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not thread.is_alive() or self._pid != os.getpid():
            return
        coro = fn()
        try:
            asyncio.run_coroutine_threadsafe(coro, loop)
        except RuntimeError:  # the loop closed meanwhile (interpreter exit)
            coro.close()

    def shutdown(self) -> None:
        """Shut the loop's runtime down and stop the thread (at interpreter exit)."""
        with self._lock:
            loop, thread = self._loop, self._thread
            if loop is None or thread is None or not thread.is_alive() or self._pid != os.getpid():
                return
            self._loop = self._thread = None

        async def close_runtime() -> None:
            from antcolony.actors.runtime import get_runtime

            await get_runtime().shutdown()

        try:
            asyncio.run_coroutine_threadsafe(close_runtime(), loop).result(_SHUTDOWN_TIMEOUT_S)
        except (concurrent.futures.TimeoutError, RuntimeError) as exc:
            logger.warning("the blocking sessions' runtime did not shut down cleanly: %r", exc)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(_SHUTDOWN_TIMEOUT_S)


class _BlockingCall:
    """One blocking call's coroutine, run as a task on the loop, and its outcome, which the
    calling thread waits for on a plain lock: what ``asyncio.run_coroutine_threadsafe`` and its
    concurrent future do, for about half their cost (a blocking ``Session.run`` of a one-node
    graph: 45 -> 18 us hand-off and wait, measured alone), since every TF1-style step pays it."""

    __slots__ = ("coro", "done", "task", "result", "error", "cancelled")

    def __init__(self, coro: Coroutine[Any, Any, Any]) -> None:
        if not asyncio.iscoroutine(coro):
            raise TypeError(f"a blocking call runs a coroutine, not {coro!r}")
        self.coro = coro
        self.done = threading.Lock()
        self.done.acquire()  # released once the outcome is in
        self.task: asyncio.Future[Any] | None = None
        self.result: Any = None
        self.error: BaseException | None = None
        self.cancelled = False  # the caller gave up (interrupted) before the task started

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """On the loop: the coroutine becomes a task."""
        if self.cancelled:
            self.coro.close()
            return
        self.task = loop.create_task(self.coro)
        self.task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Future[Any]) -> None:
        if task.cancelled():
            self.error = concurrent.futures.CancelledError()  # (what the concurrent future raised)
        else:
            self.error = task.exception()
            if self.error is None:
                self.result = task.result()
        self.done.release()

    def cancel(self) -> None:
        """On the loop: the caller was interrupted; the task (its session aborts the step) is
        cancelled, or never started."""
        if self.task is None:
            self.cancelled = True
        else:
            self.task.cancel()

    def wait(self, loop: asyncio.AbstractEventLoop) -> Any:
        try:
            self.done.acquire()
        except BaseException:
            # KeyboardInterrupt while waiting: cancel the step too (its session aborts it).
            loop.call_soon_threadsafe(self.cancel)
            raise
        error = self.error
        if error is not None:
            self.error = None  # (no reference cycle through the traceback)
            raise error
        return self.result


_BACKGROUND = BackgroundLoop()
atexit.register(_BACKGROUND.shutdown)


def background_loop() -> BackgroundLoop:
    return _BACKGROUND
