"""Implied control inputs (graph/passes/control_edges.py): dropping them keeps every ordering."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import antcolony as ac
from antcolony.graph.passes.control_edges import implied_control_inputs

# node k: (data input a, data input b, control inputs as a bit mask over earlier nodes)
dags = st.lists(
    st.tuples(st.integers(0, 10_000), st.integers(0, 10_000), st.integers(0, 2**20)),
    min_size=1,
    max_size=30,
)


def _build(spec: list[tuple[int, int, int]]) -> tuple[ac.Graph, list]:
    g = ac.Graph()
    with g.as_default():
        nodes = [ac.placeholder(ac.float64, [], name="in0"), ac.placeholder(ac.float64, [], name="in1")]
        for a, b, mask in spec:
            controls = [nodes[j].op for j in range(len(nodes)) if mask >> (j % 20) & 1]
            with ac.control_dependencies(controls):
                nodes.append(ac.add(nodes[a % len(nodes)], nodes[b % len(nodes)]))
    return g, nodes


def _ancestors(ops: list, fed: set[int], dropped: dict[int, set[int]]) -> dict[int, set[int]]:
    """Every op's ancestors in the step, along data edges from unfed tensors and the control
    edges not dropped (ops are in creation order, a topological order)."""
    anc: dict[int, set[int]] = {}
    for op in ops:
        preds = [t.op for t in op.inputs if id(t) not in fed]
        preds += [c for c in op.control_inputs if id(c) not in dropped.get(id(op), set())]
        mine: set[int] = set()
        for p in preds:
            mine.add(id(p))
            mine |= anc[id(p)]
        anc[id(op)] = mine
    return anc


@settings(max_examples=150, deadline=None)
@given(spec=dags, fed_mask=st.integers(0, 2**30))
def test_dropping_implied_control_inputs_keeps_every_ops_ancestors(spec, fed_mask):
    g, nodes = _build(spec)
    fed = {id(t) for k, t in enumerate(nodes[2:]) if fed_mask >> (k % 30) & 1}
    ops = sorted(g.get_operations(), key=lambda o: o._id)
    in_step = {id(op) for op in ops}
    dropped = {id(op): implied_control_inputs(op, fed, in_step) for op in ops}
    assert _ancestors(ops, fed, dropped) == _ancestors(ops, fed, {})
    # the pass drops only control inputs
    for op in ops:
        assert dropped[id(op)] <= {id(c) for c in op.control_inputs}


def test_adams_block_of_control_dependencies_keeps_one_edge_per_path():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [], name="x")
        beta = ac.constant(0.9, name="beta")  # made outside the block: no control inputs
        updates = [ac.add(x, float(k), name=f"update{k}").op for k in range(6)]
        with ac.control_dependencies(updates):
            read = ac.identity(x, name="read")
            scaled = ac.multiply(read, beta, name="scaled")
    in_step = {id(op) for op in g.get_operations()}
    everything = {id(u) for u in updates}
    assert implied_control_inputs(read.op, set(), in_step) == set()  # its only path
    assert implied_control_inputs(scaled.op, set(), in_step) == everything  # through read
    # fed, read does not run for scaled: the edges are all scaled has
    assert implied_control_inputs(scaled.op, {id(read)}, in_step) == set()


def test_an_op_ordered_only_through_a_fed_tensor_still_runs_after_its_control_input():
    """``second`` is ordered after ``first`` by its control input and by a data path through
    ``through``; with ``through`` fed, the control input is the only order left, though
    ``through``'s op still runs (it is a target). ``first`` waits for ``slow``, so ``second``
    would run first without it."""
    g = ac.Graph()
    ran: list[str] = []

    def record(name: str) -> Callable[[np.ndarray], np.ndarray]:
        def run(value: np.ndarray) -> np.ndarray:
            if name == "slow":
                time.sleep(0.02)  # on the CPU worker's thread
            ran.append(name)
            return value

        return run

    with g.as_default():
        x = ac.placeholder(ac.float64, [], name="x")
        slow = ac.py_func(record("slow"), [x], ac.float64, name="slow")
        first = ac.py_func(record("first"), [slow], ac.float64, name="first")
        through = ac.multiply(first, 0.0, name="through")
        with ac.control_dependencies([first.op]):
            second = ac.py_func(record("second"), [through], ac.float64, name="second")

    async def main(feed_through: bool) -> None:
        async with ac.Session(g) as sess:
            feed = {x: np.float64(1.0), **({through: np.float64(0.0)} if feed_through else {})}
            for _ in range(5):
                await sess.run([second, through.op], feed)

    for feed_through in (True, False):
        ran.clear()
        asyncio.run(main(feed_through))
        assert ran == ["slow", "first", "second"] * 5, feed_through
