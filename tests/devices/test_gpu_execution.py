"""Graphs across CPU and simulated GPUs: same numbers, transfers, failures, overlap, priorities."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import threading

import numpy as np
import pytest

import antcolony as ac
from antcolony.actors.actor import Actor
from antcolony.actors.runtime import get_runtime
from antcolony.actors.session_stats import worker_statistics
from antcolony.devices.backends.sim import SimBackend
from antcolony.devices.gpu import LAUNCH_DEPTH, GpuWorker
from antcolony.devices.kernels.registry import KERNELS
from antcolony.devices.launch import KernelDone, Launch
from antcolony.devices.worker_stats import GetWorkerStatistics, WorkerStatistics
from tests.gpu_backends import gpu_config
from tests.waiting import until, until_async

SIM2 = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=2)
FULL = ac.RunOptions(trace_level=ac.RunOptions.FULL_TRACE)


def _mlp(devices: tuple[str, str, str]) -> tuple[ac.Graph, dict]:
    g = ac.Graph()
    rng = np.random.default_rng(1)
    with g.as_default():
        ac.set_random_seed(3)
        x = ac.placeholder(ac.float32, [None, 6], name="x")
        labels = ac.placeholder(ac.int32, [None], name="labels")
        with ac.device(devices[0]):
            w1 = ac.Variable(rng.standard_normal((6, 8)).astype(np.float32), name="w1")
            h = ac.nn.relu(ac.matmul(x, w1))
        with ac.device(devices[1]):
            w2 = ac.Variable(rng.standard_normal((8, 3)).astype(np.float32), name="w2")
            logits = ac.matmul(h, w2)
        with ac.device(devices[2]):
            loss = ac.reduce_mean(
                ac.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            )
        train = ac.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
        init = ac.global_variables_initializer()
    return g, {"x": x, "labels": labels, "loss": loss, "train": train, "init": init, "w1": w1}


async def _train(
    devices: tuple[str, str, str], config: ac.SessionConfig = SIM2, steps: int = 5
) -> tuple[list[float], np.ndarray]:
    g, t = _mlp(devices)
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((16, 6)).astype(np.float32)
    ys = rng.integers(0, 3, 16).astype(np.int32)
    losses = []
    async with ac.Session(g, config=config) as sess:
        await sess.run(t["init"])
        for _ in range(steps):
            loss, _ = await sess.run([t["loss"], t["train"]], {t["x"]: xs, t["labels"]: ys})
            losses.append(float(loss))
        w1 = await sess.run(t["w1"])
    return losses, w1


async def test_cross_device_training_gives_the_numbers_of_a_single_device_run(gpu_backend):
    config = gpu_config(gpu_backend, gpus=2)
    cpu_losses, cpu_w1 = await _train(("/cpu:0", "/cpu:0", "/cpu:0"), config)
    await get_runtime().shutdown()
    mixed_losses, mixed_w1 = await _train(("/gpu:0", "/gpu:1", "/cpu:0"), config)
    np.testing.assert_allclose(mixed_losses, cpu_losses, rtol=1e-5)
    np.testing.assert_allclose(mixed_w1, cpu_w1, rtol=1e-5)
    assert mixed_losses[-1] < mixed_losses[0]


async def test_ops_run_on_the_device_they_are_placed_on_and_transfers_use_copy_streams(gpu_backend):
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [3], name="x")
        with ac.device("/gpu:1"):
            y = ac.multiply(x, 2.0, name="double")
        z = ac.add(y, 1.0, name="plus")
    meta = ac.RunMetadata()
    async with ac.Session(g, config=gpu_config(gpu_backend, gpus=2)) as sess:
        out = await sess.run([y, z], {x: [1.0, 2.0, 3.0]}, options=FULL, run_metadata=meta)
    np.testing.assert_allclose(out[0], [2.0, 4.0, 6.0])
    np.testing.assert_allclose(out[1], [3.0, 5.0, 7.0])
    by_name = {s.node_name: s for s in meta.step_stats}
    assert by_name["double"].device == "/device:GPU:1"
    assert by_name["double"].worker.startswith("/gpu:1/compute")
    assert by_name["plus"].device == "/device:CPU:0"
    recvs = [s for s in meta.step_stats if s.op_type == "_Recv"]
    assert {s.worker for s in recvs} == {"/gpu:1/copy0"}
    assert {s.device for s in recvs} == {"/device:GPU:1", "/device:CPU:0"}


async def test_a_failing_gpu_kernel_aborts_only_its_step(gpu_backend):
    g = ac.Graph()
    with g.as_default():
        i = ac.placeholder(ac.int32, [], name="i")
        with ac.device("/gpu:0"):
            picked = ac.gather(ac.constant([1.0, 2.0, 3.0]), i, name="gpu_lookup") * 10.0
    async with ac.Session(g, config=gpu_config(gpu_backend)) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError) as info:
            await sess.run(picked, {i: 9})
        assert info.value.node_name == "gpu_lookup"
        results = await asyncio.gather(*[sess.run(picked, {i: k % 3}) for k in range(6)])
    assert [float(r) for r in results] == [10.0, 20.0, 30.0, 10.0, 20.0, 30.0]


async def test_variables_colocate_their_reads_and_writes_with_the_variable(gpu_backend):
    g = ac.Graph()
    with g.as_default():
        with ac.device("/gpu:1"):
            v = ac.Variable(np.zeros(3, np.float32), name="v")
        inc = ac.assign_add(v, np.ones(3, np.float32))
        init = v.initializer
    meta = ac.RunMetadata()
    async with ac.Session(g, config=gpu_config(gpu_backend, gpus=2)) as sess:
        await sess.run(init)
        await sess.run(inc, options=FULL, run_metadata=meta)
        np.testing.assert_allclose(await sess.run(v), [1.0, 1.0, 1.0])
    devices = {s.node_name: s.device for s in meta.step_stats}
    assert devices["AssignAdd"] == "/device:GPU:1"


async def test_copies_and_compute_overlap_on_the_simulated_gpu(monkeypatch):
    """A host-to-GPU copy runs on the copy stream while the GPU computes what does not need it.

    Deterministic: in the traced step each GPU matmul starts only once the 16 MiB copy has
    started, and the copy is held on its stream until the worker reports that every kernel not
    waiting for it has completed (if copies and compute shared a stream, that never happens); the
    trace then shows every matmul overlapping the copy."""
    armed, copying, release = threading.Event(), threading.Event(), threading.Event()
    to_device = SimBackend.to_device

    def held_copy(self, index, value):
        if armed.is_set() and getattr(value, "nbytes", 0) > 1 << 20:
            copying.set()
            release.wait(10)
        return to_device(self, index, value)

    matmul = KERNELS["MatMul"]["GPU"]

    def after_the_copy_started(ctx):
        compute = matmul.factory(ctx)

        def run(*args):
            if armed.is_set():
                copying.wait(10)
            return compute(*args)

        return run

    monkeypatch.setattr(SimBackend, "to_device", held_copy)
    monkeypatch.setitem(KERNELS["MatMul"], "GPU", dataclasses.replace(matmul, factory=after_the_copy_started))
    g = ac.Graph()
    n = 700
    with g.as_default():
        big = ac.placeholder(ac.float32, [2048, 2048], name="big")
        with ac.device("/gpu:0"):
            m = ac.Variable(np.eye(n, dtype=np.float32), name="m")
            acc = m.value()
            for _ in range(6):
                acc = ac.matmul(acc, m)
            a = ac.reduce_sum(acc)
            b = ac.reduce_sum(big)
        init = m.initializer
    feed = {big: np.ones((2048, 2048), np.float32)}
    async with ac.Session(g, config=SIM2) as sess:
        await sess.run(init)
        warm = ac.RunMetadata()
        await sess.run([a, b], feed, options=FULL, run_metadata=warm)
        # the compute kernels that do not need the copy: all but reduce_sum(big)
        independent = sum(1 for s in warm.step_stats if "/compute" in s.worker and s.node_name != b.op.name)
        after = await worker_statistics(sess, "/gpu:0")
        meta = ac.RunMetadata()
        armed.set()
        try:
            step = asyncio.ensure_future(sess.run([a, b], feed, options=FULL, run_metadata=meta))
            await until(copying.is_set, "the big copy on its stream")
            await until_async(
                lambda: _completed(sess, after.completed + independent),
                "the kernels that do not need the copy completed while it ran",
            )
        finally:
            copying.set()
            release.set()
        await step
    copies = [s for s in meta.step_stats if "/copy" in s.worker and s.output_bytes > 1 << 20]
    compute = [s for s in meta.step_stats if "/compute" in s.worker and s.op_type == "MatMul"]
    assert len(copies) == 1 and len(compute) == 6
    # each matmul ends after the copy began (it waited for that) and before the copy ended (the
    # copy waited for it): every one overlaps the copy
    assert all(copies[0].start_us < k.end_us < copies[0].end_us for k in compute)


async def _completed(sess: ac.Session, n: int) -> bool:
    return (await worker_statistics(sess, "/gpu:0")).completed >= n


class _Collector(Actor):
    def __init__(self, order: list[int], done: asyncio.Future, expected: int) -> None:
        self.order = order
        self.done = done
        self.expected = expected

    def on_receive(self, msg: KernelDone) -> None:
        self.order.append(msg.outputs)
        if len(self.order) == self.expected and not self.done.done():
            self.done.set_result(None)


async def _queued(worker, n: int) -> WorkerStatistics | None:
    stats = await worker.ask(GetWorkerStatistics())
    return stats if stats.queued == n else None


async def test_gpu_launches_run_highest_priority_first_and_fifo_within_a_priority():
    rt = get_runtime()
    worker = rt.spawn(GpuWorker, SimBackend(1, 1 << 30), 0, 1, 1)
    gate = threading.Event()
    order: list[int] = []
    done = asyncio.get_running_loop().create_future()
    sink = rt.spawn(_Collector, order, done, LAUNCH_DEPTH + 6)
    # The stream's own queue (LAUNCH_DEPTH launches) is committed in arrival order, as a CUDA
    # stream's is; priorities order the launches waiting behind it.
    for _ in range(LAUNCH_DEPTH):
        worker.tell(Launch(None, lambda: (gate.wait(5), -1)[1], [], 0, sink))
    for tag, priority in [(1, 0), (2, 5), (3, 0), (4, 9), (5, 5), (6, -1)]:
        worker.tell(Launch(None, lambda t=tag: t, [], priority, sink))
    stats = await until_async(lambda: _queued(worker, 6), "six launches queued behind the gated ones")
    assert (stats.in_flight, stats.completed, stats.holding) == (LAUNCH_DEPTH, 0, False)
    gate.set()
    await asyncio.wait_for(done, 5)
    assert order == [-1] * LAUNCH_DEPTH + [4, 2, 5, 1, 3, 6]


async def test_a_multi_device_chrome_trace_has_a_track_per_worker_and_valid_events():
    g, t = _mlp(("/gpu:0", "/gpu:1", "/cpu:0"))
    meta = ac.RunMetadata()
    async with ac.Session(g, config=SIM2) as sess:
        await sess.run(t["init"])
        await sess.run(
            t["train"], {t["x"]: np.ones((4, 6)), t["labels"]: [0, 1, 2, 0]}, options=FULL, run_metadata=meta
        )
    trace = json.loads(meta.chrome_trace())
    events = trace["traceEvents"]
    for e in events:
        assert {"ph", "ts", "pid", "tid"} <= set(e)
    complete = [e for e in events if e["ph"] == "X"]
    assert all(e["dur"] >= 0 for e in complete)
    threads = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"/gpu:0/copy0", "inline"} <= threads and any(t.startswith("/gpu:1/compute") for t in threads)
    processes = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert processes == {"/device:CPU:0", "/device:GPU:0", "/device:GPU:1"}
    # A stream runs one kernel at a time: events on one track never partly overlap.
    by_track: dict[tuple[int, int], list[dict]] = {}
    for e in complete:
        by_track.setdefault((e["pid"], e["tid"]), []).append(e)
    for evs in by_track.values():
        evs.sort(key=lambda e: e["ts"])
        for a, b in itertools.pairwise(evs):
            nested = b["ts"] + b["dur"] <= a["ts"] + a["dur"]
            assert b["ts"] >= a["ts"] + a["dur"] - 1e-3 or nested, (a, b)


@pytest.mark.parametrize("engine", ["per_device", "pooled", "naive"])
async def test_concurrent_assign_adds_on_gpu_streams_never_lose_an_update(engine, gpu_backend):
    g = ac.Graph()
    with g.as_default(), ac.device("/gpu:0"):
        v = ac.Variable(np.zeros((64, 64), np.float32), name="v")
        inc = ac.assign_add(v, np.ones((64, 64), np.float32))
    config = gpu_config(gpu_backend, gpu_compute_streams=4, engine=engine)
    async with ac.Session(g, config=config) as sess:
        await sess.run(v.initializer)
        await asyncio.gather(*[sess.run(inc.op) for _ in range(100)])
        np.testing.assert_array_equal(await sess.run(v), np.full((64, 64), 100.0, np.float32))


async def test_a_trace_file_setting_traces_every_step_into_one_chrome_trace(tmp_path, gpu_backend):
    path = tmp_path / "steps.json"
    g, t = _mlp(("/gpu:0", "/cpu:0", "/cpu:0"))
    config = gpu_config(gpu_backend, trace_file=str(path))
    async with ac.Session(g, config=config) as sess:
        await sess.run(t["init"])
        for _ in range(3):
            await sess.run(t["train"], {t["x"]: np.ones((4, 6)), t["labels"]: [0, 1, 2, 0]})
    events = json.loads(path.read_text())["traceEvents"]
    matmuls = [e for e in events if e["ph"] == "X" and e["cat"] == "MatMul"]
    assert len(matmuls) >= 3 * 2
    assert all({"ph", "ts", "pid", "tid"} <= set(e) for e in events)
