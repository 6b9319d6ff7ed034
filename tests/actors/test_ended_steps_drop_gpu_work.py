"""Every way a step ends early drops its GPU launches still queued (issue 27, item 2, beyond
``close``): a deadline, its caller's task cancelled, a kernel error, Ctrl-C on the blocking face.
The kernel already running finishes; the rest never run, so the device's memory is back to the
variables and another session's kernel runs without waiting behind them.

Event ordering, not timing: "not queued behind" is checked as "when the other session's run
returned, fewer than half of the chain's kernels had run after the abort" (each kernel allocates
its output, so ``num_allocs`` counts them; without the drop, all of them would have)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import antcolony as ac
from antcolony.actors.session_stats import worker_statistics
from tests.waiting import until, until_async

MiB = 1 << 20
SIZE = 2048
LINKS = 48  # matmuls in the chain: 0.1-1 s each on one core, far more than the deadlines below
CONFIG = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1, sim_gpu_memory=1024 * MiB)


def _chain() -> tuple[ac.Graph, ac.Tensor, ac.Tensor, ac.Operation]:
    """``x @ w @ w ...`` (LINKS matmuls) on the GPU, ``w`` a variable; pipelined, the whole
    chain is queued on the GPU as soon as ``x`` is there."""
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [SIZE, SIZE], name="x")
        with ac.device("/gpu:0"):
            w = ac.Variable(np.eye(SIZE, dtype=np.float32) * 0.5, name="w")
            y = x
            for _ in range(LINKS):
                y = ac.matmul(y, w)
            out = ac.reduce_sum(y)
        init = ac.global_variables_initializer()
    return g, x, out, init


async def _queued(sess: ac.Session) -> int:
    stats = await worker_statistics(sess, "/gpu:0")
    return int(stats.queued + stats.in_flight)


async def _check_dropped(sess: ac.Session, variables: int, allocs_at_abort: int) -> None:
    """After the abort: once the GPU's memory is back to the variables alone, fewer than half of
    the chain's kernels have run since the abort (without the drop, every queued one would have
    run first); nothing is left on the GPU's worker or streams, and another session's kernel
    runs at once."""
    await until(
        lambda: sess.memory_stats("/gpu:0").bytes_in_use == variables,
        "the GPU memory back to the variables",
        timeout=120,
    )
    ran = sess.memory_stats("/gpu:0").num_allocs - allocs_at_abort
    assert ran < LINKS // 2, f"{ran} of the chain's kernels ran after the abort"
    await until_async(lambda: _idle(sess), "the GPU worker idle")
    other_g = ac.Graph()
    with other_g.as_default(), ac.device("/gpu:0"):
        small = ac.reduce_sum(ac.constant(np.arange(4, dtype=np.float32)) * 2.0)
    async with ac.Session(other_g, config=CONFIG) as other:
        assert await other.run(small) == 12.0


async def _idle(sess: ac.Session) -> bool:
    return await _queued(sess) == 0


async def _started(sess: ac.Session, init: ac.Operation) -> tuple[int, int]:
    await sess.run(init)
    return sess.memory_stats("/gpu:0").bytes_in_use, sess.memory_stats("/gpu:0").num_allocs


async def _wait_queued(sess: ac.Session) -> None:
    """The chain is on the GPU: most of its launches wait there."""
    await until_async(lambda: _queued_at_least(sess, LINKS // 2), "the chain queued on the GPU", 60)


async def _queued_at_least(sess: ac.Session, n: int) -> bool:
    return await _queued(sess) >= n


def _feed(x: ac.Tensor) -> dict[ac.Tensor, np.ndarray]:
    return {x: np.ones((SIZE, SIZE), np.float32)}


async def test_a_step_past_its_deadline_drops_its_queued_gpu_launches():
    g, x, out, init = _chain()
    async with ac.Session(g, config=CONFIG) as sess:
        variables, _ = await _started(sess, init)
        options = ac.RunOptions(timeout_in_ms=1500)
        run = asyncio.ensure_future(sess.run(out, _feed(x), options=options))
        await _wait_queued(sess)
        with pytest.raises(ac.errors.DeadlineExceededError):
            await run
        allocs = sess.memory_stats("/gpu:0").num_allocs
        await _check_dropped(sess, variables, allocs)


async def test_a_cancelled_run_drops_its_queued_gpu_launches():
    g, x, out, init = _chain()
    async with ac.Session(g, config=CONFIG) as sess:
        variables, _ = await _started(sess, init)
        run = asyncio.ensure_future(sess.run(out, _feed(x)))
        await _wait_queued(sess)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        allocs = sess.memory_stats("/gpu:0").num_allocs
        await _check_dropped(sess, variables, allocs)
        # the session is still usable (tests/devices/test_cuda_drop.py reruns such a chain whole)
        w = await sess.run(g.get_tensor_by_name("w:0"))
        np.testing.assert_array_equal(w[:2, :2], np.eye(2) * 0.5)


async def test_a_kernel_error_drops_the_steps_queued_gpu_launches():
    g, x, out, init = _chain()
    release = threading.Event()

    def fail(v: np.ndarray) -> np.ndarray:
        release.wait(60)
        raise ValueError("the py_func failed on purpose")

    with g.as_default():
        failing = ac.py_func(fail, [ac.constant(1.0)], ac.float32)
    async with ac.Session(g, config=CONFIG) as sess:
        variables, _ = await _started(sess, init)
        run = asyncio.ensure_future(sess.run([out, failing], _feed(x)))
        try:
            await _wait_queued(sess)
        finally:
            release.set()
        with pytest.raises(ac.errors.OpError, match="on purpose"):
            await run
        allocs = sess.memory_stats("/gpu:0").num_allocs
        await _check_dropped(sess, variables, allocs)


CHILD = textwrap.dedent(
    f"""
    import signal
    import threading
    import numpy as np
    import antcolony.compat.v1 as tf

    signal.signal(signal.SIGINT, signal.default_int_handler)
    x = tf.placeholder(tf.float32, [{SIZE}, {SIZE}])
    with tf.device("/gpu:0"):
        w = tf.Variable(np.eye({SIZE}, dtype=np.float32) * 0.5)
        y = x
        for _ in range({LINKS}):
            y = tf.matmul(y, w)
        out = tf.reduce_sum(y)
        small = tf.reduce_sum(tf.constant(np.arange(4, dtype=np.float32)) * 2.0)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    sess.run(small)  # its executor binds its constant on the GPU: kept with the variables
    variables = sess.memory_stats().bytes_in_use
    start = sess.memory_stats().num_allocs
    running = threading.Event()

    def interrupt():
        # Ctrl-C once the chain's first kernels have run (its later ones are queued)
        while sess.memory_stats().num_allocs < start + 2:
            running.wait(0.01)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    try:
        sess.run(out, {{x: np.ones(({SIZE}, {SIZE}), np.float32)}})
        print("returned", flush=True)
    except KeyboardInterrupt:
        at_abort = sess.memory_stats().num_allocs
        for _ in range(12000):
            if sess.memory_stats().bytes_in_use == variables:
                print("ran after", sess.memory_stats().num_allocs - at_abort, flush=True)
                break
            running.wait(0.01)
        assert sess.run(small) == 12.0
        print("small ran", flush=True)
    sess.close()
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_on_a_blocking_run_drops_its_queued_gpu_launches(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {
        **os.environ,
        "ANTCOLONY_GPU_BACKEND": "sim",
        "ANTCOLONY_SIM_GPU_COUNT": "1",
        "ANTCOLONY_SIM_GPU_MEMORY": str(1024 * MiB),
    }
    child = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=240, env=env, check=False
    )
    out = child.stdout
    assert child.returncode == 0, (out, child.stderr)
    assert "returned" not in out, out
    # "ran after" is printed once the memory is back to the variables
    ran = [int(line.split()[-1]) for line in out.splitlines() if line.startswith("ran after")]
    assert ran and ran[0] < LINKS // 2, (out, child.stderr)
    assert "small ran" in out, (out, child.stderr)
