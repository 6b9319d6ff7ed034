"""The faults the soak injects, one coroutine per kind.

Each takes the soak's ``World`` (the session, which a close replaces, the job, the config file
and a seeded random generator), injects its fault, checks the caller saw what a user should
(the right error, or a config applied or refused), and returns a short note for the progress
log. What the runtime did not do as promised raises ``Surprise``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from soak_config import config_rewrite, reopen
from soak_job import Surprise, World, describe
from soak_ledger import hostile_ledger

import antcolony as ac


@dataclass
class Run:
    """A run in flight and the errors it may end with besides the fault's own."""

    task: asyncio.Task[Any]
    may_fail_with: tuple[type[BaseException], ...]


def _in_flight_runs(world: World, n: int) -> list[Run]:
    """``n`` runs of the slow chain: alone, with a training step, with a deadline that may or
    may not pass, or with a kernel that fails; so faults land on steps ending in every way."""
    job, rng, runs = world.job, world.rng, []
    for _ in range(n):
        roll = rng.random()
        allowed: tuple[type[BaseException], ...] = ()
        if roll < 0.35:
            coro = world.sess.run(job.slow, job.slow_feed)
        elif roll < 0.7:
            coro = world.sess.run([job.slow, job.loss, job.train], {**job.feed, **job.slow_feed})
        elif roll < 0.85:
            ms = max(1, int(rng.uniform(0.2, 3.0) * world.slow_s * 1000))
            coro = world.sess.run(job.slow, job.slow_feed, options=ac.RunOptions(timeout_in_ms=ms))
            allowed = (ac.errors.DeadlineExceededError,)
        else:
            bad = job.bad_on_cpu if rng.random() < 0.5 else job.bad
            coro = world.sess.run([job.slow, bad], job.bad_feed(rng.choice([3, 10, 50])))
            allowed = (ac.errors.InvalidArgumentError,)
        runs.append(Run(asyncio.ensure_future(coro), allowed))
    return runs


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
    runs = _in_flight_runs(world, world.rng.randint(1, 4))
    await asyncio.sleep(world.rng.uniform(0.0, world.slow_s))
    chosen = [r for r in runs if world.rng.random() < 0.7] or runs[:1]
    for run in chosen:
        run.task.cancel()
    results = await asyncio.gather(*(r.task for r in runs), return_exceptions=True)
    cancelled = 0
    for run, result in zip(runs, results):
        if isinstance(result, asyncio.CancelledError):
            cancelled += 1
            if run not in chosen:
                raise Surprise("a run that was not cancelled ended with CancelledError")
        elif isinstance(result, BaseException) and not isinstance(result, run.may_fail_with):
            raise Surprise(f"a run in flight failed: {describe(result)}")
    return f"cancelled {cancelled} of {len(runs)} runs"


async def close(world: World) -> str:
    """Close the session with runs in flight; they get CancelledError; open a new session."""
    world.saved = await world.sess.run(world.job.weights)
    runs = _in_flight_runs(world, world.rng.randint(1, 6))
    await asyncio.sleep(world.rng.uniform(0.0, world.slow_s))
    await world.sess.close()
    results = await asyncio.gather(*(r.task for r in runs), return_exceptions=True)
    cancelled = sum(isinstance(r, ac.errors.CancelledError) for r in results)
    for run, result in zip(runs, results):
        if isinstance(result, BaseException) and not isinstance(
            result, (ac.errors.CancelledError, *run.may_fail_with)
        ):
            raise Surprise(f"a run in flight at close failed with {describe(result)}, not CancelledError")
    # the runs' errors are still held here, as a caller may keep them: the close check must pass
    # with them alive (their tracebacks reach the closed session's executors)
    config = await reopen(world)
    return f"closed with {len(results)} runs in flight ({cancelled} cancelled), reopened ({config})"


async def timeout(world: World) -> str:
    """A run whose deadline is shorter than the slow chain: DeadlineExceededError."""
    ms = max(1, int(world.rng.uniform(0.02, 0.3) * world.slow_s * 1000))
    options = ac.RunOptions(timeout_in_ms=ms)
    job = world.job
    try:
        if world.rng.random() < 0.5:
            await world.sess.run(job.slow, job.slow_feed, options=options)
        else:
            await world.sess.run(
                [job.slow, job.loss, job.train], {**job.feed, **job.slow_feed}, options=options
            )
    except ac.errors.DeadlineExceededError:
        return f"timed out after {ms} ms as expected"
    raise Surprise(f"a slow run with timeout_in_ms={ms} finished in time")


async def fetch_write(world: World) -> str:
    """Write into every fetched array (the weights, and a training step's own fetches): the
    variables keep their values (a fetched array is the caller's, never a variable's storage)."""
    job = world.job
    fetched = await world.sess.run(job.weights)
    expected = [np.array(a, copy=True) for a in fetched]
    loss, _ = await world.sess.run([job.loss, job.train], job.feed)
    expected_after_step = await world.sess.run(job.weights)
    for a in (*fetched, *expected_after_step, loss):
        if isinstance(a, np.ndarray):
            if not a.flags.writeable:
                raise Surprise("a fetched array is read-only")
            a[...] = np.nan
    now = await world.sess.run(job.weights)
    if any(np.isnan(a).any() for a in now):
        raise Surprise("writing into fetched arrays changed the variables")
    if all(np.array_equal(a, b) for a, b in zip(now, expected)):
        raise Surprise("the training step between the fetches changed no weight")
    return f"wrote NaN into {len(fetched) * 2 + 1} fetched arrays; the variables kept their values"


FAULTS: dict[str, Callable[[World], Awaitable[str]]] = {
    "kernel_error": kernel_error,
    "cancel": cancel,
    "close": close,
    "config": config_rewrite,
    "timeout": timeout,
    "ledger": hostile_ledger,
    "fetch_write": fetch_write,
}
