"""A run's deadline (``RunOptions.timeout_in_ms``) counts from the call (issue 27, item 5): the
actions before and after the step are inside it, a job suspended by perfControl 0 included."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import numpy as np
import pytest

import antcolony as ac
from antcolony.actors.run_actions import RunAction, RunGroup
from tests.waiting import until

MiB = 1 << 20


def _write_config(path: Path, **body: object) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(body))
    os.replace(tmp, path)


def _model() -> tuple[ac.Graph, ac.Tensor, ac.Tensor]:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [64, 64], name="x")
        with ac.device("/gpu:0"):
            out = ac.reduce_sum(ac.matmul(x, x))
    return g, x, out


async def test_a_deadline_ends_a_run_suspended_by_perf_control_zero(tmp_path):
    path = tmp_path / "job.json"
    _write_config(path, perfControl=100)
    g, x, out = _model()
    config = ac.SessionConfig(
        gpu_backend="sim",
        sim_gpu_count=1,
        sim_gpu_memory=256 * MiB,
        resource_config_file=str(path),
        config_poll_interval=0.02,
    )
    feed = {x: np.ones((64, 64), np.float32)}
    async with ac.Session(g, config=config) as sess:
        await sess.run(out, feed)
        _write_config(path, perfControl=0)
        await sess.resource_manager.refresh()
        options = ac.RunOptions(timeout_in_ms=300)
        # a hang here (the deadline ignored while suspended) fails the test when wait_for gives up
        with pytest.raises(ac.errors.DeadlineExceededError, match="perfControl"):
            await asyncio.wait_for(sess.run(out, feed, options=options), 30)
        assert sess.resource_manager.stats().suspended_callers == 0
        # suspended still: a run without a deadline waits until the job is resumed
        waiting = asyncio.ensure_future(sess.run(out, feed))
        await until(lambda: sess.resource_manager.stats().suspended_callers == 1, "the run suspended")
        _write_config(path, perfControl=100)
        assert await asyncio.wait_for(waiting, 30) == pytest.approx(64.0**3)


async def test_a_deadline_counts_the_actions_before_the_step():
    g = ac.Graph()
    with g.as_default():
        y = ac.constant(2.0) * 3.0

    async def slow_before(ctx: object) -> None:
        await asyncio.sleep(30)

    async with ac.Session(g) as sess:
        sess.add_run_action(RunAction("slow-before", RunGroup.PRE, 1, slow_before))
        with pytest.raises(ac.errors.DeadlineExceededError, match="before the step"):
            await asyncio.wait_for(sess.run(y, options=ac.RunOptions(timeout_in_ms=200)), 20)


async def test_a_deadline_of_zero_or_less_is_none_and_a_met_deadline_returns_the_values():
    g = ac.Graph()
    with g.as_default():
        y = ac.constant(2.0) * 3.0
    async with ac.Session(g) as sess:
        for ms in (-1, 0, 60_000):
            assert await sess.run(y, options=ac.RunOptions(timeout_in_ms=ms)) == 6.0
