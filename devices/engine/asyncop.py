"""The completion callback of ``prop="async"`` ops (MXNet's CallbackOnComplete)."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from antcolony.devices.handoff import post
from antcolony.errors import EngineError

from .var import _Op

logger = logging.getLogger(__name__)


class OnComplete:
    """Passed to an async op's function; calling it (once, from any thread) finishes the op.

    ``on_complete()`` completes the op; ``on_complete(error)`` fails it with ``error``. A
    second call raises ``EngineError``. Completion is posted to the loop with
    ``handoff.post``, so the engine's bookkeeping stays on the loop.
    """

    __slots__ = ("_called", "_done", "_lock", "_loop", "_loop_thread", "_op")

    def __init__(
        self, loop: asyncio.AbstractEventLoop, op: _Op, done: Callable[[_Op, Any, BaseException | None], None]
    ) -> None:
        self._loop = loop
        self._op = op
        self._done = done
        self._lock = threading.Lock()
        self._called = False
        self._loop_thread = threading.get_ident()  # made by the engine, on the loop's thread

    def __call__(self, error: BaseException | None = None) -> None:
        if not self._claim():
            raise EngineError(f"on_complete of {self._op!r} was called twice")
        if threading.get_ident() == self._loop_thread:
            # Already on the loop (an inline kernel): no wake-up through the loop's self-pipe.
            self._loop.call_soon(self._done, self._op, None, error)
        else:
            post(self._loop, self._op, self._done, self._op, None, error)

    def _claim(self) -> bool:
        with self._lock:
            first, self._called = not self._called, True
        return first

    def fail(self, exc: BaseException) -> None:
        """The op's function raised (on the loop): fail the op unless it already completed."""
        if self._claim():
            self._loop.call_soon(self._done, self._op, None, exc)
        else:
            logger.warning("async op %r raised after calling on_complete", self._op, exc_info=exc)

    async def watch(self, body: Awaitable[Any]) -> None:
        """Await what the op's function returned, failing the op if it raises."""
        try:
            await body
        except Exception as exc:
            self.fail(exc)
