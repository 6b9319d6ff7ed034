"""Property: random nests of while loops and conds (random trip counts, bodies of a few scalar
ops, loops inside conds inside loops) give what the same program gives in plain Python; also
with runs of different trip counts in flight at once, which share the executor's frames."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import antcolony as ac
from antcolony.actors.runtime import get_runtime

SIM1 = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1)

# A program is a block: a list of statements on one float64 scalar x.
#   ("affine", a, b)            x = x * a + b
#   ("cond", t, then, else)     x = then(x) if x > t else else(x)
#   ("loop", n, body)           repeat body(x) n times (n a constant; the outer loop's is fed)
_coef = st.sampled_from([-1.5, -1.0, -0.5, 0.5, 0.75, 1.0, 1.25])
_shift = st.sampled_from([-2.0, -1.0, -0.25, 0.0, 0.5, 1.0, 3.0])
_affine = st.tuples(st.just("affine"), _coef, _shift)


def _statements(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    block = st.lists(inner, min_size=1, max_size=3)
    return st.tuples(st.just("cond"), _shift, block, block) | st.tuples(
        st.just("loop"), st.integers(0, 3), block
    )


statement = st.recursive(_affine, _statements, max_leaves=8)
programs = st.lists(statement, min_size=1, max_size=3)


def _python(block: list[Any], x: float) -> float:
    for stmt in block:
        if stmt[0] == "affine":
            x = x * stmt[1] + stmt[2]
        elif stmt[0] == "cond":
            x = _python(stmt[2] if x > stmt[1] else stmt[3], x)
        else:
            for _ in range(stmt[1]):
                x = _python(stmt[2], x)
    return x


def _graph_block(block: list[Any], x: ac.Tensor) -> ac.Tensor:
    for stmt in block:
        x = _graph_statement(stmt, x)
    return x


def _graph_statement(stmt: tuple[Any, ...], x: ac.Tensor) -> ac.Tensor:
    if stmt[0] == "affine":
        return x * stmt[1] + stmt[2]
    if stmt[0] == "cond":
        _, t, then, other = stmt
        return ac.cond(x > t, lambda: _graph_block(then, x), lambda: _graph_block(other, x))
    _, n, body = stmt
    _, out = ac.while_loop(
        lambda i, v: i < n, lambda i, v: (i + 1, _graph_block(body, v)), [ac.constant(0), x]
    )
    return out


@pytest.fixture(scope="module")
def runner() -> Iterator[asyncio.Runner]:
    """One event loop (one Runtime and its device workers) for every example."""
    with asyncio.Runner() as r:
        yield r
        r.run(get_runtime(r.get_loop()).shutdown())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    program=programs,
    trips=st.lists(st.integers(0, 4), min_size=1, max_size=3),
    x0=st.sampled_from([-3.0, -0.5, 0.0, 0.25, 1.0, 2.5]),
    device=st.sampled_from(["/cpu:0", "/gpu:0"]),
)
def test_random_loops_and_conds_match_python(runner, program, trips, x0, device):
    g = ac.Graph()
    with g.as_default(), ac.device(device):
        n = ac.placeholder(ac.int32, [], name="n")
        x = ac.placeholder(ac.float64, [], name="x")
        _, result = ac.while_loop(
            lambda i, v: i < n, lambda i, v: (i + 1, _graph_block(program, v)), [ac.constant(0), x]
        )

    def expected(trip: int) -> float:
        v = x0
        for _ in range(trip):
            v = _python(program, v)
        return v

    async def run_all() -> list[Any]:
        async with ac.Session(g, config=SIM1) as sess:
            return await asyncio.gather(*(sess.run(result, {n: trip, x: x0}) for trip in trips))

    for trip, got in zip(trips, runner.run(run_all())):
        want = expected(trip)
        assert float(got) == pytest.approx(want, rel=1e-12, abs=1e-12), (trip, program)
