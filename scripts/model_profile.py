"""Per-kernel profiles of a model's training step on both sides, for scripts/bench_models.py.

A profiled child wraps its framework's ``Session.run`` so that each timed step runs with
``RunOptions(trace_level=FULL_TRACE)`` and a ``RunMetadata``, then sums each node's kernel time by
op type: antcolony's ``RunMetadata.step_stats`` (``NodeExecStats``: start and end of the kernel),
TF's ``step_stats.dev_stats[*].node_stats`` (``op_start_rel_micros`` to ``op_end_rel_micros``,
the kernel alone, as TF's timeline draws it); a fused loop's own record is left out, its
inner kernels are counted. Tracing costs time on both sides, so the step times
of a profiled child are not the benchmark's: the table is for where the time goes.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

Profile = dict[str, list[float]]  # op type -> [kernel microseconds per step, nodes per step]


class RunRecorder:
    """Wraps ``session_class.run`` to trace every call while ``on`` and sum kernel time by op type."""

    def __init__(self, tf: Any, side: str) -> None:
        self.tf = tf
        self.side = side
        self.on = False
        self.steps = 0
        self.totals: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])
        original = tf.Session.run
        recorder = self

        def run(
            session: Any, fetches: Any, feed_dict: Any = None, options: Any = None, run_metadata: Any = None
        ):
            if not recorder.on or options is not None:
                return original(session, fetches, feed_dict, options, run_metadata)
            metadata = tf.RunMetadata()
            result = original(session, fetches, feed_dict, tf.RunOptions(trace_level=3), metadata)
            recorder.add(session, metadata)
            return result

        tf.Session.run = run

    def add(self, session: Any, metadata: Any) -> None:
        self.steps += 1
        nodes = _antcolony_nodes(metadata) if self.side == "antcolony" else _tf_nodes(session, metadata)
        for op_type, micros in nodes:
            total = self.totals[op_type]
            total[0] += micros
            total[1] += 1

    def profile(self) -> Profile:
        n = max(self.steps, 1)
        return {op: [t / n, c / n] for op, (t, c) in self.totals.items()}


#: antcolony's record of a fused while loop (actors/loop_fusion.py) spans the loop's inner
#: kernels, which have records of their own: counting it too would count their time twice
_CONTAINERS = frozenset({"FusedLoop"})


def _antcolony_nodes(metadata: Any) -> list[tuple[str, float]]:
    return [
        (s.op_type, max(0.0, s.end_us - s.start_us))
        for s in metadata.step_stats
        if s.op_type not in _CONTAINERS
    ]


def _tf_nodes(session: Any, metadata: Any) -> list[tuple[str, float]]:
    graph = session.graph
    nodes = []
    for dev in metadata.step_stats.dev_stats:
        for ns in dev.node_stats:
            name = ns.node_name.split(":")[0]
            try:
                op_type = graph.get_operation_by_name(name).type
            except (KeyError, ValueError):
                op_type = name  # TF's own bookkeeping entries (_SOURCE, RecvTensor, ...)
            nodes.append((op_type, float(ns.op_end_rel_micros - ns.op_start_rel_micros)))
    return nodes


def profiled_steps(
    tf: Any, side: str, build: Callable[[], Callable[[], None]], warmup: int, steps: int
) -> Profile:
    """Build the model (``build``), run ``warmup`` untraced steps, then ``steps`` traced ones."""
    recorder = RunRecorder(tf, side)
    step = build()
    for _ in range(warmup):
        step()
    recorder.on = True
    for _ in range(steps):
        step()
    return recorder.profile()


def format_profile(name: str, ours: Profile, theirs: Profile, top: int = 15) -> list[str]:
    """Lines of a side-by-side table: kernel microseconds and nodes per step by op type, the
    op types with the most time on either side first, then the totals."""
    ops = sorted(set(ours) | set(theirs), key=lambda op: -max(ours.get(op, [0])[0], theirs.get(op, [0])[0]))
    lines = [
        f"profile of {name}: kernel us per step by op type (nodes per step), traced steps",
        f"  {'op type':<28} {'antcolony us':>18} {'TF1 us':>18}",
    ]

    def cell(p: Profile, op: str) -> str:
        if op not in p:
            return "-"
        return f"{p[op][0]:9.1f} ({p[op][1]:4.1f})"

    for op in ops[:top]:
        lines.append(f"  {op:<28} {cell(ours, op):>18} {cell(theirs, op):>18}")
    rest = ops[top:]
    if rest:
        r_ours = sum(ours.get(op, [0.0])[0] for op in rest)
        r_theirs = sum(theirs.get(op, [0.0])[0] for op in rest)
        lines.append(f"  {f'{len(rest)} other op types':<28} {r_ours:9.1f} {'':>8} {r_theirs:9.1f}")

    def total(p: Profile) -> str:
        return f"{sum(v[0] for v in p.values()):9.1f} ({sum(v[1] for v in p.values()):4.0f})"

    lines.append(f"  {'all kernels':<28} {total(ours):>18} {total(theirs):>18}")
    return lines
