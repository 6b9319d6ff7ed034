"""Dropping launches (``DropLaunches``, what the executors of an aborted step and
``Session.close`` ask of the GPU workers): the worker's waiting launches that match leave its
queue, a stream skips the matching launches it reaches (reported as ``LaunchDropped``, never
run), and the reply's futures are done once every stream has passed what was enqueued before
the drop."""

from __future__ import annotations

import asyncio
import itertools
import threading

from hypothesis import given
from hypothesis import strategies as st

from antcolony.actors.actor import Actor
from antcolony.actors.runtime import get_runtime
from antcolony.devices.backends.sim import SimBackend
from antcolony.devices.gpu import LAUNCH_DEPTH, GpuWorker
from antcolony.devices.launch import DropLaunches, KernelDone, Launch, LaunchDropped
from antcolony.devices.launch_queue import LaunchQueue
from antcolony.devices.worker_stats import GetWorkerStatistics


@given(st.lists(st.tuples(st.integers(-2, 2), st.booleans()), max_size=50))
def test_remove_if_drops_the_matching_launches_and_keeps_the_others_order(pushes):
    queue, seq = LaunchQueue(), itertools.count()
    launches = [Launch((next(seq), drop), None, [], priority, None) for priority, drop in pushes]
    for launch in launches:
        queue.push(launch)
    removed = queue.remove_if(lambda launch: launch.step[1])
    kept = [launch for launch in launches if not launch.step[1]]
    assert removed == len(launches) - len(kept) and len(queue) == len(kept)
    assert [queue.pop() for _ in range(len(queue))] == sorted(kept, key=lambda m: (-m.priority, m.step[0]))


class _Sink(Actor):
    """Collects KernelDones; told ``(n, future)``, sets the future once ``n`` have arrived."""

    def __init__(self) -> None:
        self.got: list[KernelDone] = []
        self.waiting: tuple[int, asyncio.Future] | None = None

    def on_receive(self, msg: object) -> None:
        if isinstance(msg, tuple):
            self.waiting = msg  # type: ignore[assignment]
        else:
            assert isinstance(msg, KernelDone)
            self.got.append(msg)
        self._check()

    def _check(self) -> None:
        if self.waiting is not None and len(self.got) >= self.waiting[0]:
            self.waiting[1].set_result(list(self.got))


async def test_a_worker_drops_queued_and_stream_queued_launches_and_says_when_its_streams_are_past_them():
    rt = get_runtime()
    worker = rt.spawn(GpuWorker, SimBackend(1, 1 << 30), 0, 1, 1)
    sink = rt.spawn(_Sink)
    gate = threading.Event()
    ran: list[str] = []
    # one running launch holds the stream; behind it a full stream queue and more waiting in the
    # worker's own queue; "keep" launches are interleaved with the ones to drop
    worker.tell(Launch("keep", gate.wait, [30], 0, sink))
    n = LAUNCH_DEPTH + 10
    for i in range(n):
        tag = "drop" if i % 2 else "keep"
        worker.tell(Launch(tag, ran.append, [tag], 0, sink))
    stats = await worker.ask(GetWorkerStatistics())
    assert stats.queued == n + 1 - LAUNCH_DEPTH
    dropped, drained = await worker.ask(DropLaunches(lambda tag: tag == "drop"))
    assert 0 < dropped < n // 2  # some from the worker's queue, the rest off the stream
    gate.set()
    await asyncio.wait_for(asyncio.gather(*drained), 30)
    assert "drop" not in ran
    # every launch is reported, the dropped ones as LaunchDropped, those taken out of the
    # worker's queue too: a node may hold something until it hears (an engine node holds its
    # variables' grant; unreported, the next step on those variables waited for ever)
    reported: asyncio.Future = asyncio.get_running_loop().create_future()
    sink.tell((n + 1, reported))
    got = await asyncio.wait_for(reported, 30)
    assert ran == ["keep"] * (n // 2)  # every kept launch ran (some after the drain), no dropped one
    failed = [m for m in got if m.error is not None]
    assert len(failed) == n // 2
    assert all(isinstance(m.error, LaunchDropped) and m.step == "drop" for m in failed)
    after = await worker.ask(GetWorkerStatistics())
    assert after.queued == 0 and after.in_flight == 0, after


async def test_each_drop_stays_in_force_until_the_stream_passes_its_own_point():
    """Drops share one predicate (every executor drops "the aborted steps' launches"): a step
    aborted while an earlier drop is still in force is dropped too, although the earlier drop's
    point is passed before the stream reaches its launch."""
    loop = asyncio.get_running_loop()
    reported: list = []
    stream = SimBackend(1, 1 << 30).create_stream(0, "compute0", loop, reported.extend)
    aborted: set[str] = set()
    ran: list[str] = []

    def of_aborted(tag: str) -> bool:
        return tag in aborted

    try:
        gate = threading.Event()
        stream.launch(gate.wait, [30], "running")  # holds the stream
        aborted.add("a")
        first = stream.drop(of_aborted)  # its point: after "running"
        stream.launch(ran.append, ["b"], "b")  # behind the first drop's point
        stream.launch(ran.append, ["c"], "c")
        aborted.add("b")
        second = stream.drop(of_aborted)  # the same predicate: b's launch is before its point
        gate.set()
        await asyncio.wait_for(asyncio.gather(first, second), 30)
        await asyncio.wait_for(_until_reported(reported, 3), 30)
    finally:
        stream.close()
    assert ran == ["c"]
    errors = {token: error for token, _, error, _, _ in reported}
    assert isinstance(errors["b"], LaunchDropped) and errors["c"] is None and errors["running"] is None


async def _until_reported(reported: list, n: int) -> None:
    while len(reported) < n:
        await asyncio.sleep(0.001)
