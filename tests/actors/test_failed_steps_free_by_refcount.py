"""However a step ends (closed session, timeout, kernel error, cancelled caller), closing the
session frees its device memory at once, by reference counting alone: nothing the failed step
leaves behind (its error, the error's traceback) forms a cycle that only the garbage collector
would free, which on a real GPU would hold device memory for as long as it takes to run.

Found by scripts/soak.py: after a close with runs in flight, the executors' constants stayed on
the device until ``gc.collect()`` (error -> traceback -> Session._run_plan's frame -> step ->
future -> error)."""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable, Coroutine
from typing import Any

import numpy as np
import pytest

import antcolony as ac

# Each case runs steps of large GPU tensors and collects garbage to prove it is not needed: slow.
pytestmark = pytest.mark.slow

MiB = 1 << 20
SIZE = 384


def _graph() -> tuple[ac.Graph, dict[str, Any]]:
    g = ac.Graph()
    with g.as_default(), ac.device("/gpu:0"):
        x = ac.placeholder(ac.float32, [SIZE, SIZE], name="x")
        v = ac.placeholder(ac.float32, [None], name="v")
        m = ac.constant(np.eye(SIZE, dtype=np.float32))
        y, middle = x, None
        for i in range(30):
            y = ac.matmul(y, m)
            if i == 15:
                middle = y
        slow = ac.reduce_sum(y)
        bad = ac.reduce_sum(ac.reshape(v + ac.reduce_sum(middle) * 0.0, [-1, 7]))
    feed = {x: np.ones((SIZE, SIZE), np.float32)}
    return g, {"slow": slow, "bad": bad, "v": v, "feed": feed}


@pytest.fixture
def no_gc() -> Any:
    """The cyclic garbage collector off: what is freed is freed by reference counting."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()


async def _settles_to(sess: ac.Session, target: int, within: float) -> int:
    deadline = time.monotonic() + within
    while True:
        now = sess.memory_stats("/gpu:0").bytes_in_use
        if now == target or time.monotonic() > deadline:
            return now
        await asyncio.sleep(0.01)


async def _on_device(sess: ac.Session, above: int) -> None:
    deadline = time.monotonic() + 10
    while sess.memory_stats("/gpu:0").bytes_in_use <= above and time.monotonic() < deadline:
        await asyncio.sleep(0.002)
    assert sess.memory_stats("/gpu:0").bytes_in_use > above, "the steps never reached the GPU"


async def _closed_in_flight(sess: ac.Session, t: dict[str, Any], base: int) -> None:
    runs = [asyncio.ensure_future(sess.run(t["slow"], t["feed"])) for _ in range(4)]
    await _on_device(sess, base)
    await sess.close()
    results = await asyncio.gather(*runs, return_exceptions=True)
    assert all(isinstance(r, ac.errors.CancelledError) for r in results), results


async def _timed_out(sess: ac.Session, t: dict[str, Any], base: int) -> None:
    with pytest.raises(ac.errors.DeadlineExceededError):
        await sess.run(t["slow"], t["feed"], options=ac.RunOptions(timeout_in_ms=5))


async def _kernel_error(sess: ac.Session, t: dict[str, Any], base: int) -> None:
    with pytest.raises(ac.errors.InvalidArgumentError) as info:
        await sess.run([t["slow"], t["bad"]], {**t["feed"], t["v"]: np.ones(10, np.float32)})
    # where the kernel failed stays readable (as a note on the cause) without its frames
    notes = "".join(getattr(info.value.__cause__, "__notes__", []))
    assert "Traceback of the kernel" in notes and "kernels/array.py" in notes, notes
    del info


async def _cancelled(sess: ac.Session, t: dict[str, Any], base: int) -> None:
    run = asyncio.ensure_future(sess.run(t["slow"], t["feed"]))
    await _on_device(sess, base)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run


Ending = Callable[[ac.Session, dict[str, Any], int], Coroutine[Any, Any, None]]


@pytest.mark.parametrize(
    "end",
    [_closed_in_flight, _timed_out, _kernel_error, _cancelled],
    ids=["closed", "timed_out", "kernel_error", "cancelled"],
)
async def test_close_after_a_failed_step_frees_the_device_without_the_garbage_collector(
    no_gc: None, end: Ending
):
    g, t = _graph()
    config = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1, sim_gpu_memory=256 * MiB)
    sess = ac.Session(g, config=config)
    await sess.run([t["slow"], t["bad"]], {**t["feed"], t["v"]: np.ones(14, np.float32)})
    base = sess.memory_stats("/gpu:0").bytes_in_use
    assert base > 0, "the executor's constant is on the device"
    await end(sess, t, base)
    await sess.close()
    assert await _settles_to(sess, 0, within=5.0) == 0


async def test_what_a_caller_keeps_of_a_closed_session_holds_no_device_memory(no_gc: None):
    """A callable from make_callable and the errors of runs cut short by close() outlive the
    session in the caller's hands; neither may keep its constants or variables on the device."""
    g, t = _graph()
    with g.as_default(), ac.device("/gpu:0"):
        w = ac.Variable(np.ones((SIZE, SIZE), np.float32), name="w")
        train = ac.assign_add(w, ac.matmul(w, ac.constant(np.eye(SIZE, dtype=np.float32))))
        init = ac.global_variables_initializer()
    config = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1, sim_gpu_memory=256 * MiB)
    sess = ac.Session(g, config=config)
    await sess.run(init)
    call = sess.make_callable(t["slow"], [next(iter(t["feed"]))])
    await call(*t["feed"].values())
    await sess.run(train)
    base = sess.memory_stats("/gpu:0").bytes_in_use
    runs = [asyncio.ensure_future(sess.run([t["slow"], train], t["feed"])) for _ in range(3)]
    await _on_device(sess, base)
    await sess.close()
    errors = await asyncio.gather(*runs, return_exceptions=True)
    assert all(isinstance(e, ac.errors.CancelledError) for e in errors), errors
    assert await _settles_to(sess, 0, within=5.0) == 0
    assert call is not None and errors  # both still held here
