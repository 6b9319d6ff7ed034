"""The resource manager through the public API: config changes at step boundaries, shrink
retries, pacing, suspend/resume, and other sessions unaffected."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import antcolony as ac
from antcolony.cli_config import format_status_table
from antcolony.config.file_listener import GetStats
from antcolony.config.status_file import parse_status
from tests.waiting import LoopTurns, until, until_async

MiB = 1 << 20
BUS = "01:00.0"  # the simulated GPU 0's bus id without domain, as AntMan keys it


def write_config(path: Path, **body) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(body))
    os.replace(tmp, path)


def _config(path: Path, **kw) -> ac.SessionConfig:
    base = dict(
        gpu_backend="sim",
        sim_gpu_count=1,
        sim_gpu_memory=512 * MiB,
        resource_config_file=str(path),
        config_poll_interval=0.02,
    )
    base.update(kw)
    return ac.SessionConfig(**base)


def _model(size: int = 256, depth: int = 4) -> tuple[ac.Graph, dict]:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [size, size], name="x")
        with ac.device("/gpu:0"):
            w = ac.Variable(np.eye(size, dtype=np.float32) * 0.5, name="w")
            h = x
            for _ in range(depth):
                h = ac.matmul(h, w)
            out = ac.reduce_sum(h)
        init = w.initializer
    return g, {"x": x, "out": out, "init": init, "feed": {x: np.ones((size, size), np.float32)}}


async def _until(predicate, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.01)


async def test_a_new_memory_limit_takes_effect_at_the_first_step_boundary_after_the_listener_sees_it(
    tmp_path,
):
    path = tmp_path / "job.json"
    write_config(path, gpuConfigInfo={BUS: {"maxDeviceMem": 256 * MiB}})
    g, t = _model()
    async with ac.Session(g, config=_config(path)) as sess:
        manager = sess.resource_manager
        await manager.refresh()
        await sess.run(t["init"])
        assert sess.memory_stats("/gpu:0").bytes_limit == 256 * MiB
        write_config(path, gpuConfigInfo={BUS: {"maxDeviceMem": 64 * MiB}})
        await manager.refresh()
        assert sess.memory_stats("/gpu:0").bytes_limit == 256 * MiB  # not before a boundary
        await sess.run(t["out"], t["feed"])
        assert sess.memory_stats("/gpu:0").bytes_limit == 64 * MiB
        stats = manager.stats()
    assert stats.configs_applied == 2
    assert stats.last_apply_latency_s is not None and stats.last_apply_latency_s < 5.0


async def test_a_limit_above_the_initial_one_is_clamped(tmp_path):
    path = tmp_path / "job.json"
    write_config(path, gpuConfigInfo={"gpu:0": {"maxDeviceMem": 4096 * MiB}})
    g, t = _model()
    async with ac.Session(g, config=_config(path, gpu_memory_limit=128 * MiB)) as sess:
        await sess.run(t["init"])
        await sess.run(t["out"], t["feed"])
        assert sess.memory_stats("/gpu:0").bytes_limit == 128 * MiB


async def test_invalid_perf_control_is_rejected_and_the_last_good_config_kept(tmp_path):
    path = tmp_path / "job.json"
    write_config(path, gpuConfigInfo={BUS: {"maxDeviceMem": 128 * MiB}}, perfControl=100)
    g, t = _model()
    async with ac.Session(g, config=_config(path)) as sess:
        await sess.resource_manager.refresh()
        await sess.run(t["init"])
        assert sess.memory_stats("/gpu:0").bytes_limit == 128 * MiB
        for rejected, bad in enumerate((150, -1), start=1):
            write_config(path, gpuConfigInfo={BUS: {"maxDeviceMem": 32 * MiB}}, perfControl=bad)
            await sess.resource_manager.refresh()
            # the listener has read this version and refused it (not merely not looked yet)
            await until_async(lambda n=rejected: _rejected(sess, n), "the bad config rejected")
            await sess.run(t["out"], t["feed"])
            assert sess.memory_stats("/gpu:0").bytes_limit == 128 * MiB
            assert sess.resource_manager.perf_control == 100


async def _rejected(sess: ac.Session, n: int) -> bool:
    return (await sess.resource_manager.listener.ask(GetStats())).rejected >= n


async def test_a_shrink_blocked_by_live_data_is_retried_until_the_data_is_freed(tmp_path):
    path = tmp_path / "job.json"
    write_config(path, perfControl=100)
    g = ac.Graph()
    with g.as_default(), ac.device("/gpu:0"):
        hold = ac.Variable(ac.zeros([(4 * MiB) // 4]), name="hold")  # 4 MiB resident
        small = ac.Variable(np.zeros(16, np.float32), name="small")
        release = ac.assign(hold, np.zeros(1, np.float32), validate_shape=False)
        tick = ac.assign_add(small, np.ones(16, np.float32))
        init = ac.group(hold.initializer, small.initializer)
    status_path = tmp_path / "status.json"
    async with ac.Session(g, config=_config(path, statistics_file=str(status_path))) as sess:
        await sess.resource_manager.refresh()
        await sess.run(init)
        write_config(path, gpuConfigInfo={BUS: {"maxDeviceMem": 2 * MiB}}, perfControl=100)
        await sess.resource_manager.refresh()
        await sess.run(tick.op)
        blocked = sess.memory_stats("/gpu:0").bytes_limit
        assert blocked > 2 * MiB  # live data holds its region
        await sess.run(tick.op)  # statistics (phase 1) report before the limit (phase 2): one step later
        assert await sess.flush_statistics()
        # the status file says what was asked, what was reached and what blocks it
        gpu = json.loads(status_path.read_text())["gpuUsageInfo"][BUS]
        assert (gpu["deviceMemLimitAsked"], gpu["deviceMemLimit"]) == (2 * MiB, blocked)
        assert "live allocation" in gpu["deviceMemLimitReason"] and "4.00 MiB" in gpu["deviceMemLimitReason"]
        shown = format_status_table(parse_status(status_path.read_text(), str(status_path)))
        assert (
            f"memory limit {blocked / MiB:.1f} MiB (asked 2.0 MiB: " in shown
            and "live allocation(s) of 4.00 MiB" in shown
        ), shown
        await sess.run(release.op)  # frees the 4 MiB tensor; the retry at this boundary reaches the target
        await sess.run(tick.op)
        assert sess.memory_stats("/gpu:0").bytes_limit == 2 * MiB
        await sess.run(tick.op)
        assert await sess.flush_statistics()
    gpu = json.loads(status_path.read_text())["gpuUsageInfo"][BUS]
    assert (gpu["deviceMemLimitAsked"], gpu["deviceMemLimit"], gpu["deviceMemLimitReason"]) == (
        2 * MiB,
        2 * MiB,
        "",
    )


def _wide_model(size: int = 384, width: int = 8) -> tuple[ac.Graph, dict]:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [size, size], name="x")
        with ac.device("/gpu:0"):
            ws = [ac.Variable(np.eye(size, dtype=np.float32) * (i + 1), name=f"w{i}") for i in range(width)]
            out = ac.reduce_sum(ac.add_n([ac.matmul(x, w) for w in ws]))
        init = ac.global_variables_initializer()
    return g, {"x": x, "out": out, "init": init, "feed": {x: np.ones((size, size), np.float32)}}


def _union(intervals: list[tuple[float, float]]) -> float:
    total, cur = 0.0, None
    for s, e in sorted(intervals):
        if cur is None or s > cur[1]:
            total += cur[1] - cur[0] if cur else 0.0
            cur = [s, e]
        else:
            cur[1] = max(cur[1], e)
    return total + (cur[1] - cur[0] if cur else 0.0)


async def _busy_fraction(sess: ac.Session, t: dict, steps: int) -> tuple[float, list[float]]:
    """GPU busy fraction as the timeline shows it: the union of compute kernel intervals over
    the wall time of ``steps`` steps (pauses included); and each step's time."""
    kernels, times = [], []
    start = last = time.perf_counter()
    for _ in range(steps):
        md = ac.RunMetadata()
        await sess.run(
            t["out"], t["feed"], options=ac.RunOptions(trace_level=ac.RunOptions.FULL_TRACE), run_metadata=md
        )
        now = time.perf_counter()
        times.append(now - last)
        last = now
        kernels += [(s.start_us / 1e6, s.end_us / 1e6) for s in md.step_stats if "/compute" in s.worker]
    return _union(kernels) / (last - start), times


@pytest.mark.slow
@pytest.mark.timing  # busy fractions of wall time: another worker's load starves it
@pytest.mark.parametrize("shape", ["chain", "wide"])
async def test_perf_control_50_halves_the_gpu_busy_time_the_timeline_shows(tmp_path, shape):
    path = tmp_path / "job.json"
    write_config(path, perfControl=100)
    g, t = _model(size=512, depth=8) if shape == "chain" else _wide_model(size=512)
    async with ac.Session(g, config=_config(path, intra_op_threads=1)) as sess:
        await sess.run(t["init"])
        for _ in range(2):
            await sess.run(t["out"], t["feed"])
        unpaced, _ = await _busy_fraction(sess, t, 6)
        write_config(path, perfControl=50)
        await sess.resource_manager.refresh()
        await sess.run(t["out"], t["feed"])  # the config is in force from this boundary
        busy, times = await _busy_fraction(sess, t, 16)
    assert unpaced > 0.5, unpaced  # the graph keeps the device busy, so the cap binds
    assert 0.42 <= busy <= 0.58, (busy, times)


async def test_pacing_idles_the_job_and_the_device_is_busy_at_most_its_share(tmp_path):
    """perfControl 20: the job idles for its share (launches held in idle slots, post-step
    pauses), and the device's busy time is at most a fifth of the steps' wall time. Only the
    upper bound is asserted: a loaded machine adds idle time (which pays the debt too) but never
    busy time the debt does not follow, so the bound holds under any load. That holds never
    block the loop is test_pacing_sleeps_never_block_the_loop's part."""
    path = tmp_path / "job.json"
    write_config(path, perfControl=20)
    g, t = _model(size=384, depth=8)
    async with ac.Session(g, config=_config(path, intra_op_threads=1)) as sess:
        await sess.resource_manager.refresh()
        await sess.run(t["init"])
        before = (await sess.resource_manager.share_stats())[0]
        steps = 6
        start = time.perf_counter()
        for _ in range(steps):
            await sess.run(t["out"], t["feed"])
        wall = time.perf_counter() - start
        after = (await sess.resource_manager.share_stats())[0]
        paused = sess.resource_manager.stats().paused_s
    busy, held = after.busy_s - before.busy_s, after.held_s - before.held_s
    assert after.percent == 20 and busy > 0.0 and held + paused > 0.0, (before, after, paused)
    # each busy period owes four times its length in idle time, paid by held launches and
    # post-step pauses; the pacer may carry up to half a mean step's idle time past the last
    # step (smoothing step times), and a new share may start with up to 10 ms of credit
    carried = 0.5 * 0.8 * wall / steps
    assert busy <= 0.2 * (wall + carried) + 0.02 * wall + 0.01, (busy, held, wall)


async def test_suspend_and_resume_keep_memory_and_another_session_keeps_running(tmp_path):
    path = tmp_path / "job.json"
    write_config(path, perfControl=100)
    g, t = _model()
    other_g, other = _model(size=64, depth=1)
    async with (
        ac.Session(g, config=_config(path)) as sess,
        ac.Session(
            other_g, config=ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1, sim_gpu_memory=512 * MiB)
        ) as free,
    ):
        await sess.run(t["init"])
        await free.run(other["init"])
        write_config(path, perfControl=0)
        await sess.resource_manager.refresh()
        resident = sess.memory_stats("/gpu:0").bytes_in_use
        suspended = asyncio.ensure_future(sess.run(t["out"], t["feed"]))
        await until(
            lambda: sess.resource_manager.stats().suspended_callers == 1, "the run suspended at its boundary"
        )
        assert not suspended.done()
        assert sess.memory_stats("/gpu:0").bytes_in_use == resident
        for _ in range(5):
            await free.run(other["out"], other["feed"])  # the other job is not held back
        write_config(path, perfControl=100)
        value = await asyncio.wait_for(suspended, 5)
        assert value == pytest.approx(256 * 256 * 0.5**4)
        assert sess.resource_manager.stats().suspended_callers == 0


@pytest.mark.timing  # the close is asserted to take under a second of wall time
async def test_close_ends_a_suspended_job_promptly(tmp_path):
    path = tmp_path / "job.json"
    write_config(path, perfControl=100)
    g, t = _model()
    sess = ac.Session(g, config=_config(path))
    await sess.__aenter__()
    await sess.resource_manager.refresh()
    await sess.run(t["init"])
    write_config(path, perfControl=0)
    await sess.resource_manager.refresh()
    suspended = asyncio.ensure_future(sess.run(t["out"], t["feed"]))
    await until(
        lambda: sess.resource_manager.stats().suspended_callers == 1, "the run suspended at its boundary"
    )
    assert not suspended.done()
    started = time.perf_counter()
    await sess.close()
    with pytest.raises(ac.errors.CancelledError, match="suspended"):
        await asyncio.wait_for(suspended, 2)
    assert time.perf_counter() - started < 1.0


async def test_pacing_sleeps_never_block_the_loop(tmp_path, monkeypatch):
    """Observable facts instead of tick rates: the job is paced (its idle debt paid by launches held
    on a loop timer or by post-step pauses), a coroutine of this test runs while each step and its
    pause run, and nothing sleeps on the loop's thread."""
    path = tmp_path / "job.json"
    write_config(path, perfControl=25)
    g, t = _model()
    loop_thread = threading.get_ident()
    real_sleep = time.sleep

    def sleep(seconds: float) -> None:
        assert threading.get_ident() != loop_thread, "time.sleep on the event loop's thread"
        real_sleep(seconds)

    async with ac.Session(g, config=_config(path)) as sess:
        await sess.resource_manager.refresh()
        await sess.run(t["init"])
        monkeypatch.setattr(time, "sleep", sleep)
        async with LoopTurns() as turns:
            for _ in range(4):
                before = turns.count
                assert await sess.run(t["out"], t["feed"]) == pytest.approx(256 * 256 * 0.5**4)
                assert turns.count > before  # the loop turned while the step (and its pause) ran
        share = (await sess.resource_manager.share_stats())[0]
        paused = sess.resource_manager.stats().paused_s
    assert share.percent == 25 and share.held_s + paused > 0.0, (share, paused)


async def test_the_status_file_reports_the_allocator_figures_of_the_job(tmp_path):
    config_path, status_path = tmp_path / "job.json", tmp_path / "status.json"
    write_config(config_path, gpuConfigInfo={BUS: {"maxDeviceMem": 8 * MiB}}, perfControl=100)
    g, t = _model(size=512, depth=2)  # a 1 MiB weight and 1 MiB activations: some spill to the host
    config = _config(config_path, statistics_file=str(status_path), vmem=True)
    async with ac.Session(g, config=config) as sess:
        await sess.resource_manager.refresh()
        await sess.run(t["init"])
        for _ in range(3):
            await sess.run(t["out"], t["feed"])
        stats = sess.memory_stats("/gpu:0")
        assert await sess.flush_statistics()
    status = json.loads(status_path.read_text())
    gpu = status["gpuUsageInfo"][BUS]
    assert gpu["deviceMemUsedMin"] == stats.bytes_in_use
    assert gpu["deviceMemPoolSize"] == stats.pool_bytes
    assert gpu["deviceMemStable"] == stats.stable_bytes
    assert gpu["hostMemPoolSize"] == stats.host_bytes_limit
    assert stats.bytes_in_use <= gpu["deviceMemUsedMax"] <= 8 * MiB
    assert gpu["deviceMemUsedNvidia"] == stats.pool_bytes  # the device's total: this process alone
    assert set(status["Durations"]) >= {"graph_2"} and status["miniBatchDuration"] > 0
