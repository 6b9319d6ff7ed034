"""The executor's hot path as a workload for instruction counting (load-independent figures).

Wall-clock figures on a shared 2-core machine swing by 2x with other work; instruction counts do
not. Run this under callgrind at two sizes and divide the difference by the work added:

    valgrind --tool=callgrind --callgrind-out-file=/dev/null python scripts/bench_hot_path.py chain 0
    valgrind --tool=callgrind --callgrind-out-file=/dev/null python scripts/bench_hot_path.py chain 10
    # instructions per node = (Collected at 10 - Collected at 0) / (10 runs x 2000 nodes)

    ... bench_hot_path.py fixed 0 / fixed 2000
    # instructions per session.run of a one-node graph = difference / 2000

(PYTHONHASHSEED=0 and the interpreter binary itself, not a pyenv shim, keep counts repeatable.
Add ``--no-gc`` to leave the cyclic collector off: when its collections fall moves the counts by
up to ~15 % between otherwise equal trees.) Without valgrind it prints wall-clock figures.
"""

from __future__ import annotations

import gc
import sys
import time
from typing import Any

import antcolony as ac

NODES = 2000


def chain(n: int) -> tuple[ac.Graph, Any, Any]:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [], name="x")
        h = x
        for _ in range(n):
            h = h + 1.0
    return g, h, x


def one_node() -> tuple[ac.Graph, Any, Any]:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [], name="x")
        y = ac.identity(x)
    return g, y, x


async def main(argv: list[str]) -> int:
    which, runs = argv[0], int(argv[1])
    config = ac.SessionConfig(intra_op_threads=1)
    g, out, x = chain(NODES) if which == "chain" else one_node()
    async with ac.Session(g, config=config) as sess:
        await sess.run(out, {x: 0.0})  # builds and warms the executor
        start = time.perf_counter()
        for _ in range(runs):
            await sess.run(out, {x: 0.0})
        elapsed = time.perf_counter() - start
    if runs:
        per = elapsed / runs / (NODES if which == "chain" else 1) * 1e6
        print(f"{which}: {per:.2f} us per {'node' if which == 'chain' else 'session.run'} ({runs} runs)")
    return 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--no-gc"]
    if len(args) != 2 or args[0] not in ("chain", "fixed"):
        sys.exit("usage: bench_hot_path.py chain|fixed RUNS [--no-gc]")
    if "--no-gc" in sys.argv:
        gc.disable()
    sys.exit(ac.run(main(args)))
