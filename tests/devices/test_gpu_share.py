"""The compute share's duty cycle, replayed on a simulated clock: kernels of random lengths with
random host gaps, launches held for as long as ``hold_for`` says, and the post-step pause the
resource manager takes. The busy fraction over the run must be the target, or the job's own
unpaced fraction when that is lower (a cap never binds below it)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from antcolony.devices.gpu_share import ComputeShare
from tests.manual_clock import ManualClock

MS = 1e-3


def replay(
    percent: int, steps: list[list[tuple[float, float]]], parallel: bool = False
) -> tuple[float, float]:
    """Run ``steps`` (each a list of (host gap before the launch, kernel length)) under the
    share; returns (busy fraction paced, busy fraction of the same work unpaced)."""
    clock = ManualClock()
    share = ComputeShare(clock=clock)
    share.set_percent(percent)
    busy = natural = 0.0
    for kernels in steps:
        if parallel:  # the step's kernels side by side on two streams, after the first gap
            gap = kernels[0][0]
            clock.now += gap
            clock.now += share.hold_for(clock.now)
            lengths = sorted(length for _, length in kernels)
            start, ends = clock.now, [0.0, 0.0]
            for _ in lengths:
                share.started()
            for i, length in enumerate(lengths):  # kernel i runs on stream i % 2, in order
                share.finished(start + ends[i % 2], start + ends[i % 2] + length)
                ends[i % 2] += length
            busy += max(ends)
            natural += gap + max(ends)
            clock.now = start + max(ends)
        else:
            for gap, length in kernels:
                clock.now += gap
                clock.now += share.hold_for(clock.now)  # the loop's timer fires, the launch goes
                share.started()
                share.finished(clock.now, clock.now + length)
                clock.now += length
                busy += length
                natural += gap + length
        clock.now += max(share.owed_now(), 0.0)  # the post-step pause
    return busy / clock.now, busy / natural


kernel = st.tuples(st.floats(0.0, 3 * MS), st.floats(2 * MS, 30 * MS))
workload = st.lists(st.lists(kernel, min_size=1, max_size=8), min_size=8, max_size=30)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(percent=st.integers(5, 100), steps=workload)
def test_a_chain_is_busy_its_share_of_the_time(percent, steps):
    paced, unpaced = replay(percent, steps)
    target = min(percent / 100, unpaced)
    assert paced <= percent / 100 + 0.02
    assert paced >= target - 0.05, (paced, target)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(percent=st.integers(5, 100), steps=workload)
def test_side_by_side_kernels_count_once(percent, steps):
    paced, unpaced = replay(percent, steps, parallel=True)
    target = min(percent / 100, unpaced)
    assert paced <= percent / 100 + 0.02
    assert paced >= target - 0.05, (paced, target)


def test_a_new_share_starts_without_the_old_debt_or_credit():
    clock = ManualClock()
    share = ComputeShare(clock=clock)
    share.set_percent(10)
    share.started()
    share.finished(0.0, 0.1)  # 100 ms busy at 10 %: 900 ms owed
    clock.now = 0.1
    assert share.hold_for(clock.now) == pytest.approx(0.9)
    share.set_percent(50)
    assert share.hold_for(clock.now) == 0.0
    clock.now = 10.0  # a long idle earns at most a little credit
    share.started()
    share.finished(10.0, 10.1)
    clock.now = 10.1
    assert share.hold_for(clock.now) >= 0.1 - 0.011


def test_idle_inside_a_busy_period_pays_the_debt():
    """A completion still on its way to the loop keeps the period open while the device idles."""
    clock = ManualClock()
    share = ComputeShare(clock=clock)
    share.set_percent(50)
    share.started()
    share.started()
    share.finished(0.0, 0.010)
    share.finished(0.030, 0.040)  # 20 ms of idle between the two kernels
    clock.now = 0.040
    assert share.hold_for(clock.now) == 0.0  # 20 ms busy owes 20 ms: already paid inside the period
