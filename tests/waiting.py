"""Event-driven waits for tests: wait for a condition, with a deadline only as a safety net.

A test that sleeps a fixed time and then asserts is flaky by design (too short under load, too
long otherwise); these return as soon as the condition holds and fail only when it never does.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

DEADLINE_S = 10.0


async def until(
    condition: Callable[[], Any], what: str = "the condition", timeout: float = DEADLINE_S
) -> Any:
    """Yield to the loop until ``condition()`` is truthy; return its value. Fails after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not hold within {timeout} s")
        await asyncio.sleep(0.001)
    return value


async def until_async(
    condition: Callable[[], Awaitable[Any]], what: str = "the condition", timeout: float = DEADLINE_S
) -> Any:
    """As ``until``, for a condition that must be awaited (an ask to an actor)."""
    deadline = time.monotonic() + timeout
    while not (value := await condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not hold within {timeout} s")
        await asyncio.sleep(0.001)
    return value


class LoopTurns:
    """Counts the event loop's turns while in use: ``async with LoopTurns() as turns: ...``, then
    ``turns.count``. A task that only yields (``asyncio.sleep(0)``) adds one per turn, so a count
    that grows during an await shows the loop was not held by what was awaited."""

    def __init__(self) -> None:
        self.count = 0
        self._task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        while True:
            self.count += 1
            await asyncio.sleep(0)

    async def __aenter__(self) -> LoopTurns:
        self._task = asyncio.ensure_future(self._tick())
        await asyncio.sleep(0)  # started: the count moves from here on
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def settle(rounds: int = 5) -> None:
    """Let every queued actor turn run: ``rounds`` loop turns (the runtime's dispatch is one
    loop callback per batch)."""
    for _ in range(rounds):
        await asyncio.sleep(0)
