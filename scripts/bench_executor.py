"""Executor overheads, measured in one run (under uvloop when installed).

Prints: per-node overhead for a chain of N scalar adds and for N independent adds joined by
add_n; the fixed cost of ``session.run`` on a one-node graph; the speedup of 16 independent
512x512 matmuls over running them one after another in plain numpy. Where TensorFlow
(tf.compat.v1) or dask is installed, the same graphs are timed with them and ratios printed.

    python scripts/bench_executor.py [--nodes 2000] [--repeat 20]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np

import antcolony as ac

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def best_of(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


async def abest_of(fn: Callable[[], Awaitable[Any]], repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        await fn()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times)


# The chain and fan-out start from a fed scalar: TF's Grappler would otherwise fold an all-constant
# graph into one constant at build time and time nothing.
def chain_graph(n: int) -> tuple[ac.Graph, Any, dict]:
    g = ac.Graph()
    with g.as_default():
        start = ac.placeholder(ac.float32, [], name="start")
        x = start
        for _ in range(n):
            x = ac.add(x, 1.0)
    return g, x, {start: np.float32(0.0)}


def fanout_graph(n: int) -> tuple[ac.Graph, Any, dict]:
    g = ac.Graph()
    with g.as_default():
        one = ac.placeholder(ac.float32, [], name="one")
        x = ac.add_n([ac.add(one, float(i)) for i in range(n)])
    return g, x, {one: np.float32(1.0)}


def matmul_graph(mats: list[np.ndarray]) -> tuple[ac.Graph, Any, dict[Any, np.ndarray]]:
    """Matrices are fed (not constants) and each product is consumed (its sum is fetched), so no
    framework can fold or prune the products (TF's Grappler drops ops whose outputs are unused)."""
    g = ac.Graph()
    with g.as_default():
        phs = [ac.placeholder(ac.float32, m.shape, name=f"m{i}") for i, m in enumerate(mats)]
        done = [ac.reduce_sum(ac.matmul(p, p)) for p in phs]
    return g, done, dict(zip(phs, mats))


async def time_graph(
    g: ac.Graph, fetch: Any, repeat: int, config: ac.SessionConfig | None = None, feed: dict | None = None,
) -> tuple[float, float]:
    async with ac.Session(g, config=config) as sess:
        await sess.run(fetch, feed)  # builds and caches the executor
        return await abest_of(lambda: sess.run(fetch, feed), repeat)


async def antcolony_figures(n: int, repeat: int, mats: list[np.ndarray]) -> dict[str, float]:
    figs: dict[str, float] = {}
    g, x, feed = chain_graph(n)
    figs["chain"], figs["chain_median"] = await time_graph(g, x, repeat, feed=feed)
    g, x, feed = fanout_graph(n)
    figs["fanout"], figs["fanout_median"] = await time_graph(g, x, repeat, feed=feed)
    g = ac.Graph()
    with g.as_default():
        c = ac.constant(1.0)
    figs["fixed"], figs["fixed_median"] = await time_graph(g, c, max(repeat, 2000))
    g, done, feed = matmul_graph(mats)
    figs["matmul"], _ = await time_graph(g, done, repeat, feed=feed)
    return figs


def tf_figures(n: int, repeat: int, mats: list[np.ndarray]) -> dict[str, float] | None:
    if importlib.util.find_spec("tensorflow") is None:
        return None
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    # Grappler would fold the chains of constant adds and prune unused ops: measure the executor.
    config = tf.ConfigProto()
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    figs = {}
    for key, build in (("chain", _tf_chain), ("fanout", _tf_fanout)):
        g = tf.Graph()
        with g.as_default():
            start = tf.placeholder(tf.float32, [])
            fetch = build(tf, n, start)
        with tf.Session(graph=g, config=config) as s:
            s.run(fetch, {start: 0.0})
            figs[key] = best_of(lambda: s.run(fetch, {start: 0.0}), repeat)  # noqa: B023 - timed before the loop moves on
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(1.0)
    with tf.Session(graph=g, config=config) as s:
        figs["fixed"] = best_of(lambda: s.run(c), 2000)
    g = tf.Graph()
    with g.as_default():
        phs = [tf.placeholder(tf.float32, m.shape) for m in mats]
        done = [tf.reduce_sum(tf.matmul(p, p)) for p in phs]
    feed = dict(zip(phs, mats))
    with tf.Session(graph=g, config=config) as s:
        s.run(done, feed)
        figs["matmul"] = best_of(lambda: s.run(done, feed), repeat)
    return figs


def _tf_chain(tf: Any, n: int, start: Any) -> Any:
    x = start
    for _ in range(n):
        x = tf.add(x, 1.0)
    return x


def _tf_fanout(tf: Any, n: int, one: Any) -> Any:
    return tf.add_n([tf.add(one, float(i)) for i in range(n)])


def dask_figures(n: int, repeat: int) -> dict[str, float] | None:
    if importlib.util.find_spec("dask") is None:
        return None
    import operator

    import dask

    chain: dict[str, Any] = {"x0": 0.0}
    for i in range(n):
        chain[f"x{i + 1}"] = (operator.add, f"x{i}", 1.0)
    fan: dict[str, Any] = {"one": 1.0}
    for i in range(n):
        fan[f"a{i}"] = (operator.add, "one", float(i))
    fan["sum"] = (lambda *xs: sum(xs), *[f"a{i}" for i in range(n)])
    figs = {
        "chain": best_of(lambda: dask.threaded.get(chain, f"x{n}"), max(3, repeat // 4)),
        "fanout": best_of(lambda: dask.threaded.get(fan, "sum"), max(3, repeat // 4)),
    }
    return figs


def numpy_matmul_figures(mats: list[np.ndarray], repeat: int) -> dict[str, float]:
    from threadpoolctl import threadpool_limits

    figs = {"seq_default_blas": best_of(lambda: [(m @ m).sum() for m in mats], repeat)}
    with threadpool_limits(1):
        figs["seq_one_blas_thread"] = best_of(lambda: [(m @ m).sum() for m in mats], repeat)
    return figs


def report(n: int, a: dict[str, float], np_figs: dict[str, float], a1: float | None,
           tf: dict[str, float] | None, dk: dict[str, float] | None) -> None:
    us = 1e6
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    print(f"antcolony executor benchmark ({n} nodes) under {loop}")
    print(f"  chain of {n} scalar adds     : {a['chain'] / n * us:7.2f} us/node (median {a['chain_median'] / n * us:.2f})"
          "   target <= 5 us")
    print(f"  {n} independent adds + add_n: {a['fanout'] / n * us:7.2f} us/node (median {a['fanout_median'] / n * us:.2f})")
    print(f"  session.run fixed cost       : {a['fixed'] * us:7.1f} us (median {a['fixed_median'] * us:.1f})"
          "   target <= 60 us")
    seq = np_figs["seq_default_blas"]
    print(f"  16 matmuls 512x512           : antcolony {a['matmul'] * 1e3:.1f} ms; numpy one after another "
          f"{seq * 1e3:.1f} ms (default BLAS threads) -> speedup {seq / a['matmul']:.2f}x")
    s1 = np_figs["seq_one_blas_thread"]
    print(f"    SessionConfig(intra_op_threads=1): antcolony {a1 * 1e3:.1f} ms; numpy one after another with 1 BLAS "
          f"thread {s1 * 1e3:.1f} ms -> speedup {s1 / a1:.2f}x   target >= 1.7x")
    print(f"    (intra_op_threads=1 vs numpy with default BLAS threads: {seq / a1:.2f}x)")
    for label, figs in (("TensorFlow (tf.compat.v1)", tf), ("dask threaded scheduler", dk)):
        if figs is None:
            print(f"  {label}: not installed, no comparison")
            continue
        for key in ("chain", "fanout"):
            print(f"  {label} {key}: {figs[key] / n * us:.2f} us/node; antcolony/{label.split()[0]} = "
                  f"{a[key] / figs[key]:.2f}x")
        if "fixed" in figs:
            print(f"  {label} fixed cost: {figs['fixed'] * us:.1f} us; ratio {a['fixed'] / figs['fixed']:.2f}x")
            print(f"  {label} 16 matmuls: {figs['matmul'] * 1e3:.1f} ms; ratio {a['matmul'] / figs['matmul']:.2f}x")


async def matmul_intra_op_one(mats: list[np.ndarray], repeat: int) -> float:
    """Its own ac.run: the BLAS limit belongs to the runtime, which the first session configures."""
    g, done, feed = matmul_graph(mats)
    t, _ = await time_graph(g, done, repeat, ac.SessionConfig(intra_op_threads=1), feed=feed)
    return t


def main(n: int, repeat: int) -> None:
    rng = np.random.default_rng(0)
    mats = [rng.random((512, 512), dtype=np.float32) for _ in range(16)]
    a = ac.run(antcolony_figures(n, repeat, mats))
    a1 = ac.run(matmul_intra_op_one(mats, repeat))
    report(n, a, numpy_matmul_figures(mats, repeat), a1, tf_figures(n, repeat, mats), dask_figures(n, repeat))
    data_parallel(repeat)


def data_parallel(repeat: int) -> None:
    from bench_data_parallel import time_steps

    one = ac.run(time_steps(["/gpu:0"], 1024, 768, 3, repeat))
    two = ac.run(time_steps(["/gpu:0", "/gpu:1"], 1024, 768, 3, repeat))
    print(f"  data-parallel training step (MLP 256-768x3-1, batch 1024, simulated GPUs): 1 GPU {one * 1e3:.1f} ms, "
          f"2 GPUs {two * 1e3:.1f} ms -> scaling {one / two:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    main(args.nodes, args.repeat)
