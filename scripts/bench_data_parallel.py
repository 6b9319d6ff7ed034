"""Data-parallel training step on simulated GPUs: one GPU vs two, measured in one run.

The same MLP is trained with the batch on /gpu:0 alone, then split in halves over /gpu:0 and
/gpu:1 (towers share the variables, gradients are averaged on the CPU and applied there, as TF1's
multi-tower recipe). Prints the step time of each and the scaling (1-GPU time / 2-GPU time).

    python scripts/bench_data_parallel.py [--batch 1024] [--width 768] [--steps 20]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from typing import Any

import numpy as np

import antcolony as ac


def build(towers: list[str], width: int, depth: int, features: int) -> tuple[ac.Graph, dict[str, Any]]:
    g = ac.Graph()
    rng = np.random.default_rng(0)
    with g.as_default():
        x = ac.placeholder(ac.float32, [None, features], name="x")
        y = ac.placeholder(ac.float32, [None, 1], name="y")
        sizes = [features] + [width] * depth + [1]
        ws = [
            ac.Variable((rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32), name=f"w{i}")
            for i, (a, b) in enumerate(itertools.pairwise(sizes))
        ]
        n = len(towers)
        per_tower = []
        for k, device in enumerate(towers):
            with ac.device(device), ac.name_scope(f"tower{k}"):
                xs = ac.placeholder(ac.float32, [None, features], name="x")
                ys = ac.placeholder(ac.float32, [None, 1], name="y")
                h = xs
                for i, w in enumerate(ws):
                    h = ac.matmul(h, w)
                    if i < len(ws) - 1:
                        h = ac.nn.relu(h)
                loss = ac.reduce_mean(ac.square(h - ys))
                per_tower.append((xs, ys, ac.gradients(loss, ws)))
        grads = [ac.add_n([t[2][i] for t in per_tower]) / float(n) for i in range(len(ws))]
        train = ac.train.GradientDescentOptimizer(0.01).apply_gradients(list(zip(grads, ws)))
        init = ac.global_variables_initializer()
    return g, {"towers": [(t[0], t[1]) for t in per_tower], "train": train, "init": init, "x": x, "y": y}


async def time_steps(towers: list[str], batch: int, width: int, depth: int, steps: int) -> float:
    features = 256
    g, t = build(towers, width, depth, features)
    rng = np.random.default_rng(1)
    xb = rng.standard_normal((batch, features)).astype(np.float32)
    yb = rng.standard_normal((batch, 1)).astype(np.float32)
    parts = np.array_split(np.arange(batch), len(towers))
    feed = {}
    for (xs, ys), idx in zip(t["towers"], parts):
        feed[xs] = xb[idx]
        feed[ys] = yb[idx]
    config = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=2, intra_op_threads=1)
    async with ac.Session(g, config=config) as sess:
        await sess.run(t["init"])
        for _ in range(3):
            await sess.run(t["train"], feed)
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            await sess.run(t["train"], feed)
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--width", type=int, default=768)
    p.add_argument("--depth", type=int, default=3)
    p.add_argument("--steps", type=int, default=20)
    a = p.parse_args()
    one = ac.run(time_steps(["/gpu:0"], a.batch, a.width, a.depth, a.steps))
    two = ac.run(time_steps(["/gpu:0", "/gpu:1"], a.batch, a.width, a.depth, a.steps))
    print(
        f"data-parallel step, batch {a.batch}, MLP 256-{'-'.join([str(a.width)] * a.depth)}-1, simulated GPUs, "
        f"BLAS 1 thread per kernel"
    )
    print(f"  1 GPU : {one * 1e3:8.1f} ms/step (median of {a.steps})")
    print(
        f"  2 GPUs: {two * 1e3:8.1f} ms/step -> scaling {one / two:.2f}x (ideal 2.0x; this machine has 2 cores)"
    )


if __name__ == "__main__":
    main()
