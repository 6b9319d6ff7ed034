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
