"""The TF1 side of ``scripts/bench_executor.py``: tensorflow.compat.v1 configured as TF1 users ran
it, a session timing the same graph as antcolony, and the check that both sides computed the same.
"""

from __future__ import annotations

import importlib.util
import os
import time
from typing import Any

import numpy as np
from bench_executor_graphs import Bench


def load_tf() -> Any | None:
    """``tensorflow.compat.v1`` with TF1 behaviour, or None when tensorflow is not installed."""
    if importlib.util.find_spec("tensorflow") is None:
        return None
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow.compat.v1 as tf

    tf.get_logger().setLevel("ERROR")
    # TF1 as users ran it: graph mode, ref variables, while_loop built from Enter/Exit/NextIteration
    # frames (what antcolony builds too), not TF2's functional While.
    tf.disable_v2_behavior()
    return tf


def tf_config(tf: Any, inter: int, intra: int) -> Any:
    """A ConfigProto that measures the executor: ``inter`` / ``intra`` op threads, and no graph
    rewriting (Grappler would fold constants and prune; the classic optimizer at L1 folds constants
    and merges common subexpressions; antcolony does neither)."""
    config = tf.ConfigProto(inter_op_parallelism_threads=inter, intra_op_parallelism_threads=intra)
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    config.graph_options.optimizer_options.opt_level = tf.OptimizerOptions.L0
    config.graph_options.optimizer_options.do_constant_folding = False
    return config


class TfSide:
    """A TF1 session on a bench built with ``tensorflow.compat.v1``, initialised and warmed up
    (``first`` holds the first run's outputs). Its runs block, so callers on an event loop run
    these methods in a worker thread."""

    def __init__(self, tf: Any, bench: Bench, config: Any, warmup: int) -> None:
        self.bench = bench
        self.sess = tf.Session(graph=bench.graph, config=config)
        if bench.init is not None:
            self.sess.run(bench.init)
        self.first = self.sess.run(bench.fetches, bench.feed)
        for _ in range(warmup - 1):
            self.sess.run(bench.fetches, bench.feed)

    def timed(self, repeat: int) -> list[float]:
        """Seconds of each of ``repeat`` runs."""
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            self.sess.run(self.bench.fetches, self.bench.feed)
            times.append(time.perf_counter() - t)
        return times

    def close(self) -> None:
        self.sess.close()


def same_outputs(a: Any, b: Any) -> bool:
    """The fetched values agree on both sides (train ops fetch None on both)."""
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(map(same_outputs, a, b))
    if a is None or b is None:
        return a is None and b is None
    return bool(np.allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-6))
