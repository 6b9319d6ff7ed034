"""Session semantics through the public API: feeds, fetch structures, caching, errors, concurrency."""

from __future__ import annotations

import asyncio
import collections
import threading

import numpy as np
import pytest

import antcolony as ac
from antcolony.actors.runtime import get_runtime
from tests.waiting import until


@pytest.fixture
def graph() -> ac.Graph:
    return ac.Graph()


async def test_fetches_of_any_nesting_come_back_in_the_same_structure(graph):
    Pair = collections.namedtuple("Pair", "a b")
    with graph.as_default():
        a = ac.constant([1.0, 2.0], name="a")
        b = a * 3.0
        noop = ac.no_op()
    async with ac.Session(graph) as sess:
        out = await sess.run({"x": [a, (b, Pair(a, b))], "op": noop, "name": "a:0"})
    assert set(out) == {"x", "op", "name"}
    assert isinstance(out["x"], list) and isinstance(out["x"][1], tuple)
    pair = out["x"][1][1]
    assert isinstance(pair, Pair)
    np.testing.assert_allclose(pair.b, [3.0, 6.0])
    np.testing.assert_allclose(out["x"][0], [1.0, 2.0])
    np.testing.assert_allclose(out["name"], [1.0, 2.0])
    assert out["op"] is None


async def test_equal_fetches_of_different_sequence_types_keep_their_own_structure(graph):
    """A namedtuple equals the plain tuple of its elements, and a list holds the same leaves:
    repeated runs reuse the plan of each (a training loop's ``[loss, train_op]``) without mixing
    them up."""
    Pair = collections.namedtuple("Pair", "a b")
    with graph.as_default():
        a = ac.constant(1.0, name="a")
        b = a * 3.0
    async with ac.Session(graph) as sess:
        for _ in range(2):
            pair = await sess.run(Pair(a, b))
            plain = await sess.run((a, b))
            listed = await sess.run([a, b])
            named = await sess.run(["a:0", b])
            assert type(pair) is Pair and pair.b == 3.0
            assert type(plain) is tuple and plain == (1.0, 3.0)
            assert type(listed) is list and listed == [1.0, 3.0]
            assert named == [1.0, 3.0]


async def test_single_tensor_fetch_returns_a_value_and_a_fed_fetch_returns_the_feed(graph):
    with graph.as_default():
        x = ac.placeholder(ac.float32, [2], name="x")
        y = x + 1.0
    async with ac.Session(graph) as sess:
        xv, yv = await sess.run([x, y], {x: [1.0, 2.0]})
    np.testing.assert_allclose(xv, [1.0, 2.0])
    np.testing.assert_allclose(yv, [2.0, 3.0])


async def test_feeding_an_unknown_tensor_name_is_an_invalid_argument_naming_it(graph):
    with graph.as_default():
        c = ac.constant(1.0)
    async with ac.Session(graph) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError, match="nope:0"):
            await sess.run(c, {"nope:0": 1.0})


async def test_feeding_a_wrong_shape_names_the_tensor_and_both_shapes(graph):
    with graph.as_default():
        x = ac.placeholder(ac.float32, [None, 4], name="inp")
        y = ac.reduce_sum(x)
    async with ac.Session(graph) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError) as info:
            await sess.run(y, {x: np.zeros((2, 3))})
    msg = str(info.value)
    assert "inp:0" in msg and "(2, 3)" in msg and "(?, 4)" in msg


async def test_feeding_a_wrong_dtype_names_the_tensor_and_both_dtypes(graph):
    with graph.as_default():
        x = ac.placeholder(ac.int32, [2], name="ids")
        y = x + 1
    async with ac.Session(graph) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError) as info:
            await sess.run(y, {x: np.array([1.5, 2.5])})
        msg = str(info.value)
        assert "ids:0" in msg and "float64" in msg and "int32" in msg
        with pytest.raises(ac.errors.InvalidArgumentError, match="ids:0"):
            await sess.run(y, {x: ["a", "b"]})
        np.testing.assert_array_equal(await sess.run(y, {x: np.array([1, 2], np.int64)}), [2, 3])


async def test_feed_validation_happens_before_anything_runs(graph):
    with graph.as_default():
        v = ac.Variable(0.0, name="counter")
        x = ac.placeholder(ac.float32, [3], name="x")
        bump = ac.assign_add(v, 1.0)
        with ac.control_dependencies([bump]):
            y = ac.identity(x)
    async with ac.Session(graph) as sess:
        await sess.run(v.initializer)
        with pytest.raises(ac.errors.InvalidArgumentError):
            await sess.run(y, {x: np.zeros(4)})
        assert await sess.run(v) == 0.0


async def test_feeding_an_operation_name_says_to_feed_its_tensor(graph):
    with graph.as_default():
        x = ac.placeholder(ac.float32, [], name="x")
        y = x * 2.0
    async with ac.Session(graph) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError, match="x:0"):
            await sess.run(y, {"x": 1.0})


async def test_an_unfed_placeholder_is_an_invalid_argument_naming_it(graph):
    with graph.as_default():
        x = ac.placeholder(ac.float32, [None], name="needed")
        y = x * 2.0
    async with ac.Session(graph) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError, match="needed") as info:
            await sess.run(y)
    assert info.value.node_name == "needed"


async def test_fetching_an_unknown_name_is_an_invalid_argument(graph):
    with graph.as_default():
        ac.constant(1.0, name="c")
    async with ac.Session(graph) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError, match="missing"):
            await sess.run("missing:0")


async def test_only_what_the_fetches_need_runs(graph):
    with graph.as_default():
        x = ac.placeholder(ac.float32, [], name="unfed")
        unused = x * 2.0  # would fail: x is not fed
        bad_index = ac.gather(ac.constant([1.0, 2.0]), ac.constant(7))  # would fail at run time
        c = ac.constant(3.0) + 1.0
    async with ac.Session(graph) as sess:
        assert await sess.run(c) == 4.0
        with pytest.raises(ac.errors.InvalidArgumentError):
            await sess.run([c, unused])
        with pytest.raises(ac.errors.InvalidArgumentError):
            await sess.run(bad_index)


async def test_executors_are_cached_per_sorted_feeds_and_fetches(graph):
    with graph.as_default():
        x = ac.placeholder(ac.float32, [], name="x")
        y = ac.placeholder(ac.float32, [], name="y")
        s = x + y
        p = x * y
    async with ac.Session(graph) as sess:
        assert await sess.run([s, p], {x: 2.0, y: 3.0}) == [5.0, 6.0]
        assert await sess.run([s, p], {y: 1.0, x: 1.0}) == [2.0, 1.0]
        assert sess.statistics().executors == 1
        assert await sess.run([p, s], {x: 2.0, y: 3.0}) == [6.0, 5.0]
        assert await sess.run({"p": p, "s": s}, {x: 2.0, y: 3.0}) == {"p": 6.0, "s": 5.0}
        assert sess.statistics().executors == 1
        assert await sess.run(s, {x: 2.0, y: 3.0}) == 5.0
        assert sess.statistics().executors == 2


async def test_a_kernel_error_aborts_only_that_step_and_names_the_node(graph):
    with graph.as_default():
        i = ac.placeholder(ac.int32, [], name="i")
        table = ac.constant([10.0, 20.0, 30.0])
        picked = ac.gather(table, i, name="lookup")
    async with ac.Session(graph) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError) as info:
            await sess.run(picked, {i: 5})
        assert info.value.node_name == "lookup"
        assert "lookup" in str(info.value)
        assert await sess.run(picked, {i: 2}) == 30.0


async def test_reading_an_uninitialized_variable_is_a_failed_precondition_naming_it(graph):
    with graph.as_default():
        v = ac.Variable([1.0, 2.0], name="weights")
        y = v * 2.0
    async with ac.Session(graph) as sess:
        with pytest.raises(ac.errors.FailedPreconditionError, match="weights") as info:
            await sess.run(y)
        assert info.value.node_name == "weights"
        await sess.run(ac.variables_initializer([v]))
        np.testing.assert_allclose(await sess.run(y), [2.0, 4.0])


def _gated_graph(graph: ac.Graph) -> tuple[ac.Tensor, threading.Event]:
    """A step that cannot finish before the test opens the gate: its kernel waits on it, on a
    CPU worker thread. (A step made slow by a long computation is only probably still running
    when the test acts on it.)"""
    gate = threading.Event()
    with graph.as_default():
        x = ac.placeholder(ac.float32, [], name="x")
        waited = ac.py_func(lambda v: np.float32(v if gate.wait(10) else -1.0), [x], ac.float32)
        out = waited * 2.0
    return out, gate


async def test_a_step_over_its_deadline_raises_deadline_exceeded_and_the_session_stays_usable(graph):
    out, gate = _gated_graph(graph)
    async with ac.Session(graph) as sess:
        try:
            with pytest.raises(ac.errors.DeadlineExceededError, match="20 ms"):
                await sess.run(out, {"x:0": 3.0}, options=ac.RunOptions(timeout_in_ms=20))
            assert sess.statistics().runs_in_flight == 0
        finally:
            gate.set()
        assert await sess.run(out, {"x:0": 3.0}) == 6.0


async def test_close_cancels_runs_in_flight_and_frees_their_state(graph):
    out, gate = _gated_graph(graph)
    sess = ac.Session(graph)
    feed = {"x:0": 1.0}
    sess.list_devices()  # the runtime's device workers, without any executor
    actors_without_executors = get_runtime().stats().actors_alive
    gate.set()
    assert await sess.run(out, feed) == 2.0  # build the executor
    gate.clear()
    assert sess.statistics().executor_actors_alive == 1
    assert get_runtime().stats().actors_alive > actors_without_executors  # executor and node actors
    runs = [asyncio.create_task(sess.run(out, feed)) for _ in range(3)]
    try:
        await until(lambda: sess.statistics().runs_in_flight == 3, "three runs in flight")
        await sess.close()
        results = await asyncio.gather(*runs, return_exceptions=True)
    finally:
        gate.set()
    assert all(isinstance(r, ac.errors.CancelledError) for r in results), results
    assert get_runtime().stats().actors_alive == actors_without_executors
    stats = sess.statistics()
    assert (stats.runs_in_flight, stats.executors, stats.closed) == (0, 0, True)
    with pytest.raises(ac.errors.SessionClosedError):
        await sess.run(out, feed)


async def test_cancelling_the_callers_task_aborts_the_step_and_keeps_the_session_usable(graph):
    out, gate = _gated_graph(graph)
    feed = {"x:0": 5.0}
    async with ac.Session(graph) as sess:
        task = asyncio.create_task(sess.run(out, feed))
        try:
            await until(lambda: sess.statistics().runs_in_flight == 1, "the run in flight")
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert sess.statistics().runs_in_flight == 0
        finally:
            gate.set()
        assert await sess.run(out, feed) == 10.0


async def test_make_callable_runs_fetches_with_positional_feeds(graph):
    with graph.as_default():
        a = ac.placeholder(ac.float32, [None], name="a")
        b = ac.placeholder(ac.float32, [None], name="b")
        out = {"sum": a + b, "prod": a * b}
    async with ac.Session(graph) as sess:
        fn = sess.make_callable(out, [a, b])
        res = await fn([1.0, 2.0], [3.0, 4.0])
        np.testing.assert_allclose(res["sum"], [4.0, 6.0])
        np.testing.assert_allclose(res["prod"], [3.0, 8.0])
        with pytest.raises(ac.errors.InvalidArgumentError, match="expects 2"):
            await fn([1.0])


async def test_fifty_concurrent_runs_return_correct_independent_results(graph):
    with graph.as_default():
        x = ac.placeholder(ac.float32, [None, 8], name="x")
        w = ac.constant(np.arange(64, dtype=np.float32).reshape(8, 8) / 64.0)
        h = (
            ac.nn.relu(ac.matmul(x, w) - 1.0)
            if hasattr(ac, "nn") and hasattr(ac.nn, "relu")
            else ac.matmul(x, w)
        )
        y = ac.reduce_sum(h * h, axis=1)
    rng = np.random.default_rng(0)
    feeds = [rng.standard_normal((1 + i % 7, 8)).astype(np.float32) for i in range(50)]
    async with ac.Session(graph) as sess:
        results = await asyncio.gather(*[sess.run(y, {x: f}) for f in feeds])
    wv = np.arange(64, dtype=np.float32).reshape(8, 8) / 64.0
    for f, r in zip(feeds, results):
        hv = f @ wv
        if hasattr(ac, "nn") and hasattr(ac.nn, "relu"):
            hv = np.maximum(hv - 1.0, 0.0)
        np.testing.assert_allclose(r, (hv * hv).sum(axis=1), rtol=1e-5)


async def test_concurrent_assign_adds_never_lose_an_update(graph):
    with graph.as_default():
        v = ac.Variable(0.0, name="v")
        inc = ac.assign_add(v, 1.0)
    async with ac.Session(graph) as sess:
        await sess.run(v.initializer)
        await asyncio.gather(*[sess.run(inc) for _ in range(100)])
        assert await sess.run(v) == 100.0


async def test_control_dependencies_order_an_assign_before_a_read(graph):
    with graph.as_default():
        v = ac.Variable(1.0, name="v")
        up = ac.assign(v, 5.0)
        with ac.control_dependencies([up]):
            read = ac.identity(v.read_value()) * 1.0
        init = ac.global_variables_initializer()
    async with ac.Session(graph) as sess:
        await sess.run(init)
        assert await sess.run(read) == 5.0


async def test_expensive_kernels_run_off_the_loop_so_independent_branches_overlap(graph):
    with graph.as_default():
        a = ac.placeholder(ac.float32, [400, 400], name="a")
        outs = [ac.reduce_sum(ac.matmul(a, a + float(i))) for i in range(4)]
    meta = ac.RunMetadata()
    feed = {a: np.ones((400, 400), np.float32)}
    async with ac.Session(graph) as sess:
        vals = await sess.run(
            outs, feed, options=ac.RunOptions(trace_level=ac.RunOptions.FULL_TRACE), run_metadata=meta
        )
    expected = [float((np.ones((400, 400)) @ (np.ones((400, 400)) + i)).sum()) for i in range(4)]
    np.testing.assert_allclose(vals, expected, rtol=1e-5)
    matmuls = [s for s in meta.step_stats if s.op_type == "MatMul"]
    assert len(matmuls) == 4
    assert all(s.worker.startswith("antcolony-cpu") for s in matmuls)


async def test_a_step_leaves_no_pending_state_in_node_actors(graph):
    with graph.as_default():
        x = ac.placeholder(ac.float32, [], name="x")
        y = (x + 1.0) * (x + 2.0)
    async with ac.Session(graph) as sess:
        for i in range(5):
            await sess.run(y, {x: float(i)})
        with pytest.raises(ac.errors.InvalidArgumentError):
            await sess.run(y, {x: np.zeros(3)})
        rt = get_runtime()
        assert rt.stats().actors_alive > 0
    assert sess.closed


async def test_list_devices_reports_the_cpu_and_the_simulated_gpus(graph):
    config = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=2, sim_gpu_memory=1 << 30)
    async with ac.Session(graph, config=config) as sess:
        devices = sess.list_devices()
    assert [d.device_type for d in devices] == ["CPU", "GPU", "GPU"]
    assert devices[0].name == "/job:localhost/replica:0/task:0/device:CPU:0"
    assert devices[2].name.endswith("device:GPU:1")
    assert [d.bus_id for d in devices[1:]] == ["0000:01:00.0", "0000:02:00.0"]
    assert devices[1].memory_limit_bytes == 1 << 30


async def test_soft_placement_off_rejects_a_device_that_does_not_exist(graph):
    with graph.as_default(), ac.device("/gpu:3"):
        y = ac.constant(1.0, name="on_gpu") + 1.0
    async with ac.Session(graph, config=ac.SessionConfig(allow_soft_placement=False)) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError, match="GPU:3"):
            await sess.run(y)
    async with ac.Session(graph) as sess:
        assert await sess.run(y) == 2.0


async def test_a_chrome_trace_is_valid_json_with_complete_events(graph):
    import json

    with graph.as_default():
        x = ac.constant(np.ones((3, 3), np.float32))
        y = ac.reduce_sum(ac.matmul(x, x))
    meta = ac.RunMetadata()
    async with ac.Session(graph) as sess:
        await sess.run(y, options=ac.RunOptions(trace_level=ac.RunOptions.FULL_TRACE), run_metadata=meta)
    trace = json.loads(meta.chrome_trace())
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert {e["name"] for e in events} >= {y.op.name}
    for e in trace["traceEvents"]:
        assert {"ph", "ts", "pid", "tid"} <= set(e)
    assert all(e["dur"] >= 0 for e in events)
