"""Paced steps replayed on a simulated clock, with the resource manager's step-end pause planned
by ``StepSmoother`` and the GPU's ``ComputeShare`` holding launches, as the worker and manager
drive them (``devices/gpu.py``, ``actors/services/resource_manager.py``). The busy fraction must
stay the target over the run and over windows of a few steps; the paced step time must vary
much less than when each step pays its own debt in full."""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from antcolony.actors.services.step_smoother import StepSmoother
from antcolony.devices.gpu_share import ComputeShare
from tests.manual_clock import ManualClock

MS = 1e-3


@dataclass
class Replay:
    times: list[float]  # each step's length, its pause included
    marks: list[tuple[float, float]]  # (wall time, busy time) at each step end
    owed: float  # idle still owed at the end
    held: list[float]  # time each step's launches were held
    allowances: list[float]  # the allowance the smoother set after each step


def replay(percent: int, steps: list[list[tuple[float, float]]], smooth: bool = True) -> Replay:
    """Each step: (host gap, kernel length) launches in a chain, then the manager's pause."""
    clock = ManualClock()
    share = ComputeShare(clock=clock)
    share.set_percent(percent)
    smoother = StepSmoother()
    out = Replay([], [], 0.0, [], [])
    busy, last_end = 0.0, 0.0
    for n, kernels in enumerate(steps):
        busy_before, held = busy, 0.0
        for gap, length in kernels:
            clock.now += gap
            hold = share.hold_for(clock.now)
            held += hold
            clock.now += hold
            share.started()
            share.finished(clock.now, clock.now + length)
            clock.now += length
            busy += length
        owed = share.owed_now()
        if smooth:
            step_busy = None if n == 0 else busy - busy_before  # as the manager: none for the first
            pause = smoother.pause(clock.now - last_end, owed, step_busy, percent)
            share.defer(owed - pause, smoother.allowance(percent))
        else:
            pause = max(owed, 0.0)
        clock.now += pause
        out.times.append(clock.now - last_end)
        out.marks.append((clock.now, busy))
        out.held.append(held)
        out.allowances.append(smoother.allowance(percent))
        last_end = clock.now
    out.owed = share.owed_now()
    return out


def noisy_steps(rng: random.Random, n: int, cv: float, kernels: int = 8) -> list[list[tuple[float, float]]]:
    """Steps whose kernels all run ``lognormal(0, cv)`` times their usual 3 ms (a machine whose
    kernel speed swings from step to step), 0.5 ms of host work before each launch."""
    steps = []
    for _ in range(n):
        f = rng.lognormvariate(0.0, cv)
        steps.append([(0.5 * MS, 3 * MS * f * rng.uniform(0.9, 1.1)) for _ in range(kernels)])
    return steps


def cv_of(xs: list[float]) -> float:
    return statistics.pstdev(xs) / statistics.mean(xs)


# Smoothing moves idle time only: the less of a step is idle, the less of its swing it can even out.
@pytest.mark.parametrize(("percent", "cv_ratio"), [(10, 0.65), (25, 0.65), (50, 0.7), (75, 0.85)])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_smoothing_evens_step_times_and_keeps_the_share(percent, cv_ratio, seed):
    steps = noisy_steps(random.Random(seed), 60, cv=0.2)
    exact = replay(percent, steps, smooth=False).times
    run = replay(percent, steps)
    smooth, marks, owed = run.times, run.marks, run.owed
    assert cv_of(smooth[4:]) <= cv_ratio * cv_of(exact[4:]), (cv_of(smooth[4:]), cv_of(exact[4:]))
    wall, busy = marks[-1]
    assert busy / wall == pytest.approx(percent / 100, abs=0.01)
    assert busy / (wall + max(owed, 0.0)) <= percent / 100 + 0.002  # nothing forgiven
    for (w0, b0), (w1, b1) in zip(marks[4:], marks[12:]):  # every window of 8 steps
        assert (b1 - b0) / (w1 - w0) == pytest.approx(percent / 100, abs=0.05)


def test_a_long_step_is_held_inside_once_past_its_allowance():
    """A step 6x as long as usual is not run as one unpaced burst: once its debt is past the
    allowance, the share holds its launches for (nearly) all the rest."""
    steps = noisy_steps(random.Random(0), 20, cv=0.0)
    steps.append([(0.5 * MS, 3 * MS)] * 48)
    run = replay(25, steps)
    held, allowance = run.held[-1], run.allowances[-2]  # the allowance the long step ran under
    debt = 48 * 3 * MS * 3  # the long step's own debt at 25 %
    assert allowance < 0.5 * debt
    assert held >= 0.8 * (debt - allowance), (held, debt, allowance)


kernel = st.tuples(st.floats(0.0, 3 * MS), st.floats(2 * MS, 30 * MS))
workload = st.lists(st.lists(kernel, min_size=1, max_size=8), min_size=12, max_size=30)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(percent=st.integers(5, 100), steps=workload)
def test_random_steps_keep_the_share(percent, steps):
    """Any workload: the busy fraction never exceeds the target once what is still owed is
    counted, and over the run it is within 0.05 of it (or of the job's own unpaced fraction)."""
    run = replay(percent, steps)
    marks, owed = run.marks, run.owed
    wall, busy = marks[-1]
    natural = sum(gap + length for kernels in steps for gap, length in kernels)
    target = min(percent / 100, busy / natural)
    assert busy / (wall + max(owed, 0.0)) <= percent / 100 + 0.002
    assert busy / wall <= percent / 100 + 0.05
    assert busy / wall >= target - 0.05, (busy / wall, target)


@pytest.mark.parametrize("percent", [25, 50, 75])
def test_a_step_stalled_on_the_host_does_not_stretch_the_steps_after_it(percent):
    """Host time is not GPU work: after a step that waited 300 ms on the host, the next steps
    are paced by what their kernels ask for, so the busy fraction right after stays the target."""
    steps = noisy_steps(random.Random(7), 30, cv=0.0)
    steps[10] = [(0.3, 3 * MS), *steps[10][1:]]  # 300 ms of host work before the first launch
    marks = replay(percent, steps).marks
    (w0, b0), (w1, b1) = marks[10], marks[18]
    assert (b1 - b0) / (w1 - w0) == pytest.approx(percent / 100, abs=0.03)
