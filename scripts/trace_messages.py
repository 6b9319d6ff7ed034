"""Print the actor messages of one ``session.run`` of a CPU -> GPU -> CPU graph, in send order.

docs/architecture.md shows this trace; run it to see the protocol on the current code:

    python scripts/trace_messages.py
    python scripts/trace_messages.py --calls   # Python calls and files of one run (cProfile)

The graph: ``x`` fed on the host, ``y = x * 2`` on the host, ``z = matmul(y, w)`` on the simulated
GPU (``w`` a variable there), ``out = reduce_sum(z) + 1`` back on the host. The first run builds
and warms the executors; the second is traced. Each line: ``-> recipient: message`` for a queued
tell, ``=> recipient: message`` for a direct one (``ActorRef.direct``: handled at once when the
recipient is idle, else queued).
"""

from __future__ import annotations

import cProfile
import os
import pstats
import sys
from typing import Any

import numpy as np

import antcolony as ac
from antcolony.actors.actor import _Cell
from antcolony.actors.ref import ActorRef


def graph() -> tuple[ac.Graph, Any, Any, Any]:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [2, 2], name="x")
        y = ac.multiply(x, 2.0, name="y")
        with ac.device("/gpu:0"):
            w = ac.Variable(np.eye(2, dtype=np.float32), name="w")
            z = ac.matmul(y, w, name="z")
        out = ac.add(ac.reduce_sum(z, name="sum"), 1.0, name="out")
        init = ac.global_variables_initializer()
    return g, x, out, init


def describe(message: Any) -> str:
    """A message as one short line: Input tuples by slot and tag, others by class name."""
    if message.__class__ is tuple and len(message) == 3:
        tag, slot, value = message
        what = "control token" if slot < 0 else f"input slot {slot}"
        kind = type(value).__name__ if value is not None else "None"
        return f"Input({what}, {kind}) under {tag!r}"
    return type(message).__name__


async def main() -> int:
    g, x, out, init = graph()
    config = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1, intra_op_threads=1)
    lines: list[str] = []
    recording = False
    original = ActorRef.tell
    original_offer = _Cell.offer

    def tell(self: ActorRef, message: Any) -> None:
        if recording:
            lines.append(f"-> {self.name}: {describe(message)}")
        original(self, message)

    def offer(self: _Cell, message: Any) -> None:
        if recording:
            lines.append(f"=> {self.name}: {describe(message)}")
        original_offer(self, message)

    # Patched before the executors are built: nodes keep their successors' bound ``tell`` and
    # ``direct`` (the cell's ``offer``).
    ActorRef.tell = tell  # type: ignore[method-assign]
    _Cell.offer = offer  # type: ignore[method-assign]
    try:
        async with ac.Session(g, config=config) as sess:
            await sess.run(init)
            feed = {x: np.ones((2, 2), np.float32)}
            await sess.run(out, feed)
            recording = True
            value = await sess.run(out, feed)
            recording = False
    finally:
        ActorRef.tell = original  # type: ignore[method-assign]
        _Cell.offer = original_offer  # type: ignore[method-assign]
    print(f"session.run(out) = {value} ({len(lines)} messages)")
    for n, line in enumerate(lines, 1):
        print(f"{n:3d} {line}")
    return 0


async def count_calls(runs: int = 200) -> int:
    """Calls (cProfile's, builtins included) and source files of one ``sess.run`` of
    ``reduce_sum(x * 2) + 1``, averaged over ``runs`` runs after a warm-up; a file counts when
    every run enters it."""
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [4], name="x")
        out = ac.reduce_sum(x * 2.0) + 1.0
    feed = {x: np.ones(4, np.float32)}
    profile = cProfile.Profile()
    async with ac.Session(g) as sess:
        for _ in range(20):
            await sess.run(out, feed)
        profile.enable()
        for _ in range(runs):
            await sess.run(out, feed)
        profile.disable()
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    calls = sum(v[1] for v in stats.values()) / runs
    python = sum(v[1] for k, v in stats.items() if k[0] != "~") / runs
    files = sorted({k[0] for k, v in stats.items() if v[1] >= runs and k[0] != "~"})
    print(
        f"session.run(reduce_sum(x * 2) + 1): {calls:.1f} calls ({python:.1f} of Python functions), {len(files)} files"
    )
    for name in files:
        print(f"  {os.path.relpath(name)}")
    return 0


if __name__ == "__main__":
    sys.exit(ac.run(count_calls() if "--calls" in sys.argv[1:] else main()))
