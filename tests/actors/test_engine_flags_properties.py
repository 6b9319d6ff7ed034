"""Property: the three execution-engine settings (``bulk_segments``, ``fuse_loops``,
``gpu_pipeline``) change how a step runs, never what it computes. Random DAGs of CPU and
simulated-GPU nodes, alone, as the body of a while loop and inside a cond, give the values plain
numpy gives, under every one of the eight combinations, with runs in flight at once."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import antcolony as ac
from antcolony.actors.runtime import get_runtime
from tests.random_dags import BINARY_OPS, numpy_values

FLAGS = ("bulk_segments", "fuse_loops", "gpu_pipeline")
COMBINATIONS = [dict(zip(FLAGS, values)) for values in itertools.product((False, True), repeat=3)]

dags = st.lists(
    st.tuples(
        st.sampled_from(sorted(BINARY_OPS)), st.integers(0, 10_000), st.integers(0, 10_000), st.booleans()
    ),
    min_size=1,
    max_size=12,
)


def _dag(spec: list[tuple[str, int, int, bool]], x: Any, scope: str) -> list[Any]:
    nodes = [x]
    for k, (name, a, b, on_gpu) in enumerate(spec):
        with ac.device("/gpu:0" if on_gpu else "/cpu:0"):
            nodes.append(
                BINARY_OPS[name][0](nodes[a % len(nodes)], nodes[b % len(nodes)], name=f"{scope}{k}")
            )
    return nodes


def _build(spec: list[tuple[str, int, int, bool]]) -> tuple[ac.Graph, dict[str, Any], list[Any]]:
    """The DAG on x, the DAG iterated ``n`` times by a while loop, and a cond choosing the DAG."""
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float64, [3], name="x")
        n = ac.placeholder(ac.int32, [], name="n")
        t = ac.placeholder(ac.float64, [], name="t")
        plain = _dag(spec, x, "plain")
        _, looped = ac.while_loop(
            lambda i, v: i < n, lambda i, v: (i + 1, _dag(spec, v, "body")[-1]), [ac.constant(0), x]
        )
        chosen = ac.cond(ac.reduce_sum(x) > t, lambda: _dag(spec, x, "then")[-1], lambda: x - 1.0)
    return g, {"x": x, "n": n, "t": t}, [*plain[1:], looped, chosen]


def _expected(spec: list[tuple[str, int, int, bool]], x: np.ndarray, n: int, t: float) -> list[np.ndarray]:
    plain = numpy_values(spec, [x])
    v = x
    for _ in range(n):
        v = numpy_values(spec, [v])[-1]
    chosen = plain[-1] if x.sum() > t else x - 1.0
    return [*plain[1:], v, chosen]


@pytest.fixture(scope="module")
def runner() -> Iterator[asyncio.Runner]:
    """One event loop (one Runtime, one simulated GPU pool) for every example of the module."""
    with asyncio.Runner() as r:
        yield r
        r.run(get_runtime(r.get_loop()).shutdown())


@pytest.mark.parametrize(
    "flags", COMBINATIONS, ids=lambda f: "-".join(k for k, on in f.items() if on) or "none"
)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    spec=dags,
    fetch_mask=st.integers(1, 2**14),
    feeds=st.lists(
        st.tuples(
            st.lists(st.sampled_from([-1.5, -0.5, 0.25, 1.0, 2.0]), min_size=3, max_size=3),
            st.integers(0, 3),
            st.sampled_from([-1.0, 0.0, 1.5]),
        ),
        min_size=1,
        max_size=3,
    ),
)
# Every combination also runs this DAG: CPU chains (with values that stay inside a segment
# under bulk_segments) cut by a GPU node (pipelined under gpu_pipeline), only the last node fetched, a
# loop run twice and not at all (fused under fuse_loops), and both branches of the cond. Random
# DAGs alone missed a mutation of the segment's internal edges in two of the four combinations.
@example(
    spec=[
        ("add", 0, 0, False),
        ("mul", 1, 0, False),
        ("sub", 2, 1, False),
        ("max", 3, 3, True),
        ("add", 4, 4, False),
        ("mul", 5, 5, False),
        ("sub", 6, 5, False),
    ],
    fetch_mask=1 << 6,
    feeds=[([1.0, 2.0, -0.5], 2, 0.0), ([-1.5, 0.25, 1.0], 0, 1.5)],
)
def test_every_engine_setting_gives_numpys_values(runner, flags, spec, fetch_mask, feeds):
    g, ph, outputs = _build(spec)
    plain = [k for k in range(len(outputs) - 2) if fetch_mask >> (k % 14) & 1] or [len(outputs) - 3]
    # Separate runs: a step whose pruned graph has no control flow is the one segments host.
    fetch_sets = [plain, [len(outputs) - 2], [len(outputs) - 1]]
    config = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1, **flags)
    values = [(np.array(x), n, t) for x, n, t in feeds]

    async def run_all() -> list[Any]:
        async with ac.Session(g, config=config) as sess:
            return await asyncio.gather(
                *(
                    sess.run([outputs[k] for k in ks], {ph["x"]: x, ph["n"]: n, ph["t"]: t})
                    for x, n, t in values
                    for ks in fetch_sets
                )
            )

    results = iter(runner.run(run_all()))
    with np.errstate(all="ignore"):
        for x, n, t in values:
            want = _expected(spec, x, n, t)
            for ks in fetch_sets:
                for k, value in zip(ks, next(results), strict=True):
                    np.testing.assert_allclose(value, want[k], rtol=1e-12, err_msg=f"output {k} of {flags}")
