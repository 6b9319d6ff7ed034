"""GPU streams and the launch pipeline: in-order queues run back to back without waiting for the
loop, completions batched yet each with its own timings, errors, inputs dropped, bounded depth."""

from __future__ import annotations

import asyncio
import gc
import itertools
import threading
import time
import weakref
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from antcolony.actors.actor import Actor
from antcolony.actors.runtime import get_runtime
from antcolony.devices.backends.base import Completion
from antcolony.devices.backends.sim import SimBackend
from antcolony.devices.gpu import LAUNCH_DEPTH, GpuWorker
from antcolony.devices.launch import KernelDone, Launch
from antcolony.devices.launch_queue import LaunchQueue
from antcolony.devices.worker_stats import GetWorkerStatistics, WorkerStatistics
from tests.waiting import until, until_async


class _Stream:
    """A simulated stream on a loop of its own that does not run until ``collect``."""

    def __init__(self, label: str = "compute0") -> None:
        self.loop = asyncio.new_event_loop()
        self.batches: list[list[Completion]] = []
        self.on_batch: Any = None  # also called with each batch as it arrives
        self.stream = SimBackend(1, 1 << 30).create_stream(0, label, self.loop, self._arrived)

    def _arrived(self, batch: list[Completion]) -> None:
        if self.on_batch is not None:
            self.on_batch(batch)
        self.batches.append(batch)

    def collect(self, n: int) -> list[Completion]:
        """Run the loop until ``n`` completions have arrived; all of them, in arrival order."""
        self.loop.run_until_complete(until(lambda: sum(map(len, self.batches)) >= n, f"{n} completions"))
        return [c for batch in self.batches for c in batch]

    def close(self) -> None:
        self.stream.close()
        self.loop.close()


@pytest.fixture
def sim_stream():
    s = _Stream()
    yield s
    s.close()


def test_a_stream_runs_its_queue_in_order_back_to_back_while_the_loop_is_busy(sim_stream):
    ran: list[tuple[int, str]] = []
    last = threading.Event()

    def kernel(i: int) -> int:
        ran.append((i, threading.current_thread().name))
        return i * 10

    for i in range(10):
        sim_stream.stream.launch(kernel, [i], f"k{i}")
    sim_stream.stream.launch(last.set, [], "last")
    # The loop has not run once: no completion has been delivered, yet every launch ran.
    assert last.wait(5), "the stream waited for the loop between launches"
    assert [i for i, _ in ran] == list(range(10))
    assert len({name for _, name in ran}) == 1
    done = sim_stream.collect(11)
    assert [c[0] for c in done] == [f"k{i}" for i in range(10)] + ["last"]
    assert [c[1] for c in done[:10]] == [i * 10 for i in range(10)]
    # each kernel reports its own interval; on one stream they never overlap
    for (*_, s1, e1), (*_, s2, e2) in itertools.pairwise(done):
        assert s1 <= e1 <= s2 <= e2
    # the ten completions that arrived while the loop was away reached it in one batch
    assert len(sim_stream.batches[0]) >= 10


def test_a_raising_kernel_reports_its_error_and_the_next_launch_still_runs(sim_stream):
    def fail() -> None:
        raise ValueError("bad kernel")

    sim_stream.stream.launch(lambda: 1, [], "a")
    sim_stream.stream.launch(fail, [], "b")
    sim_stream.stream.launch(lambda: 3, [], "c")
    done = sim_stream.collect(3)
    assert [(token, result) for token, result, *_ in done] == [("a", 1), ("b", None), ("c", 3)]
    errors = [c[2] for c in done]
    assert errors[0] is None and errors[2] is None
    assert isinstance(errors[1], ValueError) and str(errors[1]) == "bad kernel"


class _Tensor:
    """An input that can be watched for release."""


def test_a_failed_kernels_inputs_go_with_its_error_without_the_garbage_collector(sim_stream):
    """The error's traceback holds the kernel's frames (their locals hold its inputs): once
    nobody holds the error (its node had stopped), refcounting alone must free the inputs: no
    cycle through the stream thread's frame."""
    value = _Tensor()
    ref = weakref.ref(value)

    def fail(t: _Tensor) -> None:
        raise ValueError("bad kernel")

    gc.disable()
    try:
        sim_stream.stream.launch(fail, [value], "x")
        del value
        (done,) = sim_stream.collect(1)
        assert isinstance(done[2], ValueError)
        del done
        sim_stream.batches.clear()
        assert ref() is None
    finally:
        gc.enable()


def test_a_kernels_inputs_are_released_before_its_completion_arrives(sim_stream):
    refs = []
    seen: list[bool] = []
    sim_stream.on_batch = lambda batch: seen.extend(refs[c[0]]() is None for c in batch)
    for i in range(5):
        value = _Tensor()
        refs.append(weakref.ref(value))
        sim_stream.stream.launch(lambda t: None, [value], i)
        del value
    sim_stream.collect(5)
    assert seen == [True] * 5


def test_a_closed_stream_drops_the_launches_queued_behind_the_running_one():
    s = _Stream(label="closing")
    gate = threading.Event()
    ran: list[str] = []
    s.stream.launch(gate.wait, [5], "running")
    s.stream.launch(ran.append, ["queued"], "queued")
    s.stream.close()
    gate.set()
    (thread,) = [t for t in threading.enumerate() if t.name == "sim-gpu0-closing"]
    thread.join(5)
    assert not thread.is_alive() and ran == []
    s.loop.close()


class _Sink(Actor):
    def __init__(self, expected: int, done: asyncio.Future) -> None:
        self.got: list[KernelDone] = []
        self.expected = expected
        self.done = done

    def on_receive(self, msg: KernelDone) -> None:
        self.got.append(msg)
        if len(self.got) == self.expected:
            self.done.set_result(self.got)


def _worker(compute_streams: int = 1) -> Any:
    return get_runtime().spawn(GpuWorker, SimBackend(1, 1 << 30), 0, compute_streams, 1)


def _sink(expected: int) -> tuple[Any, asyncio.Future]:
    done = asyncio.get_running_loop().create_future()
    return get_runtime().spawn(_Sink, expected, done), done


@pytest.mark.timing  # a trivial kernel's start-to-end is asserted under 20 ms of wall time
async def test_each_kernel_done_carries_its_own_start_and_end():
    worker = _worker()
    sink, done = _sink(3)
    for i, kernel in enumerate([lambda: "a", lambda: (time.sleep(0.02), "slow")[1], lambda: "c"]):
        worker.tell(Launch(i, kernel, [], 0, sink))
    got = await asyncio.wait_for(done, 5)
    assert [(m.step, m.outputs, m.worker) for m in got] == [
        (0, "a", "/gpu:0/compute0"),
        (1, "slow", "/gpu:0/compute0"),
        (2, "c", "/gpu:0/compute0"),
    ]
    durations = [m.end - m.start for m in got]
    assert durations[1] >= 0.02 and durations[0] < 0.02 and durations[2] < 0.02
    assert got[0].end <= got[1].start and got[1].end <= got[2].start


async def _stats(worker: Any, queued: int) -> WorkerStatistics | None:
    stats = await worker.ask(GetWorkerStatistics())
    return stats if stats.queued == queued else None


@pytest.mark.parametrize("streams", [1, 2])
async def test_every_stream_takes_launch_depth_launches_at_once_and_the_rest_wait(streams):
    worker = _worker(streams)
    gate = threading.Event()
    n = streams * LAUNCH_DEPTH + 3
    sink, done = _sink(n)
    try:
        for i in range(n):
            worker.tell(Launch(i, lambda i=i: (gate.wait(5), i)[1], [], 0, sink))
        stats = await until_async(lambda: _stats(worker, 3), "three launches waiting for a slot")
        assert (stats.in_flight, stats.completed) == (streams * LAUNCH_DEPTH, 0)
    finally:
        gate.set()
    got = await asyncio.wait_for(done, 10)
    assert sorted(m.outputs for m in got) == list(range(n))
    # one stream runs its launches in their order
    by_stream: dict[str, list[int]] = {}
    for m in got:
        by_stream.setdefault(m.worker, []).append(m.outputs)
    assert len(by_stream) == streams
    assert all(seq == sorted(seq) for seq in by_stream.values())


async def test_a_failed_launch_on_a_worker_is_reported_and_the_stream_keeps_going():
    worker = _worker()
    sink, done = _sink(3)

    def fail() -> None:
        raise RuntimeError("device fault")

    for i, kernel in enumerate([lambda: 1, fail, lambda: 3]):
        worker.tell(Launch(i, kernel, [], 0, sink))
    got = await asyncio.wait_for(done, 5)
    assert [m.outputs for m in got] == [1, None, 3]
    assert got[0].error is None and got[2].error is None
    assert isinstance(got[1].error, RuntimeError)
    stats = await worker.ask(GetWorkerStatistics())
    assert (stats.in_flight, stats.completed, stats.queued) == (0, 3, 0)


@given(st.lists(st.tuples(st.booleans(), st.integers(-3, 3)), max_size=60))
def test_waiting_launches_leave_highest_priority_first_and_fifo_within_a_priority(ops):
    queue, model, seq = LaunchQueue(), [], itertools.count()
    for is_push, priority in ops:
        if is_push or not model:
            launch = Launch(next(seq), None, [], priority, None)
            queue.push(launch)
            model.append(launch)
        else:
            expected = min(model, key=lambda m: (-m.priority, m.step))
            model.remove(expected)
            assert queue.pop() is expected
        assert len(queue) == len(model)
    drained = [queue.pop() for _ in range(len(queue))]
    assert drained == sorted(model, key=lambda m: (-m.priority, m.step))
    with pytest.raises(IndexError):
        queue.pop()
