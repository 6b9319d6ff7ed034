"""Tests of the dependency engine: MXNet ordering semantics, priorities, errors, variants, settings."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from antcolony.actors.runtime import get_runtime
from antcolony.devices.engine import (
    Engine,
    NaiveEngine,
    PerDeviceEngine,
    PooledEngine,
    create_engine,
    get_engine,
)
from antcolony.errors import ConfigError, EngineError
from tests.waiting import until

KINDS = ["naive", "pooled", "per_device"]
SMALL = {
    "cpu_worker_nthreads": 3,
    "gpu_worker_nthreads": 2,
    "gpu_copy_nthreads": 1,
    "cpu_priority_nthreads": 2,
}

op_specs = st.lists(
    st.tuples(
        st.sets(st.integers(0, 3)),  # reads
        st.sets(st.integers(0, 3)),  # writes
        st.sampled_from(["sync", "coro", "async", "now"]),  # now: between hold and release, else a push
        st.integers(-1, 1),  # priority
        st.sampled_from([("/device:GPU:0", "normal"), ("/device:GPU:1", "copy"), (None, "cpu_prioritized")]),
    ),
    min_size=1,
    max_size=14,
)


async def _run_sequence(kind: str, nvars: int, specs: list[Any]) -> None:
    engine = create_engine(kind, **SMALL)
    variables = [engine.new_var(f"v{i}") for i in range(nvars)]
    counters = [0] * nvars
    lock = threading.Lock()
    ticks = itertools.count()
    log: dict[int, tuple[int, int, dict[int, int]]] = {}  # op -> (start, end, var -> version seen)

    def body(i: int, reads: set[int], writes: set[int]) -> None:
        with lock:
            start = next(ticks)
            seen = {v: counters[v] for v in reads | writes}
        time.sleep(0.0003)
        with lock:
            for v in writes:
                counters[v] += 1
            log[i] = (start, next(ticks), seen)

    futures = []
    for i, (reads, writes, how, priority, (device, prop)) in enumerate(specs):
        reads, writes = {r % nvars for r in reads}, {w % nvars for w in writes}

        def fn(i=i, r=reads, w=writes) -> Any:
            return body(i, r, w)

        if how == "now":
            reads_t = tuple(variables[r] for r in sorted(reads))
            writes_t = tuple(variables[w] for w in sorted(writes))
            held = engine.hold(reads_t, writes_t)
            if held is not None:
                try:
                    fn()
                finally:
                    engine.release(held)
                futures.append(asyncio.sleep(0))
                continue
        if how == "coro":
            fn = _as_coroutine_function(fn)
        elif how == "async":
            prop, fn = "async", _as_async_prop(fn)
        futures.append(
            engine.push(
                fn,
                device,
                [variables[r] for r in reads],
                [variables[w] for w in writes],
                prop=prop,
                priority=priority,
            )
        )
    await asyncio.wait_for(asyncio.gather(*futures), 5)
    await engine.aclose()

    for i, (reads, writes, *_rest) in enumerate(specs):
        reads, writes = {r % nvars for r in reads}, {w % nvars for w in writes}
        for v, version in log[i][2].items():
            earlier_writes = sum(1 for s in specs[:i] if v in {w % nvars for w in s[1]})
            assert version == earlier_writes, (
                f"op {i} saw version {version} of v{v}, expected {earlier_writes}"
            )
    for v in range(nvars):
        touching = [i for i, s in enumerate(specs) if v in {x % nvars for x in s[0] | s[1]}]
        for i, j in itertools.combinations(touching, 2):
            if v in {w % nvars for w in specs[i][1] | specs[j][1]}:
                (s1, e1, _), (s2, e2, _) = log[i], log[j]
                assert e1 < s2 or e2 < s1, f"ops {i} and {j} overlapped on v{v} with a write"
        assert variables[v].version == counters[v]


def _as_coroutine_function(fn: Callable[[], None]) -> Callable[[], Any]:
    async def run() -> None:
        await asyncio.to_thread(fn)

    return run


def _as_async_prop(fn: Callable[[], None]) -> Callable[[Callable[[], None]], None]:
    def start(on_complete: Callable[[], None]) -> None:
        threading.Thread(target=lambda: (fn(), on_complete())).start()

    return start


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=20, deadline=None)
@given(nvars=st.integers(2, 4), specs=op_specs)
def test_every_read_sees_exactly_the_earlier_writes_and_writes_never_overlap(
    kind: str, nvars: int, specs: list[Any]
) -> None:
    asyncio.run(_run_sequence(kind, nvars, specs))


@pytest.mark.parametrize("kind", KINDS)
async def test_a_hundred_concurrent_increments_leave_the_counter_at_a_hundred(kind: str) -> None:
    engine = create_engine(kind, **SMALL)
    var, box = engine.new_var(), [0]

    def increment() -> None:
        value = box[0]
        time.sleep(0)  # invite a lost update if two increments ever overlapped
        box[0] = value + 1

    await asyncio.gather(*(engine.push(increment, writes=[var]) for _ in range(100)))
    assert box[0] == 100 and var.version == 100
    await engine.aclose()


@pytest.mark.parametrize(("kind", "device"), [("pooled", None), ("per_device", "/device:GPU:0")])
async def test_waiting_ops_run_highest_priority_first_and_fifo_within_a_priority(
    kind: str, device: str
) -> None:
    engine = create_engine(kind, cpu_worker_nthreads=1, gpu_worker_nthreads=1)
    gate, order = threading.Event(), []
    blocker = engine.push(lambda: gate.wait(2), device)
    priorities = [0, 2, 1, 2, 0, 1, -1]
    pushed = [engine.push(lambda i=i: order.append(i), device, priority=p) for i, p in enumerate(priorities)]
    gate.set()
    await asyncio.gather(blocker, *pushed)
    assert order == sorted(range(len(priorities)), key=lambda i: -priorities[i])  # sorted() is stable
    await engine.aclose()


@pytest.mark.parametrize(("kind", "device"), [("pooled", None), ("per_device", "/device:GPU:0")])
async def test_reads_of_one_version_run_in_parallel(kind: str, device: str) -> None:
    engine = create_engine(kind, cpu_worker_nthreads=2, gpu_worker_nthreads=2)
    var = engine.new_var()
    both_inside = threading.Barrier(2, timeout=10)  # breaks unless both reads run at once
    await asyncio.gather(*(engine.push(both_inside.wait, device, reads=[var]) for _ in range(2)))
    await engine.aclose()


async def test_a_read_pushed_after_a_write_waits_for_it_even_while_earlier_reads_run() -> None:
    engine = create_engine("pooled", cpu_worker_nthreads=4)
    var, gate, events = engine.new_var(), threading.Event(), []
    first = engine.push(lambda: (gate.wait(2), events.append("read1")), reads=[var])
    write = engine.push(lambda: events.append("write"), writes=[var])
    second = engine.push(lambda: events.append("read2"), reads=[var])
    await until(lambda: engine.stats().running == 1, "the first read running")
    await asyncio.sleep(0.02)  # time for a wrongly ordered write or read to show itself
    assert events == [] and engine.stats().running == 1
    gate.set()
    await asyncio.gather(first, write, second)
    assert events == ["read1", "write", "read2"]
    await engine.aclose()


async def test_copies_overlap_compute_on_one_device() -> None:
    engine = create_engine("per_device", gpu_worker_nthreads=1, gpu_copy_nthreads=1)
    both_inside = threading.Barrier(2, timeout=10)  # breaks unless both run at once
    await asyncio.gather(
        engine.push(both_inside.wait, "/device:GPU:0"),
        engine.push(both_inside.wait, "/device:GPU:0", prop="copy"),
    )
    assert isinstance(engine, PerDeviceEngine)
    assert engine.pools() == {("/device:GPU:0", "compute"): 1, ("/device:GPU:0", "copy"): 1}
    await engine.aclose()


@pytest.mark.parametrize("kind", KINDS)
async def test_a_failed_op_fails_its_future_and_is_raised_once_by_wait_for_var_and_wait_all(
    kind: str,
) -> None:
    engine = create_engine(kind, **SMALL)
    var, seen = engine.new_var(), []

    def fail() -> None:
        raise ValueError("bad write")

    failed = engine.push(fail, writes=[var])
    dependent = engine.push(lambda: seen.append("ran"), reads=[var])
    with pytest.raises(ValueError, match="bad write"):
        await failed
    await dependent
    assert seen == ["ran"]  # dependents still run
    with pytest.raises(ValueError, match="bad write"):
        await engine.wait_for_var(var)
    await engine.wait_for_var(var)  # cleared
    with pytest.raises(ValueError, match="bad write"):
        await engine.wait_all()
    await engine.wait_all()
    assert engine.stats().failed == 1
    await engine.aclose()


async def test_wait_for_var_waits_only_for_ops_on_that_var_and_wait_all_for_every_op() -> None:
    engine = create_engine("pooled", cpu_worker_nthreads=2)
    slow_var, quick_var, gate, done = engine.new_var(), engine.new_var(), threading.Event(), []
    engine.push(lambda: (gate.wait(2), done.append("slow")), reads=[slow_var])
    engine.push(lambda: done.append("quick"), writes=[quick_var])
    await asyncio.wait_for(engine.wait_for_var(quick_var), 1)
    assert done == ["quick"] and engine.stats().running == 1
    gate.set()
    await asyncio.wait_for(engine.wait_all(), 1)
    assert done == ["quick", "slow"]
    assert engine.stats() == type(engine.stats())(pushed=2, completed=2, failed=0, pending=0, running=0)
    await engine.aclose()


async def test_the_naive_engine_runs_ops_one_at_a_time_in_push_order() -> None:
    engine = create_engine("naive")
    assert isinstance(engine, NaiveEngine)
    variables = [engine.new_var() for _ in range(3)]
    events: list[tuple[str, int]] = []

    def body(i: int) -> None:
        events.append(("start", i))
        time.sleep(0.002 * (5 - i))  # earlier ops are slower: a parallel engine would reorder ends
        events.append(("end", i))

    futures = [engine.push(lambda i=i: body(i), reads=[variables[i % 3]], priority=i) for i in range(5)]
    await asyncio.gather(*futures)
    assert events == [(kind, i) for i in range(5) for kind in ("start", "end")]
    await engine.aclose()


async def test_coroutine_functions_are_awaited_on_the_loop() -> None:
    engine = create_engine("pooled", cpu_worker_nthreads=1)
    var = engine.new_var()

    async def produce() -> str:
        await asyncio.sleep(0.001)
        return threading.current_thread().name

    assert await engine.push(produce, writes=[var]) == threading.current_thread().name
    await engine.aclose()


@pytest.mark.parametrize("kind", KINDS)
async def test_an_async_op_completes_when_on_complete_is_called_from_another_thread(kind: str) -> None:
    engine = create_engine(kind, **SMALL)
    var, events, callbacks = engine.new_var(), [], []

    def start(on_complete: Callable[..., None]) -> None:
        callbacks.append(on_complete)
        threading.Timer(0.02, lambda: (events.append("async done"), on_complete())).start()

    async_op = engine.push(start, writes=[var], prop="async")
    after = engine.push(lambda: events.append("after"), reads=[var])
    assert await async_op is None
    await after
    assert events == ["async done", "after"]
    with pytest.raises(EngineError, match="twice"):
        callbacks[0]()

    failing = engine.push(
        lambda on_complete: on_complete(RuntimeError("device lost")), writes=[var], prop="async"
    )
    with pytest.raises(RuntimeError, match="device lost"):
        await failing
    with pytest.raises(ZeroDivisionError):
        await engine.push(lambda on_complete: 1 / 0, writes=[var], prop="async")
    with pytest.raises(RuntimeError, match="device lost"):
        await engine.wait_for_var(var)  # the first failure on the var
    await engine.aclose()


async def test_misuse_raises_engine_errors() -> None:
    engine, other = create_engine("pooled"), create_engine("pooled")
    var = engine.new_var()
    with pytest.raises(EngineError, match="not a var of this engine"):
        engine.push(lambda: None, reads=[other.new_var()])
    with pytest.raises(EngineError, match="unknown prop"):
        engine.push(lambda: None, prop="fast")
    engine.delete_var(var)
    with pytest.raises(EngineError, match="deleted"):
        engine.push(lambda: None, writes=[var])
    await engine.aclose()
    with pytest.raises(EngineError, match="closed"):
        engine.push(lambda: None)


async def test_a_var_in_both_reads_and_writes_counts_once_as_a_write() -> None:
    engine = create_engine("pooled", cpu_worker_nthreads=2)
    var = engine.new_var()
    await engine.push(lambda: None, reads=[var, var], writes=[var, var])
    assert var.version == 1
    await engine.aclose()


async def test_get_engine_is_a_runtime_extension_closed_at_shutdown() -> None:
    engine = get_engine()
    assert get_engine() is engine
    future = engine.push(lambda: time.sleep(0.01))
    await get_runtime().shutdown()
    assert future.done() and engine.closed


@pytest.mark.parametrize(
    ("value", "cls"),
    [
        ("naive", NaiveEngine),
        ("NaiveEngine", NaiveEngine),
        ("ThreadedEngine", PooledEngine),
        ("ThreadedEnginePerDevice", PerDeviceEngine),
        ("pooled", PooledEngine),
        ("", PerDeviceEngine),
    ],
)
def test_the_engine_type_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, value: str, cls: type
) -> None:
    monkeypatch.setenv("ANTCOLONY_ENGINE_TYPE", value)
    assert type(create_engine()) is cls


def test_worker_counts_come_from_arguments_then_environment_then_defaults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("GPU_WORKER", "GPU_COPY", "CPU_WORKER", "CPU_PRIORITY"):
        monkeypatch.delenv(f"ANTCOLONY_{name}_NTHREADS", raising=False)
    assert create_engine("per_device").settings.gpu_worker_nthreads == 2
    monkeypatch.setenv("ANTCOLONY_GPU_WORKER_NTHREADS", "5")
    monkeypatch.setenv("ANTCOLONY_CPU_PRIORITY_NTHREADS", "7")
    engine: Engine = create_engine("per_device", gpu_worker_nthreads=3)
    assert (engine.settings.gpu_worker_nthreads, engine.settings.cpu_priority_nthreads) == (3, 7)
    assert engine.settings.gpu_copy_nthreads == 1 and engine.settings.cpu_worker_nthreads >= 1


@pytest.mark.parametrize(
    ("env", "value", "message"),
    [
        ("ANTCOLONY_ENGINE_TYPE", "TurboEngine", "ANTCOLONY_ENGINE_TYPE"),
        ("ANTCOLONY_GPU_WORKER_NTHREADS", "two", "ANTCOLONY_GPU_WORKER_NTHREADS"),
        ("ANTCOLONY_GPU_COPY_NTHREADS", "0", "ANTCOLONY_GPU_COPY_NTHREADS"),
        ("ANTCOLONY_CPU_WORKER_NTHREADS", "1.5", "ANTCOLONY_CPU_WORKER_NTHREADS"),
        ("ANTCOLONY_CPU_PRIORITY_NTHREADS", "-3", "ANTCOLONY_CPU_PRIORITY_NTHREADS"),
    ],
)
def test_invalid_engine_settings_raise_a_config_error_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, env: str, value: str, message: str
) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(ConfigError, match=message):
        create_engine()


def test_unknown_kinds_and_settings_raise_config_errors() -> None:
    with pytest.raises(ConfigError, match="names no engine"):
        create_engine("fastest")
    with pytest.raises(ConfigError, match="unknown engine setting"):
        create_engine("pooled", nthreads=4)
    with pytest.raises(ConfigError, match="gpu_worker_nthreads"):
        create_engine("pooled", gpu_worker_nthreads=0)


async def test_hold_takes_only_free_vars_and_keeps_them_until_release() -> None:
    engine = create_engine("pooled", **SMALL)
    a, b = engine.new_var("a"), engine.new_var("b")
    order: list[str] = []
    release = threading.Event()
    pending = engine.push(lambda: (release.wait(5), order.append("held")), writes=[a])
    # a is written by a pending op: nothing is taken, the caller pushes instead
    assert engine.hold((a,), ()) is None
    assert engine.hold((), (a,)) is None
    assert not a._reads
    held = engine.hold((), (b,))
    assert held is not None
    order.append("write b")
    # pushed while b is held: it waits for the release
    inner = engine.push(lambda: order.append("after b"), reads=[b])
    assert b._writing and not inner.done()
    engine.release(held)
    assert order[0] == "write b" and b.version == 1
    await asyncio.wait_for(inner, 5)  # started once b was released
    release.set()
    await asyncio.wait_for(pending, 5)
    assert order == ["write b", "after b", "held"]
    assert engine.stats().completed == engine.stats().pushed == 3

    held = engine.hold((), (b,))
    assert held is not None
    engine.release(held, ValueError("kernel failed"))
    assert b.version == 2 and not b._writing  # released, the failure recorded on b
    with pytest.raises(ValueError, match="kernel failed"):
        await engine.wait_for_var(b)
    with pytest.raises(ValueError, match="kernel failed"):
        await engine.wait_all()
    await engine.aclose()
