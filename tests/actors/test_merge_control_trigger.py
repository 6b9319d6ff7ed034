"""Merge waits for its control inputs before it fires (dead or alive, they only order it), and
ControlTrigger fires once its control inputs arrived and is never dead (TF's executor rules)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import antcolony as ac
from antcolony.graph.control_flow import control_trigger, merge, switch


def _recorder(log: list[str], tag: str, delay: float = 0.0):
    lock = threading.Lock()

    def fn(*args: np.ndarray) -> np.float32:
        time.sleep(delay)
        with lock:
            log.append(tag)
        return np.float32(len(log))

    return fn


@pytest.mark.parametrize("live_input", [0, 1])
async def test_merge_fires_only_after_its_control_inputs(live_input):
    log: list[str] = []
    g = ac.Graph()
    with g.as_default():
        pred = ac.placeholder(ac.bool, [])
        x = ac.constant(3.0) + 0.0
        f, t = switch(x, pred)
        slow = ac.py_func(_recorder(log, "control", delay=0.3), [], ac.float32)
        with ac.control_dependencies([slow.op]):
            out, index = merge([f, t])
        after = ac.py_func(_recorder(log, "after merge"), [out], ac.float32)
    async with ac.Session(g) as sess:
        value, idx, _ = await sess.run([out, index, after], {pred: bool(live_input)})
    assert value == 3.0 and idx == live_input
    assert log == ["control", "after merge"]


@pytest.mark.slow
async def test_a_merge_of_dead_inputs_waits_for_its_control_inputs_and_is_dead():
    log: list[str] = []
    g = ac.Graph()
    with g.as_default():
        pred = ac.placeholder(ac.bool, [])
        x = ac.constant(1.0) + 0.0
        f, _ = switch(x, pred)
        g2, _ = switch(x, pred)
        slow = ac.py_func(_recorder(log, "control", delay=0.2), [], ac.float32)
        with ac.control_dependencies([slow.op]):
            out, _ = merge([f, g2])
        with ac.control_dependencies([out.op]):
            trigger = control_trigger()
        with ac.control_dependencies([trigger]):
            done = ac.py_func(_recorder(log, "after trigger"), [], ac.float32)
    async with ac.Session(g) as sess:
        await sess.run(done, {pred: True})  # the merge is dead; the trigger still lets `done` run
        assert log == ["control", "after trigger"]
        with pytest.raises(ac.errors.InvalidArgumentError, match="taken branch"):
            await sess.run(out, {pred: True})


async def test_a_control_dependency_on_an_untaken_branch_kills_a_no_op_but_not_a_control_trigger():
    g = ac.Graph()
    with g.as_default():
        pred = ac.placeholder(ac.bool, [])
        x = ac.constant(2.0) + 0.0
        untaken, _ = switch(x, pred)
        with ac.control_dependencies([untaken.op]):
            through_no_op = ac.no_op()
            through_trigger = control_trigger()
        with ac.control_dependencies([through_no_op]):
            killed = ac.identity(x) * 2.0
        with ac.control_dependencies([through_trigger]):
            alive = ac.identity(x) * 3.0
    async with ac.Session(g) as sess:
        assert await sess.run(alive, {pred: True}) == 6.0
        with pytest.raises(ac.errors.InvalidArgumentError, match="taken branch"):
            await sess.run(killed, {pred: True})
        assert await sess.run([alive, killed], {pred: False}) == [6.0, 4.0]  # both live when taken


async def test_a_control_trigger_without_inputs_just_runs():
    g = ac.Graph()
    with g.as_default():
        trigger = control_trigger()
        with ac.control_dependencies([trigger]):
            y = ac.constant(5.0) + 1.0
    async with ac.Session(g) as sess:
        assert await sess.run(y) == 6.0
        assert await sess.run(trigger) is None


async def test_cond_and_while_loop_still_run_with_control_inputs_on_merges():
    g = ac.Graph()
    with g.as_default():
        v = ac.Variable(0.0)
        bump = ac.assign_add(v, 1.0)
        p = ac.placeholder(ac.bool, [])
        with ac.control_dependencies([bump]):
            r = ac.cond(p, lambda: ac.constant(10.0), lambda: ac.constant(20.0))
        loop = ac.while_loop(lambda i: i < 5, lambda i: i + 1, [ac.constant(0)])
        init = ac.global_variables_initializer()
    async with ac.Session(g) as sess:
        await sess.run(init)
        assert await sess.run([r, loop], {p: True}) == [10.0, 5]
        assert await sess.run(r, {p: False}) == 20.0
        assert await sess.run(v) == 2.0
