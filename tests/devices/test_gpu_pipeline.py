"""The GPU launch pipeline (``SessionConfig.gpu_pipeline``, devices/pipeline.py): a GPU kernel's
dependents on its GPU are launched before its completion reaches the loop, ordered after it on
the device (same stream, or a stream waiting on an event); results, errors and memory as without."""

from __future__ import annotations

import asyncio
import itertools
import sys
import threading
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import antcolony as ac
from antcolony.actors.runtime import get_runtime
from antcolony.actors.session_stats import worker_statistics
from antcolony.devices.kernels.registry import KERNELS, register_kernel
from antcolony.devices.pipeline import Pending, PipelinedLaunch, UpstreamFailed
from antcolony.graph.gradients import not_differentiable
from antcolony.graph.op_builder import make_op
from antcolony.graph.registry import OP_DEFS, register_op
from tests.devices.test_gpu_streams import _Stream
from tests.gpu_backends import gpu_config
from tests.random_dags import BINARY_OPS, numpy_values
from tests.waiting import until, until_async

MiB = 1 << 20
FULL = ac.RunOptions(trace_level=ac.RunOptions.FULL_TRACE)

# -- a GPU kernel that runs until the test opens its gate -------------------------------------
_GATES: dict[str, threading.Event] = {}

if "TestGpuGate" not in OP_DEFS:

    @register_op("TestGpuGate")
    def _gate_shape(op: Any) -> Any:
        return [(op.inputs[0].dtype, op.inputs[0].shape.dims)]

    not_differentiable("TestGpuGate")

if "TestGpuGate" not in KERNELS:

    @register_kernel("TestGpuGate", devices=("CPU", "GPU"))
    def _gate_kernel(ctx: Any) -> Any:
        name = ctx.op.name

        def compute(x: Any) -> Any:
            if not _GATES[name].wait(10.0):
                raise RuntimeError("the test never opened the gate")
            return x.copy()

        return compute


def _config(pipeline: bool, backend: str = "sim", **kw: Any) -> ac.SessionConfig:
    return gpu_config(backend, gpu_pipeline=pipeline, **kw)


# -- stream events on the simulated backend -----------------------------------------------------
def test_a_stream_waiting_on_another_streams_event_runs_after_it_in_order():
    a, b = _Stream("compute0"), _Stream("compute1")
    try:
        gate, b_reached = threading.Event(), threading.Event()
        done: list[str] = []
        seen: list[tuple[str, bool]] = []

        def slow() -> str:
            gate.wait(10.0)
            done.append("a")
            return "a"

        a.stream.launch(slow, [], "a")
        event = a.stream.record_event()
        b.stream.launch(b_reached.set, [], "b0")
        b.stream.wait_event(event)
        for k in range(3):
            b.stream.launch(lambda k=k: seen.append((f"b{k + 1}", "a" in done)), [], f"b{k + 1}")
        # b's thread is past its first launch and at the wait: a has not finished yet
        assert b_reached.wait(10.0)
        assert seen == []
        gate.set()
        b_done = b.collect(4)
        assert [c[0] for c in b_done] == ["b0", "b1", "b2", "b3"]
        assert seen == [("b1", True), ("b2", True), ("b3", True)]
        assert event.is_set()
        (a_done,) = a.collect(1)
        # b's kernels started once a's had ended (the sim stream reports device times)
        assert all(c[3] >= a_done[4] for c in b_done[1:])
    finally:
        gate.set()
        a.close()
        b.close()


def test_an_event_recorded_on_an_idle_stream_is_set_without_any_launch():
    s = _Stream()
    try:
        event = s.stream.record_event()
        assert event.wait(10.0)
    finally:
        s.close()


# -- sessions ---------------------------------------------------------------------------------
dags = st.lists(
    st.tuples(
        st.sampled_from(sorted(BINARY_OPS)), st.integers(0, 10_000), st.integers(0, 10_000), st.booleans()
    ),
    min_size=1,
    max_size=25,
)


def _build(spec: list[tuple[str, int, int, bool]]) -> tuple[ac.Graph, Any, list[Any]]:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float64, [3], name="x")
        nodes = [x]
        for k, (name, a, b, on_gpu) in enumerate(spec):
            with ac.device("/gpu:0" if on_gpu else "/cpu:0"):
                nodes.append(BINARY_OPS[name][0](nodes[a % len(nodes)], nodes[b % len(nodes)], name=f"n{k}"))
    return g, x, nodes


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec=dags, fetch_mask=st.integers(1, 2**30))
def test_random_dags_of_cpu_and_gpu_nodes_match_numpy_with_the_pipeline_on_and_off(spec, fetch_mask):
    g, x, nodes = _build(spec)
    value = np.array([0.5, -1.25, 2.0])
    expected = numpy_values(spec, [value])
    picked = [k for k in range(1, len(nodes)) if fetch_mask >> (k % 30) & 1] or [len(nodes) - 1]

    async def run(pipeline: bool) -> list[Any]:
        async with ac.Session(g, config=_config(pipeline)) as sess:
            first = await sess.run([nodes[k] for k in picked], {x: value})
            again = await asyncio.gather(
                *[sess.run([nodes[k] for k in picked], {x: value}) for _ in range(3)]
            )
        # this loop's runtime holds the simulated GPU's pool (on the machine's ledger) until shut down
        await get_runtime().shutdown()
        return [first, *again]

    for pipeline in (True, False):
        for results in asyncio.run(run(pipeline)):
            for k, got in zip(picked, results, strict=True):
                np.testing.assert_allclose(got, expected[k], rtol=1e-12)


def _chain(n: int, size: int, gate: str | None = None) -> tuple[ac.Graph, Any, Any]:
    g = ac.Graph()
    with g.as_default():
        x0 = ac.placeholder(ac.float32, [size], name="x")
        with ac.device("/gpu:0"):
            x = x0 if gate is None else make_op("TestGpuGate", [x0], None, gate).outputs[0]
            for k in range(n):
                x = ac.add(x, 1.0, name=f"add{k}")
    return g, x0, x


async def test_dependent_launches_are_issued_while_their_producer_still_runs():
    # The head of the chain blocks on the device; its dependents reach the stream anyway: its
    # completion cannot have reached the loop, as it has not completed.
    name = "gate_in_flight"
    _GATES[name] = gate = threading.Event()
    g, x, out = _chain(4, 8, gate=name)
    try:
        async with ac.Session(g, config=_config(True)) as sess:
            run = asyncio.ensure_future(sess.run(out, {x: np.zeros(8, np.float32)}, options=FULL))

            async def all_in_flight() -> bool:
                return (await worker_statistics(sess, "/gpu:0")).in_flight >= 5

            await until_async(all_in_flight, "the gate and its 4 dependents in flight at once")
            assert not run.done()
            gate.set()
            np.testing.assert_array_equal(await run, np.full(8, 4.0, np.float32))
    finally:
        gate.set()
        del _GATES[name]


async def test_a_kernel_with_producers_on_two_streams_waits_on_the_device_for_the_slow_one():
    # a and the gated b start on the two compute streams; c = a * b follows a on its stream and
    # must wait there on an event for b, which runs until the test opens the gate after c is
    # enqueued
    name = "gate_two_streams"
    _GATES[name] = gate = threading.Event()
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [4], name="x")
        with ac.device("/gpu:0"):
            b = make_op("TestGpuGate", [x], None, name).outputs[0]
            a = ac.add(x, 1.0, name="a")
            c = ac.multiply(a, b, name="c")
    meta = ac.RunMetadata()
    value = np.arange(4, dtype=np.float32)
    try:
        async with ac.Session(g, config=_config(True)) as sess:
            run = asyncio.ensure_future(sess.run(c, {x: value}, options=FULL, run_metadata=meta))

            async def c_enqueued() -> bool:
                stats = await worker_statistics(sess, "/gpu:0")
                return stats.completed >= 2 and stats.in_flight >= 2  # (the copy, a) and (b, c)

            await until_async(c_enqueued, "c enqueued behind the gated b")
            gate.set()
            np.testing.assert_array_equal(await run, (value + 1.0) * value)
    finally:
        gate.set()
        del _GATES[name]
    workers = {s.node_name: s.worker for s in meta.step_stats}
    assert workers[name] != workers["a"], "the producers ran on one stream: nothing was tested"
    assert workers["c"] == workers["a"]
    stats = {s.node_name: s for s in meta.step_stats}
    assert stats["c"].start_us >= stats[name].end_us


async def test_each_pipelined_kernel_keeps_its_own_trace_record_in_device_order():
    g, x, out = _chain(20, 16)
    meta = ac.RunMetadata()
    async with ac.Session(g, config=_config(True)) as sess:
        result = await sess.run(out, {x: np.zeros(16, np.float32)}, options=FULL, run_metadata=meta)
    np.testing.assert_array_equal(result, np.full(16, 20.0, np.float32))
    stats = {s.node_name: s for s in meta.step_stats}
    records = [stats[f"add{k}"] for k in range(20)]
    for before, after in itertools.pairwise(records):
        assert before.start_us <= before.end_us <= after.start_us <= after.end_us
    # an output read only by its pipelined consumer still has its size in the trace
    assert {r.output_bytes for r in records} == {16 * 4}


@pytest.mark.parametrize("pipeline", [True, False])
async def test_a_failing_producer_fails_the_step_naming_it_and_the_session_goes_on(pipeline, gpu_backend):
    g = ac.Graph()
    with g.as_default():
        i = ac.placeholder(ac.int32, [], name="i")
        with ac.device("/gpu:0"):
            picked = ac.gather(ac.constant([1.0, 2.0, 3.0]), i, name="gpu_lookup")
            out = ac.add(ac.multiply(picked, 10.0, name="times10"), 1.0, name="plus1")
    async with ac.Session(g, config=_config(pipeline, gpu_backend)) as sess:
        assert float(await sess.run(out, {i: 0})) == 11.0
        base = sess.memory_stats("/gpu:0").bytes_in_use
        for _ in range(3):
            with pytest.raises(ac.errors.InvalidArgumentError) as info:
                await sess.run(out, {i: 9})
            assert info.value.node_name == "gpu_lookup"
        del info
        results = await asyncio.gather(*[sess.run(out, {i: k % 3}) for k in range(6)])
        assert [float(r) for r in results] == [11.0, 21.0, 31.0, 11.0, 21.0, 31.0]
        await until(lambda: sess.memory_stats("/gpu:0").bytes_in_use == base, "memory back to the baseline")


@pytest.mark.parametrize("pipeline", [True, False])
async def test_a_chain_frees_every_intermediate_after_the_step(pipeline, gpu_backend):
    size = 256 * 1024  # 1 MiB of float32 per value
    g, x, out = _chain(30, size)
    feed = {x: np.zeros(size, np.float32)}
    async with ac.Session(g, config=_config(pipeline, gpu_backend, sim_gpu_memory=512 * MiB)) as sess:
        await sess.run(out, feed)
        base = sess.memory_stats("/gpu:0").bytes_in_use
        for _ in range(3):
            result = await sess.run(out, feed)
            assert float(result[0]) == 30.0
            await until(
                lambda: sess.memory_stats("/gpu:0").bytes_in_use == base, "memory back to the baseline"
            )
        # each value lives until its consumer has run, not until the loop hears of it: the fed
        # input, a kernel's input and output, and the result on its way to the host at most
        assert sess.memory_stats("/gpu:0").peak_bytes_in_use <= base + 5 * MiB


# -- CUDA events, through a fake CuPy (tests/devices/test_backends.py) ---------------------------
def test_cuda_streams_order_by_a_recorded_event_and_wait_on_the_device(monkeypatch):
    from antcolony.devices.backends.cuda import CudaBackend
    from tests.devices.test_backends import fake_cupy

    cupy = fake_cupy(devices=1)
    log: list[tuple[str, Any, Any]] = []

    class Event:
        def __init__(self, disable_timing: bool = False) -> None:
            self.disable_timing = disable_timing

        def record(self, stream: Any) -> None:
            log.append(("record", self, stream))

    def wait_event(self: Any, event: Any) -> None:
        log.append(("wait", event, self))

    cupy.cuda.Event = Event
    cupy.cuda.Stream.wait_event = wait_event
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    loop = asyncio.new_event_loop()
    done: list[Any] = []
    backend = CudaBackend()
    a = backend.create_stream(0, "compute0", loop, done.extend)
    b = backend.create_stream(0, "compute1", loop, done.extend)
    try:
        gate = threading.Event()
        a.launch(lambda: (gate.wait(10.0), log.append(("kernel", "a", None))), [], "a")
        event = a.record_event()
        b.wait_event(event)
        b.launch(lambda: log.append(("kernel", "b", None)), [], "b")
        # b's thread may not ask the device to wait before a's thread recorded the event (a CUDA
        # wait on an unrecorded event is a no-op): it blocks until then
        assert not event.recorded.is_set()
        assert [entry[0] for entry in log] == []
        gate.set()
        loop.run_until_complete(until(lambda: len(done) == 2, "both kernels reported"))
        kinds = [(kind, what) for kind, what, _ in log]
        assert kinds.index(("record", event.event)) < kinds.index(("wait", event.event))
        assert kinds.index(("kernel", "a")) < kinds.index(("record", event.event))
        assert kinds.index(("wait", event.event)) < kinds.index(("kernel", "b"))
        record = next(e for e in log if e[0] == "record")
        wait = next(e for e in log if e[0] == "wait")
        assert record[2] is a._stream and wait[2] is b._stream
    finally:
        gate.set()
        a.close()
        b.close()
        loop.close()


# -- the worker's side ---------------------------------------------------------------------------
async def test_a_dependent_reaching_the_worker_before_its_producer_waits_for_it_then_reads_its_value():
    from tests.devices.test_gpu_streams import _sink, _worker

    worker = _worker(compute_streams=2)
    sink, done = _sink(3)
    x, y = Pending(), Pending()
    # out of the order nodes tell them in: the dependents first (parked), then their producer
    worker.tell(PipelinedLaunch("z", lambda v: v * 10, [y], sink, (y,), None))
    worker.tell(PipelinedLaunch("y", lambda v: v + 1, [x], sink, (x,), y))
    worker.tell(PipelinedLaunch("x", lambda: 1, [], sink, None, x))
    got = await asyncio.wait_for(done, 5)
    assert sorted((m.step, m.outputs, m.error) for m in got) == [
        ("x", 1, None),
        ("y", 2, None),
        ("z", 20, None),
    ]


async def test_a_failed_producer_makes_its_dependents_skip_without_running():
    from tests.devices.test_gpu_streams import _sink, _worker

    worker = _worker(compute_streams=2)
    sink, done = _sink(3)
    x, y = Pending(), Pending()
    ran: list[str] = []

    def fail() -> None:
        raise ValueError("producer broke")

    worker.tell(PipelinedLaunch("x", fail, [], sink, None, x))
    worker.tell(PipelinedLaunch("y", lambda v: ran.append("y"), [x], sink, (x,), y))
    worker.tell(PipelinedLaunch("z", lambda v: ran.append("z"), [y], sink, (y,), None))
    got = {m.step: m.error for m in await asyncio.wait_for(done, 5)}
    assert ran == []
    assert isinstance(got["x"], ValueError)
    # Each dependent names the failure before it, through a stand-in without a traceback: the
    # producer's own exception (whose frames hold its inputs) stays with its KernelDone only.
    assert isinstance(got["y"], UpstreamFailed) and "producer broke" in str(got["y"].error)
    assert isinstance(got["z"], UpstreamFailed) and "producer broke" in str(got["z"].error)
    assert got["y"].error is not got["x"] and got["y"].error.__traceback__ is None
