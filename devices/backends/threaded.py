"""A stream driven by one long-lived thread of its own, fed through a queue.

The loop enqueues a launch with one ``SimpleQueue.put`` (no future, no closure); the thread
takes launches in order and runs them back to back, so the queue never idles while a
completion travels to the loop. Both backends use it: the simulated stream runs the kernel on
the thread, the CUDA stream enqueues it on its CUDA stream from there (CuPy's current stream and
device are thread-local).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any

from .base import GpuBackend, OnDone, Stream

logger = logging.getLogger(__name__)

_STOP = None  # a launch is a list, so None never collides
#: How often a stream thread blocked on another stream's event checks that it is not closed.
_WAIT_POLL_S = 0.1


class ThreadedStream(Stream):
    """A ``Stream`` whose launches run ``_execute(box)`` on its own thread, in order.

    ``box`` is the launch as a list ``[fn, args, token]``: ``_execute`` empties it, so the inputs
    are gone before it reports the launch with ``_complete`` (there or later, from another
    thread).
    After ``close`` the thread ends once it finishes the launch it is running; launches still
    queued are dropped unreported, as when a CUDA stream is destroyed with work pending.
    """

    thread_prefix = "gpu"

    def __init__(
        self, backend: GpuBackend, device: int, label: str, loop: asyncio.AbstractEventLoop, on_done: OnDone
    ) -> None:
        super().__init__(backend, device, label, loop, on_done)
        # a launch (a list), an event marker run on the thread (a callable), or _STOP
        self._queue: SimpleQueue[list[Any] | Callable[[], Any] | None] = SimpleQueue()
        self._closed = False
        # Daemon: a stream never closed (a runtime torn down abruptly) must not hold the
        # interpreter open; close() is the orderly way out.
        self._thread = threading.Thread(
            target=self._serve, name=f"{self.thread_prefix}{device}-{label}", daemon=True
        )
        self._thread.start()

    def launch(self, fn: Callable[..., Any], args: list[Any], token: Any) -> None:
        self._queue.put([fn, args, token])

    def _on_thread(self, fn: Callable[[], Any]) -> None:
        """Run ``fn()`` on this stream's thread once it reaches this point of its queue (event
        markers: ``record_event`` / ``wait_event`` of the subclasses)."""
        self._queue.put(fn)

    def _wait(self, event: threading.Event) -> None:
        # On this stream's thread: a stream closed while it waits (its producer's stream closed
        # with the producer still queued) must not leave the thread blocked for ever.
        while not event.wait(_WAIT_POLL_S):
            if self._closed:
                return

    def close(self) -> None:
        self._closed = True
        self._queue.put(_STOP)

    def _serve(self) -> None:
        get, execute = self._queue.get, self._execute
        while True:
            box = get()
            if box is _STOP or self._closed:
                return
            if box.__class__ is not list:  # an event marker: record_event / wait_event
                box()  # type: ignore[operator]
                continue
            try:
                execute(box)
            except BaseException:
                # _execute reports kernel errors itself; reaching here is a bug in the stream,
                # and one bad launch must not stop every later one on this stream.
                logger.exception("stream %s failed to run a launch", self.label)
            del box

    def _execute(self, box: list[Any]) -> None:
        raise NotImplementedError
