"""TF1's thread coordination for the blocking face: ``tf.train.Coordinator`` (threads that stop
together, the first exception kept and re-raised by ``join``), ``tf.train.LooperThread`` (a
function run in a loop or on a timer until the coordinator stops) and
``tf.train.start_queue_runners`` (starts the threads of the graph's queue runners; a graph
without queue runners gives none, so TF1 programs that call it out of habit run unchanged).

Behaviour as TF1's: ``OutOfRangeError`` (an input's end) is a clean stop, not an error; a thread
that raises inside ``stop_on_exception`` stops every thread and ``join`` re-raises its exception
in the joining thread; threads still alive after the grace period are a ``RuntimeError`` naming
them, unless ``ignore_live_threads``.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from antcolony.errors import OutOfRangeError
from antcolony.graph.core import get_default_graph
from antcolony.graph.default_session import get_default_session
from antcolony.graph.graph_keys import GraphKeys

logger = logging.getLogger(__name__)

__all__ = ["Coordinator", "LooperThread", "start_queue_runners"]


class Coordinator:
    """Threads that stop together: each checks ``should_stop()``; any of them (or the main thread)
    calls ``request_stop(ex)``; the main thread ``join``s them and gets the first exception."""

    def __init__(self, clean_stop_exception_types: Iterable[type[BaseException]] | None = None) -> None:
        self._clean_stop = tuple(clean_stop_exception_types or (OutOfRangeError,))
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info: tuple[Any, Any, Any] | None = None
        self._registered: set[threading.Thread] = set()
        self._joined = False

    def _filter(self, ex: BaseException | tuple[Any, Any, Any] | None) -> tuple[Any, Any, Any] | None:
        if ex is None:
            return None
        info = ex if isinstance(ex, tuple) else (type(ex), ex, ex.__traceback__)
        return None if isinstance(info[1], self._clean_stop) else info

    def request_stop(self, ex: BaseException | tuple[Any, Any, Any] | None = None) -> None:
        """Ask every thread to stop; ``ex`` (an exception or ``sys.exc_info()``), unless a clean
        stop, is what ``join`` re-raises; only the first one is kept."""
        with self._lock:
            info = self._filter(ex)
            if self._joined and info is not None and self._exc_info is None:
                # after join, nobody would see it: TF1 raises it here instead
                raise info[1].with_traceback(info[2])
            if not self._stop_event.is_set():
                if info is not None and self._exc_info is None:
                    logger.info("Error reported to Coordinator: %r", info[1])
                    self._exc_info = info
                self._stop_event.set()

    def clear_stop(self) -> None:
        """Forget a stop request and its exception (to start threads again)."""
        with self._lock:
            self._joined = False
            self._exc_info = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self) -> Iterator[None]:
        """Any exception raised in the block becomes ``request_stop(ex)``; the block's thread ends
        quietly (``join`` re-raises it)."""
        try:
            yield
        except Exception:
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout: float | None = None) -> bool:
        """Whether a stop was requested within ``timeout`` seconds (None: wait for it)."""
        return self._stop_event.wait(None if timeout is None else max(0.0, timeout))

    def register_thread(self, thread: threading.Thread) -> None:
        with self._lock:
            self._registered.add(thread)

    def join(
        self,
        threads: Iterable[threading.Thread] | None = None,
        stop_grace_period_secs: float = 120,
        ignore_live_threads: bool = False,
    ) -> None:
        """Wait for a stop request, then for the threads (these and the registered ones), at most
        ``stop_grace_period_secs`` after the request; re-raise the first reported exception."""
        with self._lock:
            waiting = set(threads or ()) | self._registered
        self._stop_event.wait()
        deadline = time.monotonic() + stop_grace_period_secs
        for thread in waiting:
            thread.join(max(0.0, deadline - time.monotonic()))
        alive = sorted(t.name for t in waiting if t.is_alive())
        with self._lock:
            self._joined = True
            self._registered.clear()
            info = self._exc_info
        if info is not None:
            raise info[1].with_traceback(info[2])
        if alive:
            if ignore_live_threads:
                logger.info("Coordinator stopped with threads still running: %s", " ".join(alive))
            else:
                raise RuntimeError(
                    f"Coordinator stopped with threads still running: {' '.join(alive)} "
                    f"(they did not end within {stop_grace_period_secs} s of the stop request)"
                )

    @property
    def joined(self) -> bool:
        return self._joined

    def raise_requested_exception(self) -> None:
        with self._lock:
            info = self._exc_info
        if info is not None:
            raise info[1].with_traceback(info[2])


class LooperThread(threading.Thread):
    """Runs ``target(*args, **kwargs)`` (or ``run_loop``) until ``coord`` stops: back to back, or
    every ``timer_interval_secs`` starting at once. An exception stops the coordinator."""

    def __init__(
        self,
        coord: Coordinator,
        timer_interval_secs: float | None,
        target: Callable[..., Any] | None = None,
        args: Iterable[Any] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        if target is None and (args or kwargs):
            raise ValueError("LooperThread: args and kwargs need a target")
        super().__init__(daemon=True)
        self._coord = coord
        self._interval = timer_interval_secs
        self._target_fn = target
        self._args = tuple(args or ())
        self._kwargs = dict(kwargs or {})
        coord.register_thread(self)

    @staticmethod
    def loop(
        coord: Coordinator,
        timer_interval_secs: float | None,
        target: Callable[..., Any],
        args: Iterable[Any] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> LooperThread:
        """A started LooperThread."""
        looper = LooperThread(coord, timer_interval_secs, target, args, kwargs)
        looper.start()
        return looper

    def run(self) -> None:
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._interval is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                due = time.monotonic()
                while not self._coord.wait_for_stop(due - time.monotonic()):
                    due += self._interval
                    self.run_loop()
            self.stop_loop()

    def start_loop(self) -> None:
        """Called once in the thread before the loop."""

    def stop_loop(self) -> None:
        """Called once in the thread after the loop."""

    def run_loop(self) -> None:
        """One iteration: calls the target (subclasses override it)."""
        if self._target_fn is not None:
            self._target_fn(*self._args, **self._kwargs)


def start_queue_runners(
    sess: Any = None,
    coord: Coordinator | None = None,
    daemon: bool = True,
    start: bool = True,
    collection: str = GraphKeys.QUEUE_RUNNERS,
) -> list[threading.Thread]:
    """Start the threads of every queue runner in ``collection`` of the session's graph (each
    runner's ``create_threads``); returns them. A graph without queue runners gives [].
    ``sess`` defaults to the default session; with none, a ValueError as TF1's."""
    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError(
                "start_queue_runners: no session given and no default session: pass sess= or call it "
                "inside `with sess.as_default():`"
            )
    graph = getattr(sess, "graph", None) or get_default_graph()
    threads: list[threading.Thread] = []
    for runner in graph.get_collection(collection):
        threads.extend(runner.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
