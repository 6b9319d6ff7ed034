"""Fetch ownership through the async API (issue 27, item 1). The property: in random graphs of variables, feeds,
constants, views, pass-through ops, control flow, assigns and arithmetic, no fetched array
shares memory with a feed or another fetch, each is writable, and writing into all of them
changes no variable, feed or constant."""

from __future__ import annotations

import asyncio

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import antcolony as ac
from antcolony.actors.runtime import get_runtime

SHAPE = (2, 3)


def _view_ops(sink: ac.Variable):
    """name -> f(x): each keeps the (2, 3) shape; several hand back their input or a view."""
    return {
        "identity": ac.identity,
        "stop_gradient": ac.stop_gradient,
        "reshape_twice": lambda x: ac.reshape(ac.reshape(x, [3, 2]), list(SHAPE)),
        "transpose_twice": lambda x: ac.transpose(ac.transpose(x)),
        "slice_all": lambda x: x[:, :],
        "cond": lambda x: ac.cond(ac.constant(True), lambda: x, lambda: x + 1.0),
        "assign": lambda x: ac.assign(sink, x),
        "neg": ac.negative,
        "relu": ac.nn.relu,
    }


def _binary_ops():
    return {"add": ac.add, "mul": ac.multiply, "max": ac.maximum}


steps = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "identity",
                "stop_gradient",
                "reshape_twice",
                "transpose_twice",
                "slice_all",
                "cond",
                "assign",
                "neg",
                "relu",
                "add",
                "mul",
                "max",
            ]
        ),
        st.integers(0, 1000),
        st.integers(0, 1000),
    ),
    min_size=1,
    max_size=14,
)


def _build(spec):
    g = ac.Graph()
    with g.as_default():
        variables = [
            ac.Variable(np.arange(6, dtype=np.float32).reshape(SHAPE) + 10 * i, name=f"v{i}")
            for i in range(2)
        ]
        sink = ac.Variable(np.zeros(SHAPE, np.float32), name="sink")
        feeds = [ac.placeholder(ac.float32, list(SHAPE), name=f"x{i}") for i in range(2)]
        const = ac.constant(np.full(SHAPE, 3.0, np.float32), name="c")
        unary, binary = _view_ops(sink), _binary_ops()
        nodes = [*variables, *feeds, const]
        for name, a, b in spec:
            x, y = nodes[a % len(nodes)], nodes[b % len(nodes)]
            nodes.append(unary[name](x) if name in unary else binary[name](x, y))
        init = ac.global_variables_initializer()
    return g, [*variables, sink], feeds, const, nodes, init


@settings(max_examples=40, deadline=None)
@given(spec=steps, fetch_mask=st.integers(1, 2**20))
def test_no_fetched_array_shares_memory_with_a_variable_feed_constant_or_other_fetch(spec, fetch_mask):
    g, variables, feeds, const, nodes, init = _build(spec)
    fetched = list(dict.fromkeys(n for i, n in enumerate(nodes) if fetch_mask >> (i % 20) & 1)) or [nodes[-1]]
    fed = [np.full(SHAPE, 1.5 + i, np.float32) for i in range(len(feeds))]
    fed_before = [f.copy() for f in fed]

    async def main() -> None:
        async with ac.Session(g) as sess:
            await sess.run(init)
            got = await sess.run(fetched, dict(zip(feeds, fed)))
            # what the state is now: compared after every fetched array was written into
            state = await sess.run([*variables, const])
            for i, a in enumerate(got):
                assert isinstance(a, np.ndarray) and a.flags.writeable, (fetched[i].name, type(a))
                for f in fed:
                    assert not np.shares_memory(a, f), fetched[i].name
                for j in range(i + 1, len(got)):
                    assert not np.shares_memory(a, got[j]), (fetched[i].name, fetched[j].name)
                for s in state:
                    assert not np.shares_memory(a, s), fetched[i].name
            expected = [s.copy() for s in state]
            for a in (*got, *state):
                a[...] = -99.0
            for before, after in zip(expected, await sess.run([*variables, const])):
                np.testing.assert_array_equal(after, before)
        await get_runtime().shutdown()

    asyncio.run(main())
    for f, before in zip(fed, fed_before):
        np.testing.assert_array_equal(f, before)


async def test_a_variable_on_a_simulated_gpu_and_a_host_view_of_it_are_fetched_as_separate_arrays():
    g = ac.Graph()
    with g.as_default():
        with ac.device("/gpu:0"):
            w = ac.Variable(np.ones(5, np.float32))
        with ac.device("/cpu:0"):
            host_view = ac.identity(w)  # the host's copy of w, shared with the fetch of w
        init = ac.global_variables_initializer()
    config = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1, sim_gpu_memory=64 << 20)
    async with ac.Session(g, config=config) as sess:
        await sess.run(init)
        a, b = await sess.run([w, host_view])
        assert not np.shares_memory(a, b)
        a[...] = 7.0
        b[...] = 8.0
        np.testing.assert_array_equal(await sess.run(w), np.ones(5, np.float32))
