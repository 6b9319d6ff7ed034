"""Property: a random graph whose nodes are placed at random on /cpu:0, /gpu:0 and /gpu:1
(simulated GPUs) gives, for every fetched node, the value a plain numpy evaluation gives; also
under concurrent runs, which share the partitions' executors and the Send/Recv rendezvous."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import antcolony as ac
from antcolony.actors.runtime import get_runtime

DEVICES = ("/cpu:0", "/gpu:0", "/gpu:1")
SIM2 = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=2)
SHAPE = (3, 3)

# name -> (graph op, numpy op); binary ops read two earlier nodes, unary ones the first
_BINARY = {
    "add": (ac.add, np.add),
    "sub": (ac.subtract, np.subtract),
    "mul": (ac.multiply, np.multiply),
    "max": (ac.maximum, np.maximum),
    "matmul": (ac.matmul, np.matmul),
}
_UNARY = {
    "neg": (ac.negative, np.negative),
    "square": (ac.square, np.square),
    "tanh": (ac.nn.tanh, np.tanh),
    "transpose": (ac.transpose, np.transpose),
}
_OPS = {**_BINARY, **_UNARY}

nodes = st.lists(
    st.tuples(
        st.sampled_from(sorted(_OPS)),
        st.integers(0, 10_000),
        st.integers(0, 10_000),
        st.sampled_from(DEVICES),
    ),
    min_size=1,
    max_size=25,
)


def _build(
    spec: list[tuple[str, int, int, str]], inputs: int, input_devices: list[str]
) -> tuple[ac.Graph, list, list]:
    g = ac.Graph()
    with g.as_default():
        out = []
        for i, device in enumerate(input_devices[:inputs]):
            with ac.device(device):
                p = ac.placeholder(ac.float64, SHAPE, name=f"in{i}")
                # an identity on the drawn device: the feed is copied there before use
                out.append(ac.identity(p) if device != "/cpu:0" else p)
        placeholders = [g.get_tensor_by_name(f"in{i}:0") for i in range(inputs)]
        for name, a, b, device in spec:
            with ac.device(device):
                x, y = out[a % len(out)], out[b % len(out)]
                out.append(_BINARY[name][0](x, y) if name in _BINARY else _UNARY[name][0](x))
    return g, placeholders, out


def _numpy(spec: list[tuple[str, int, int, str]], values: list[np.ndarray]) -> list[np.ndarray]:
    out = list(values)
    for name, a, b, _ in spec:
        x, y = out[a % len(out)], out[b % len(out)]
        out.append(_BINARY[name][1](x, y) if name in _BINARY else _UNARY[name][1](x))
    return out


@pytest.fixture(scope="module")
def runner() -> Iterator[asyncio.Runner]:
    """One event loop (so one Runtime and one set of device workers) for every example: a
    session per example is what the property is about, not starting GPUs."""
    with asyncio.Runner() as r:
        yield r
        r.run(get_runtime(r.get_loop()).shutdown())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    spec=nodes,
    input_devices=st.lists(st.sampled_from(DEVICES), min_size=2, max_size=2),
    fetch_mask=st.integers(1, 2**30),
    data=st.data(),
)
def test_random_placements_match_numpy_for_every_fetched_node(runner, spec, input_devices, fetch_mask, data):
    inputs = 2
    g, placeholders, out = _build(spec, inputs, input_devices)
    fetch_ids = [i for i in range(len(out)) if fetch_mask >> (i % 30) & 1] or [len(out) - 1]
    elements = st.floats(-2, 2, allow_nan=False, width=64)
    feeds = [
        [
            np.array(data.draw(st.lists(elements, min_size=9, max_size=9))).reshape(SHAPE)
            for _ in range(inputs)
        ]
        for _ in range(2)
    ]

    async def run_all() -> tuple[list, set[str]]:
        async with ac.Session(g, config=SIM2) as sess:
            meta = ac.RunMetadata()
            traced = await sess.run(
                [out[i] for i in fetch_ids],
                dict(zip(placeholders, feeds[0])),
                options=ac.RunOptions(trace_level=ac.RunOptions.FULL_TRACE),
                run_metadata=meta,
            )
            concurrent = await asyncio.gather(
                *(sess.run([out[i] for i in fetch_ids], dict(zip(placeholders, f))) for f in feeds)
            )
        return [traced, *concurrent], {s.device for s in meta.step_stats}

    results, devices_used = runner.run(run_all())
    for f, got in zip([feeds[0], *feeds], results):
        expected = _numpy(spec, f)
        for i, value in zip(fetch_ids, got):
            np.testing.assert_allclose(value, expected[i], rtol=1e-12, atol=1e-12)
    # the placement was honoured: every device a fetched node was drawn for ran something
    wanted = {spec[i - inputs][3] for i in fetch_ids if i >= inputs}
    ran = {"/cpu:0" if "CPU" in d else f"/gpu:{d.rsplit(':', 1)[1]}" for d in devices_used}
    assert wanted <= ran, (wanted, devices_used)
