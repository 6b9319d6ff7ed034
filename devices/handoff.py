"""Thread-to-loop handoff: the one way a worker thread reports back to the event loop.

Kernels, copies and engine ops run on threads (CPU pool, GPU stream threads, engine pools);
everything they touch afterwards lives on the loop. A thread therefore never calls back into an
actor: it posts ``callback(*args)`` to the loop. A loop that has closed (interpreter or runtime
shutdown while work was in flight) drops the completion, logged at DEBUG.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)


def post(loop: asyncio.AbstractEventLoop, what: object, callback: Callable[..., Any], *args: Any) -> bool:
    """Run ``callback(*args)`` on ``loop`` soon; callable from any thread. False, and nothing
    runs, when the loop has closed; ``what`` names the work in that log line."""
    try:
        loop.call_soon_threadsafe(callback, *args)
    except RuntimeError:
        logger.debug("event loop closed before %s completed; its result is dropped", what)
        return False
    return True
