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
import time
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any

from antcolony.devices.handoff import post
from antcolony.devices.launch import LaunchDropped

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
        # ``drop`` predicates in force, read by the thread before each launch (a tuple, replaced
        # whole under the lock: the thread reads it without one)
        self._drops: tuple[Callable[[Any], bool], ...] = ()
        self._drops_lock = threading.Lock()
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

    def drop(self, match: Callable[[Any], bool]) -> asyncio.Future[None]:
        loop = self.loop
        drained: asyncio.Future[None] = loop.create_future()
        if self._closed:  # its thread ends after the launch it runs, dropping the rest
            drained.set_result(None)
            return drained
        with self._drops_lock:
            self._drops = (*self._drops, match)

        def passed() -> None:
            # on the thread, past every launch enqueued before the drop: later launches are
            # not the dropped ones' (their steps are over), so this drop's predicate retires.
            # Only this drop's entry: drops share a predicate (executors drop "the aborted
            # steps' launches"), and a later drop of it stays in force until its own point.
            with self._drops_lock:
                drops = list(self._drops)
                drops.remove(match)
                self._drops = tuple(drops)
            self._when_finished(lambda: post(loop, f"a drop on stream {self.label}", _resolve, drained))

        self._on_thread(passed)
        return drained

    def _when_finished(self, fn: Callable[[], Any]) -> None:
        """On this stream's thread: call ``fn`` (from any thread) once everything enqueued on the
        device before has finished. Here at once: ``_execute`` runs a launch to its end."""
        fn()

    def close(self) -> None:
        self._closed = True
        self._queue.put(_STOP)

    def _serve(self) -> None:
        get, execute = self._queue.get, self._execute
        while True:
            box = get()
            if box is _STOP or self._closed:
                return
            if box.__class__ is not list:  # a marker: record_event / wait_event / drop
                box()  # type: ignore[operator]
                continue
            try:
                drops = self._drops
                if drops and any(match(box[2]) for match in drops):
                    self._skip(box)
                else:
                    execute(box)
            except BaseException:
                # _execute reports kernel errors itself; reaching here is a bug in the stream,
                # and one bad launch must not stop every later one on this stream.
                logger.exception("stream %s failed to run a launch", self.label)
            del box

    def _skip(self, box: list[Any]) -> None:
        """Report a dropped launch without running it; its inputs are let go first."""
        token = box[2]
        box.clear()
        now = time.perf_counter()
        self._complete(
            token, [], LaunchDropped(f"dropped from stream {self.label}: its step ended"), now, now
        )

    def _execute(self, box: list[Any]) -> None:
        raise NotImplementedError


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
