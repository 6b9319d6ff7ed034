"""The faults the soak injects, one coroutine per kind.

Each takes the soak's ``World`` (the session, which a close replaces, the job, the config file
and a seeded random generator), injects its fault, checks the caller saw what a user should
(the right error, or a config applied or refused), and returns a short note for the progress
log. What the runtime did not do as promised raises ``Surprise``.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

import antcolony as ac

from soak_config import config_rewrite, reopen
from soak_job import Surprise, World, describe


def _in_flight_runs(world: World, n: int) -> list[asyncio.Task[Any]]:
    """``n`` runs of the slow chain, some with a training step in the same run."""
    job, tasks = world.job, []
    for _ in range(n):
        if world.rng.random() < 0.5:
            coro = world.sess.run(job.slow, job.slow_feed)
        else:
            coro = world.sess.run([job.slow, job.loss, job.train], {**job.feed, **job.slow_feed})
        tasks.append(asyncio.ensure_future(coro))
    return tasks


async def kernel_error(world: World) -> str:
    """A reshape kernel fails half-way through the slow chain: InvalidArgumentError."""
    length = world.rng.choice([1, 3, 10, 13, 50, 1000])
    on_cpu = world.rng.random() < 0.5
    bad = world.job.bad_on_cpu if on_cpu else world.job.bad
    try:
        await world.sess.run([world.job.slow, bad], world.job.bad_feed(length))
    except ac.errors.InvalidArgumentError as exc:
        if "Reshape" not in str(exc):
            raise Surprise(f"the error does not name the failing reshape: {describe(exc)}") from None
        return f"reshape of {length} values on the {'CPU' if on_cpu else 'GPU'} failed as expected"
    raise Surprise(f"a reshape of {length} values to [-1, 7] succeeded")


async def cancel(world: World) -> str:
    """Cancel some of the runs in flight (the callers' tasks) at a random moment."""
    tasks = _in_flight_runs(world, world.rng.randint(1, 4))
    await asyncio.sleep(world.rng.uniform(0.0, world.slow_s))
    chosen = [t for t in tasks if world.rng.random() < 0.7] or tasks[:1]
    for task in chosen:
        task.cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    cancelled = 0
    for task, result in zip(tasks, results):
        if isinstance(result, asyncio.CancelledError):
            cancelled += 1
            if task not in chosen:
                raise Surprise("a run that was not cancelled ended with CancelledError")
        elif isinstance(result, BaseException):
            raise Surprise(f"a run in flight failed: {describe(result)}")
    return f"cancelled {cancelled} of {len(tasks)} runs"


async def close(world: World) -> str:
    """Close the session with runs in flight; they get CancelledError; open a new session."""
    world.saved = await world.sess.run(world.job.weights)
    tasks = _in_flight_runs(world, world.rng.randint(1, 6))
    await asyncio.sleep(world.rng.uniform(0.0, world.slow_s))
    await world.sess.close()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    cancelled = sum(isinstance(r, ac.errors.CancelledError) for r in results)
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, ac.errors.CancelledError):
            raise Surprise(f"a run in flight at close failed with {describe(result)}, not CancelledError")
    config = await reopen(world)
    return f"closed with {len(tasks)} runs in flight ({cancelled} cancelled), reopened ({config})"


async def timeout(world: World) -> str:
    """A run whose deadline is shorter than the slow chain: DeadlineExceededError."""
    ms = max(1, int(world.rng.uniform(0.05, 0.5) * world.slow_s * 1000))
    options = ac.RunOptions(timeout_in_ms=ms)
    job = world.job
    try:
        if world.rng.random() < 0.5:
            await world.sess.run(job.slow, job.slow_feed, options=options)
        else:
            await world.sess.run([job.slow, job.loss, job.train], {**job.feed, **job.slow_feed}, options=options)
    except ac.errors.DeadlineExceededError:
        return f"timed out after {ms} ms as expected"
    raise Surprise(f"a slow run with timeout_in_ms={ms} finished in time")


FAULTS: dict[str, Callable[[World], Awaitable[str]]] = {
    "kernel_error": kernel_error,
    "cancel": cancel,
    "close": close,
    "config": config_rewrite,
    "timeout": timeout,
}
