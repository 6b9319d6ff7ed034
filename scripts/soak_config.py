"""The soak's config rewrites: the resource config file changed under the running job.

A scheduler's valid rewrites (perfControl, a roomy maxDeviceMem), a squeeze (a maxDeviceMem
below what a step needs, so tensors go to host memory, then a roomy one again), a writer caught
half-way (the file truncated in place, then completed), and invalid content of several kinds.
After each the config in force must be the last valid one written.

Squeezes end with a roomy limit again before the figures are checked: a variable's new value
(each step writes one) or a reopened session's constants are placed under the limit in force,
so under a squeeze the split of the same live bytes between device and host memory moves, and
the baselines would no longer say where those bytes belong.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable

from soak_job import MiB, Surprise, World, open_session, warm_up

import antcolony as ac
from antcolony.config.atomic_file import write_file_atomic
from antcolony.config.listener_messages import GetStats

ROOMY = (64 * MiB, 128 * MiB, 256 * MiB)
SQUEEZED = (1 * MiB, 2 * MiB)  # a slow step with a training step needs about 4 MiB


def valid_text(perf: int, limit: int, name: str = "soak") -> str:
    # "name" is free text the job ignores; a new one per write makes every rewrite new content
    # (the listener reports an invalid content version once, not each identical rewrite of it)
    return json.dumps(
        {"name": name, "gpuConfigInfo": {"gpu:0": {"maxDeviceMem": limit}}, "perfControl": perf}
    )


INVALID: dict[str, Callable[[int, int, str], str]] = {
    "malformed_json": lambda p, m, n: f'{{"name": "{n}", "perfControl": 50,, "gpuConfigInfo": {{}}}}',
    "not_json": lambda p, m, n: f"# {n}\nperfControl = 50\n",
    "perf_out_of_range": lambda p, m, n: valid_text(150, m, n),
    "perf_negative": lambda p, m, n: valid_text(-1, m, n),
    "perf_not_a_number": lambda p, m, n: valid_text(p, m, n).replace(
        f'"perfControl": {p}', '"perfControl": "fast"'
    ),
    "limit_negative": lambda p, m, n: valid_text(p, -MiB, n),
    "limit_not_an_integer": lambda p, m, n: valid_text(p, m, n).replace(str(m), "1.5e6"),
}


def _name(world: World) -> str:
    world.rewrites += 1
    return f"soak rewrite {world.rewrites}"


async def poll_and_step(world: World) -> None:
    """Poll the config now, then run a step: a new config is applied at its boundary."""
    manager = world.sess.resource_manager
    assert manager is not None
    await manager.refresh()
    await world.sess.run([world.job.loss, world.job.train], world.job.feed)


def in_force(world: World) -> tuple[int, int]:
    manager = world.sess.resource_manager
    assert manager is not None
    # the limit asked, not the one reached: live data may hold a shrink up for a few steps
    state = manager.limits.get(0)
    return manager.perf_control, -1 if state is None else state.asked


def expect_in_force(world: World, what: str, perf: int | None = None, limit: int | None = None) -> None:
    perf = world.perf_control if perf is None else perf
    limit = world.limit if limit is None else limit
    now_perf, now_limit = in_force(world)
    if (now_perf, now_limit) != (perf, limit):
        raise Surprise(
            f"after {what}: perfControl {now_perf}, limit {now_limit} in force; expected perfControl "
            f"{perf}, limit {limit} (the last valid config)"
        )


async def write_valid(world: World, perf: int, limit: int) -> None:
    write_file_atomic(world.config_path, valid_text(perf, limit, _name(world)).encode())
    world.perf_control, world.limit, world.file_valid = perf, limit, True
    await poll_and_step(world)
    expect_in_force(world, f"a valid config (perfControl {perf}, maxDeviceMem {limit})")


async def reopen(world: World) -> str:
    """The session was closed: check it freed everything, open a new one, warm it up."""
    if world.on_closed is not None:
        await world.on_closed(world.sess)
    world.sess = open_session(world.job, world.workdir)
    await warm_up(world.sess, world.job, world.saved)
    return await after_reopen(world)


async def after_reopen(world: World) -> str:
    """A new session's resource manager starts from the file: the last valid config when the
    file holds it; nothing applied (perfControl 100, no limit asked) when the file is invalid,
    until the scheduler writes a valid one."""
    await poll_and_step(world)
    if world.file_valid:
        expect_in_force(world, "reopening")
        return "config in force"
    expect_in_force(world, "reopening on an invalid config file", perf=100, limit=-1)
    await write_valid(world, world.perf_control, world.limit)
    return "invalid config file at reopening: nothing applied until rewritten"


async def config_rewrite(world: World) -> str:
    """Rewrite the resource config: valid, squeezed, invalid, or half-written."""
    roll, rng = world.rng.random(), world.rng
    if roll < 0.25:
        perf, limit = rng.choice([50, 70, 90, 100, 100]), rng.choice(ROOMY)
        await write_valid(world, perf, limit)
        world.count("valid")
        return f"valid config applied: perfControl {perf}, maxDeviceMem {limit // MiB} MiB"
    if roll < 0.4:
        return await _squeeze(world)
    if roll < 0.55:
        return await _half_written(world)
    if roll < 0.65:
        return await _suspend(world)
    return await _invalid(world)


async def _resume(world: World, perf: int, limit: int) -> None:
    write_file_atomic(world.config_path, valid_text(perf, limit, _name(world)).encode())
    world.perf_control = perf
    manager = world.sess.resource_manager
    assert manager is not None
    await manager.refresh()


async def _suspend(world: World) -> str:
    """perfControl 0 suspends the job at its next step boundary; then either a config with
    perfControl > 0 resumes it, or the session is closed while suspended (the caller gets
    CancelledError) and a new one opened."""
    perf, limit, job = world.perf_control, world.limit, world.job
    manager = world.sess.resource_manager
    assert manager is not None
    world.saved = await world.sess.run(job.weights)
    write_file_atomic(world.config_path, valid_text(0, limit, _name(world)).encode())
    world.perf_control, world.file_valid = 0, True
    await manager.refresh()
    step = asyncio.ensure_future(world.sess.run([job.loss, job.train], job.feed))
    deadline = time.monotonic() + 5.0
    while manager.perf_control != 0 and not step.done() and time.monotonic() < deadline:
        await asyncio.sleep(0.005)
    if step.done() or manager.perf_control != 0:
        done = step.done()
        await _resume(world, perf, limit)
        await step
        raise Surprise(f"perfControl 0 did not suspend the job (step done: {done})")
    world.count("suspend")
    if world.rng.random() < 0.5:
        await _resume(world, perf, limit)
        await step
        expect_in_force(world, "resuming from perfControl 0")
        return f"suspended by perfControl 0, resumed by perfControl {perf}"
    await world.sess.close()
    try:
        await step
    except ac.errors.CancelledError:
        pass
    else:
        raise Surprise("a step suspended by perfControl 0 returned normally when its session closed")
    # a scheduler resumes the job before it opens a new session (which would suspend at once)
    write_file_atomic(world.config_path, valid_text(perf, limit, _name(world)).encode())
    world.perf_control = perf
    note = await reopen(world)
    return f"suspended by perfControl 0, closed while suspended, reopened ({note})"


async def _squeeze(world: World) -> str:
    perf, roomy = world.perf_control, world.limit
    limit = world.rng.choice(SQUEEZED)
    before = world.sess.memory_stats("/gpu:0").num_host_fallbacks
    job = world.job
    try:
        await write_valid(world, perf, limit)
        for _ in range(2):
            await world.sess.run([job.slow, job.loss, job.train], {**job.feed, **job.slow_feed})
        fallbacks = world.sess.memory_stats("/gpu:0").num_host_fallbacks - before
        manager = world.sess.resource_manager
        assert manager is not None
        reached = manager.limits[0].reached
    finally:
        await write_valid(world, perf, roomy)
        # the step that applied the roomy limit ran under the squeeze: one more puts the
        # variables' new values back on the device
        await world.sess.run([job.loss, job.train], job.feed)
    world.count("squeeze")
    if fallbacks > 0:
        return f"squeezed to {limit // MiB} MiB ({fallbacks} host fallbacks), then {roomy // MiB} MiB again"
    if reached <= limit:
        raise Surprise(f"steps under a reached maxDeviceMem of {reached} never fell back to host memory")
    # live data kept a region the shrink needed (it is retried at each step boundary)
    return f"squeeze to {limit // MiB} MiB held at {reached / MiB:.1f} MiB by live data, then {roomy // MiB} MiB again"


def _write_in_place(path: str, text: str) -> None:
    """Truncate and write ``path`` itself, as a writer that does not rename does."""
    with open(path, "w") as f:
        f.write(text)


async def _half_written(world: World) -> str:
    """A writer caught half-way, in place: never applied; then completed: applied."""
    perf, limit = world.rng.choice([50, 70, 90, 100]), world.rng.choice(ROOMY)
    text = valid_text(perf, limit, _name(world))
    cut = world.rng.randint(1, len(text) - 1)
    await asyncio.to_thread(_write_in_place, world.config_path, text[:cut])
    world.file_valid = False
    await poll_and_step(world)
    expect_in_force(world, f"a half-written config ({cut} of {len(text)} bytes)")
    await asyncio.to_thread(_write_in_place, world.config_path, text)
    world.perf_control, world.limit, world.file_valid = perf, limit, True
    await poll_and_step(world)
    expect_in_force(world, "completing a half-written config")
    world.count("half_written")
    return f"half-written config ({cut}/{len(text)} bytes) ignored, then applied when complete"


async def _invalid(world: World) -> str:
    name = world.rng.choice(sorted(INVALID))
    manager = world.sess.resource_manager
    assert manager is not None
    before = await manager.listener.ask(GetStats())
    write_file_atomic(
        world.config_path, INVALID[name](world.perf_control, world.limit, _name(world)).encode()
    )
    world.file_valid = False
    await poll_and_step(world)
    after = await manager.listener.ask(GetStats())
    if after.rejected <= before.rejected:
        raise Surprise(f"an invalid config ({name}) was not reported as rejected")
    expect_in_force(world, f"an invalid config ({name})")
    world.count(name)
    return f"invalid config ({name}) rejected, last good one kept"
