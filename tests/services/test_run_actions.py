"""Session-run actions: order by phase, context, failures reported by name, propagation."""

from __future__ import annotations

import logging

import pytest

import antcolony as ac
from antcolony.actors.run_actions import (
    RUN_ACTIONS,
    RunAction,
    RunGroup,
    register_run_action,
    run_actions_of,
)
from antcolony.actors.runtime import get_runtime


def _graph() -> tuple[ac.Graph, ac.Tensor]:
    g = ac.Graph()
    with g.as_default():
        c = ac.constant(2.0) * 3.0
    return g, c


async def test_actions_run_before_and_after_each_step_in_phase_order_across_registries():
    calls: list[tuple[str, str, float]] = []
    g, c = _graph()

    def record(tag: str):
        def fn(ctx):
            calls.append((tag, ctx.graph_id, ctx.duration_us))

        return fn

    async def async_post(ctx):
        calls.append(("post-async", ctx.graph_id, ctx.duration_us))

    register_run_action(RunGroup.POST, 5, name="test-global-post")(record("post-global-5"))
    try:
        async with ac.Session(g) as sess:
            run_actions_of(get_runtime()).add(
                RunAction("rt-post", RunGroup.POST, 1, record("post-runtime-1"))
            )
            sess.add_run_action(RunAction("s-post", RunGroup.POST, 2, async_post))
            sess.add_run_action(RunAction("s-pre", RunGroup.PRE, 1, record("pre")))
            assert await sess.run(c) == 6.0
    finally:
        RUN_ACTIONS.remove("test-global-post")
    assert [t for t, _, _ in calls] == ["pre", "post-runtime-1", "post-async", "post-global-5"]
    assert {gid for _, gid, _ in calls} == {"graph_1"}
    assert calls[0][2] == 0.0 and all(d > 0 for _, _, d in calls[1:])


async def test_a_failing_action_is_reported_by_name_and_the_step_still_succeeds(caplog):
    g, c = _graph()

    def boom(ctx):
        raise RuntimeError("disk full")

    async with ac.Session(g) as sess:
        sess.add_run_action(RunAction("stats-writer", RunGroup.POST, 1, boom))
        with caplog.at_level(logging.ERROR):
            assert await sess.run(c) == 6.0
    assert "stats-writer" in caplog.text and "disk full" in caplog.text


async def test_an_action_may_fail_the_step_with_the_errors_it_propagates():
    g, c = _graph()

    def stop(ctx):
        raise ac.errors.CancelledError(None, None, "suspended job cancelled")

    async with ac.Session(g) as sess:
        sess.add_run_action(RunAction("suspend", RunGroup.POST, 2, stop, (ac.errors.CancelledError,)))
        with pytest.raises(ac.errors.CancelledError, match="suspended job cancelled"):
            await sess.run(c)


async def test_two_actions_with_one_name_in_one_group_are_refused():
    async with ac.Session(ac.Graph()) as sess:
        sess.add_run_action(RunAction("x", RunGroup.POST, 1, lambda ctx: None))
        with pytest.raises(ValueError, match="already registered"):
            sess.add_run_action(RunAction("x", RunGroup.POST, 2, lambda ctx: None))
