"""Waiting for a started step in its caller's task: the result or error of a step that did not
simply end where it started, deadlines (``RunOptions.timeout_in_ms``), and cancellation.

The caller's frames must never keep the step once it raises: the error's traceback holds the
frames, a step holds its future, the future holds the error, and that cycle would keep the
executor's device tensors until the garbage collector happens to run. Hence the ``del``s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, NoReturn

from antcolony.actors.cached_executor import CachedExecutor
from antcolony.actors.run_options import RunOptions
from antcolony.actors.runtime import Runtime
from antcolony.actors.step import StepState
from antcolony.errors import CancelledError, DeadlineExceededError


async def settle(
    step: StepState,
    executor: CachedExecutor,
    inflight: set[StepState],
    options: RunOptions | None,
    deadline: float | None,
) -> list[Any]:
    """The values of a started step that is not simply done: awaited if it did not end within
    the call that started it (it is in ``inflight`` until then, and ``Session.close`` fails it),
    its error raised if it failed there, else after one yield to the loop, which a step run
    entirely inline never gave (``Runtime.yield_due`` says when one is due)."""
    if step.done:
        if step.error is not None:
            _raise(step)
        await asyncio.sleep(0)
        return step.fetched
    inflight.add(step)
    try:
        if deadline is None:
            values: list[Any] = await step.waiter()
        else:
            assert options is not None  # a deadline comes from its options
            values = await _await_before(step, executor, options, deadline)
    except BaseException as exc:
        inflight.discard(step)
        if isinstance(exc, asyncio.CancelledError):
            executor.abort(step, CancelledError(None, None, "the caller's task was cancelled"))
        del step, executor
        raise
    inflight.discard(step)
    return values


def _raise(step: StepState) -> NoReturn:
    """Raise the error of a step that failed within the call that started it. The step hands
    the error over: the raise gives it a traceback holding the caller's frame, which holds the
    step."""
    error = step.error
    assert error is not None
    step.error = None
    try:
        raise error
    finally:
        del error


async def _await_before(
    step: StepState, executor: CachedExecutor, options: RunOptions, deadline: float
) -> list[Any]:
    try:
        async with asyncio.timeout_at(deadline):
            return await step.waiter()
    except TimeoutError:
        pass  # raised below, outside this handler, so the error does not chain the TimeoutError
    except BaseException:
        del step, executor
        raise
    error = DeadlineExceededError(
        None, None, f"Timed out after {options.timeout_in_ms} ms waiting for step {step.id}"
    )
    executor.abort(step, error)
    try:
        raise error
    finally:
        del error, step, executor


def deadline_of(rt: Runtime, options: RunOptions | None) -> float | None:
    """The loop time by which a run with ``options`` must end (None: no deadline; TF1 reads a
    timeout of 0 or less as none)."""
    if options is None or options.timeout_in_ms <= 0:
        return None
    return rt.loop.time() + options.timeout_in_ms / 1000.0


async def within(
    deadline: float | None, options: RunOptions | None, where: str, work: Awaitable[None]
) -> None:
    """Await ``work`` (run actions) before ``deadline``; past it, the run fails with
    ``DeadlineExceededError`` saying where it waited."""
    if deadline is None:
        await work
        return
    try:
        async with asyncio.timeout_at(deadline):
            await work
        return
    except TimeoutError:
        pass  # raised below, outside this handler, so the error does not chain the TimeoutError
    assert options is not None
    raise DeadlineExceededError(
        None,
        None,
        f"Timed out after {options.timeout_in_ms} ms (RunOptions.timeout_in_ms) {where}; raise the "
        "timeout, or resume the job (perfControl > 0) when it is suspended",
    )
