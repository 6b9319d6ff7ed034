"""``ac.run(coro)``: run a coroutine under uvloop when available, then shut the runtime down."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

from antcolony.actors.runtime import get_runtime

logger = logging.getLogger(__name__)

T = TypeVar("T")


def _loop_factory() -> Any:
    try:
        import uvloop
    except ImportError:
        logger.debug("uvloop is not installed; using the default asyncio event loop")
        return None
    return uvloop.new_event_loop


async def _main(coro: Coroutine[Any, Any, T]) -> T:
    try:
        return await coro
    finally:
        await get_runtime().shutdown()


def run(coro: Coroutine[Any, Any, T], *, debug: bool | None = None, use_uvloop: bool = True) -> T:
    """Run ``coro`` to completion on a new event loop (uvloop when installed), as ``asyncio.run``.

    The loop's antcolony Runtime (device workers, services, actors) is shut down before the loop
    closes, so no actor or worker outlives the call.
    """
    if not asyncio.iscoroutine(coro):
        raise ValueError(f"ac.run() needs a coroutine, got {coro!r}")
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        # Fail before creating a loop: asyncio.Runner would create one, then fail to close it
        # ("Cannot run the event loop while another loop is running") and leak the coroutine.
        coro.close()
        raise RuntimeError("ac.run() cannot be called from a running event loop; await the coroutine instead")
    factory = _loop_factory() if use_uvloop else None
    with asyncio.Runner(debug=debug, loop_factory=factory) as runner:
        return runner.run(_main(coro))
