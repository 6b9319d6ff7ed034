"""A chain of small GPU ops per step (issue 12's GPU launch pipeline): us per op.

Usage: python scripts/bench_gpu_chain.py [--ops 500] [--steps 15] [--pipeline on|off|both]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

import numpy as np

import antcolony as ac


async def _bench(ops: int, steps: int, pipeline: bool) -> tuple[float, float]:
    g = ac.Graph()
    with g.as_default():
        x0 = ac.placeholder(ac.float32, [64], name="x")
        with ac.device("/gpu:0"):
            x = x0
            for _ in range(ops):
                x = ac.add(x, 1.0)
    config = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1, gpu_pipeline=pipeline)
    sess = ac.Session(g, config=config)
    feed = {x0: np.zeros(64, np.float32)}
    for _ in range(3):
        out = await sess.run(x, feed)
    assert float(out[0]) == float(ops), out[0]
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        await sess.run(x, feed)
        times.append(time.perf_counter() - t0)
    await sess.close()
    return min(times) / ops * 1e6, statistics.median(times) / ops * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", type=int, default=500)
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--pipeline", choices=("on", "off", "both"), default="both")
    args = parser.parse_args()
    modes = {"on": [True], "off": [False], "both": [False, True]}[args.pipeline]
    print(f"load average {os.getloadavg()}")
    for mode in modes:
        best, median = asyncio.run(_bench(args.ops, args.steps, mode))
        print(
            f"gpu_pipeline={'on' if mode else 'off'}: {args.ops} GPU ops/step, "
            f"best {best:.1f} us/op ({1e6 / best / args.ops:.1f} steps/s), median {median:.1f} us/op"
        )


if __name__ == "__main__":
    main()
