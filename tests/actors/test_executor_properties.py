"""Property tests of the executor: random DAGs give the values a plain numpy evaluation gives."""

from __future__ import annotations

import asyncio

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import antcolony as ac
from antcolony.actors.runtime import get_runtime
from tests.random_dags import BINARY_OPS, numpy_values

dags = st.lists(
    st.tuples(st.sampled_from(sorted(BINARY_OPS)), st.integers(0, 10_000), st.integers(0, 10_000)),
    min_size=1,
    max_size=40,
)


def _build(spec: list[tuple[str, int, int]], inputs: int) -> tuple[ac.Graph, list, list]:
    g = ac.Graph()
    with g.as_default():
        nodes = [ac.placeholder(ac.float64, [3], name=f"in{i}") for i in range(inputs)]
        for name, a, b in spec:
            nodes.append(BINARY_OPS[name][0](nodes[a % len(nodes)], nodes[b % len(nodes)]))
    return g, nodes[:inputs], nodes


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec=dags, fetch_mask=st.integers(1, 2**40), data=st.data())
def test_random_dags_match_numpy_for_every_fetched_node_under_concurrent_runs(spec, fetch_mask, data):
    inputs = 3
    g, placeholders, nodes = _build(spec, inputs)
    fetch_ids = [i for i in range(len(nodes)) if fetch_mask >> (i % 40) & 1] or [len(nodes) - 1]
    feeds = [
        [np.array(data.draw(st.lists(st.floats(-4, 4), min_size=3, max_size=3))) for _ in range(inputs)]
        for _ in range(3)
    ]

    async def run_all() -> list:
        async with ac.Session(g) as sess:
            runs = [sess.run([nodes[i] for i in fetch_ids], dict(zip(placeholders, f))) for f in feeds]
            results = await asyncio.gather(*runs)
        await get_runtime().shutdown()
        return results

    results = asyncio.run(run_all())
    for f, got in zip(feeds, results):
        expected = numpy_values(spec, f)
        for i, value in zip(fetch_ids, got):
            np.testing.assert_allclose(value, expected[i], rtol=1e-12, atol=1e-12)
