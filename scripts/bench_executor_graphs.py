"""The graphs of ``scripts/bench_executor.py``, each built by one function against a module ``m``
that is either ``antcolony`` or ``tensorflow.compat.v1``: the API names are TF1's, so both
frameworks run the very same graph, node for node, from the same numpy values.

Every graph starts from fed values (placeholders), so no framework can fold it into a constant at
build time, and every op's result is consumed by a fetch, so none can be pruned away.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Bench:
    """A graph ready to time: run ``init`` once, then ``fetches`` with ``feed`` repeatedly.

    ``units`` divides a step's time into the figure's unit (nodes of a chain, loop iterations)."""

    graph: Any
    fetches: Any
    feed: dict[Any, Any] = field(default_factory=dict)
    init: Any = None
    units: int = 1


def chain(m: Any, n: int) -> Bench:
    """``n`` scalar adds one after another, from a fed scalar."""
    g = m.Graph()
    with g.as_default():
        start = m.placeholder(m.float32, [], name="start")
        x = start
        for _ in range(n):
            x = m.add(x, 1.0)
    return Bench(g, x, {start: np.float32(0.0)}, units=n)


def fan_in(m: Any, n: int) -> Bench:
    """``n`` independent scalar adds of a fed scalar, joined by one add_n."""
    g = m.Graph()
    with g.as_default():
        one = m.placeholder(m.float32, [], name="one")
        x = m.add_n([m.add(one, float(i)) for i in range(n)])
    return Bench(g, x, {one: np.float32(1.0)}, units=n)


def one_node(m: Any) -> Bench:
    """A one-node graph: what ``session.run`` costs beyond the work."""
    g = m.Graph()
    with g.as_default():
        c = m.constant(1.0)
    return Bench(g, c)


def matmuls(m: Any, mats: list[np.ndarray]) -> Bench:
    """One independent ``x @ x`` per fed matrix; each product is consumed by its sum."""
    g = m.Graph()
    with g.as_default():
        phs = [m.placeholder(m.float32, a.shape, name=f"m{i}") for i, a in enumerate(mats)]
        done = [m.reduce_sum(m.matmul(p, p)) for p in phs]
    return Bench(g, done, dict(zip(phs, mats)))


def mlp_train(
    m: Any,
    batch: int = 64,
    features: int = 64,
    hidden: tuple[int, ...] = (128, 64),
    classes: int = 10,
    seed: int = 0,
) -> Bench:
    """One training step of a 3-layer MLP (the digits model's shape): dense layers with ReLU,
    sparse softmax cross entropy, Adam; weights and the batch are the same numpy arrays on both
    sides."""
    rng = np.random.default_rng(seed)
    x_val = rng.standard_normal((batch, features)).astype(np.float32)
    y_val = rng.integers(0, classes, batch).astype(np.int64)
    g = m.Graph()
    with g.as_default():
        x = m.placeholder(m.float32, [None, features], name="x")
        labels = m.placeholder(m.int64, [None], name="labels")
        h, fan = x, features
        widths = (*hidden, classes)
        for i, width in enumerate(widths):
            w0 = (rng.standard_normal((fan, width)) * np.sqrt(2.0 / fan)).astype(np.float32)
            w = m.Variable(w0, name=f"w{i}")
            b = m.Variable(np.zeros(width, np.float32), name=f"b{i}")
            h = m.nn.bias_add(m.matmul(h, w), b)
            if i < len(widths) - 1:
                h = m.nn.relu(h)
            fan = width
        xent = m.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=h)
        loss = m.reduce_mean(xent)
        train = m.train.AdamOptimizer(1e-3).minimize(loss)
        init = m.global_variables_initializer()
    return Bench(g, [loss, train], {x: x_val, labels: y_val}, init=init)


def while_counter(m: Any, iterations: int) -> Bench:
    """A ``while_loop`` with a counter and an accumulator: per iteration a Less, two adds and a
    multiply on scalars. The iteration count and the addend are fed."""
    g = m.Graph()
    with g.as_default():
        limit = m.placeholder(m.int32, [], name="limit")
        x = m.placeholder(m.float32, [], name="x")
        _, acc = m.while_loop(
            lambda i, a: m.less(i, limit),
            lambda i, a: (m.add(i, 1), m.add(m.multiply(a, 0.5), x)),
            [m.constant(0), m.constant(0.0)],
        )
    return Bench(g, acc, {limit: np.int32(iterations), x: np.float32(1.0)}, units=iterations)


def gpu_fan_in(m: Any, n: int) -> Bench:
    """``n`` independent trivial kernels on ``/gpu:0`` (scalar adds of a fed scalar) joined by
    one add_n there: a step is ``n + 1`` GPU launches with nothing to wait for between them.
    Timed per step; the benchmark counts the launches from a traced run."""
    g = m.Graph()
    with g.as_default():
        one = m.placeholder(m.float32, [], name="one")
        with m.device("/gpu:0"):
            x = m.add_n([m.add(one, float(i)) for i in range(n)])
    return Bench(g, x, {one: np.float32(1.0)})


def node_count(graph: Any) -> int:
    return len(graph.get_operations())
