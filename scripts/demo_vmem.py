"""AntMan's universal memory on a simulated GPU: training past the GPU memory limit.

A wide MLP is trained three times on /gpu:0 with the same seed:
  1. with an unlimited GPU (the reference loss curve);
  2. with a limit of about 2/3 of what a step needs (activations ~1.5x the limit): the overflow
     goes to host memory and the run finishes with the same loss curve;
  3. as 2, but the limit is raised half-way (as a scheduler would), after which steps stay on
     the device (no new host fallbacks).

    python scripts/demo_vmem.py [--steps 12] [--batch 2048] [--width 1024]
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

import antcolony as ac

MiB = 1 << 20


def build(batch: int, width: int, depth: int, seed: int) -> tuple[ac.Graph, dict[str, Any]]:
    g = ac.Graph()
    rng = np.random.default_rng(seed)
    with g.as_default(), ac.device("/gpu:0"):
        x = ac.placeholder(ac.float32, [batch, width], name="x")
        y = ac.placeholder(ac.float32, [batch, 1], name="y")
        h = x
        for i in range(depth):
            w = ac.Variable(
                (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32), name=f"w{i}"
            )
            h = ac.nn.relu(ac.matmul(h, w))
        out = ac.matmul(h, ac.Variable(np.full((width, 1), 0.01, np.float32), name="head"))
        loss = ac.reduce_mean(ac.square(out - y))
        train = ac.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = ac.global_variables_initializer()
    return g, {"x": x, "y": y, "loss": loss, "train": train, "init": init}


async def run(args: argparse.Namespace, limit: int | None, raise_at: int | None, label: str) -> list[float]:
    g, t = build(args.batch, args.width, args.depth, args.seed)
    rng = np.random.default_rng(args.seed + 1)
    feed = {
        t["x"]: rng.standard_normal((args.batch, args.width)).astype(np.float32),
        t["y"]: rng.standard_normal((args.batch, 1)).astype(np.float32),
    }
    config = ac.SessionConfig(
        gpu_backend="sim",
        sim_gpu_count=1,
        sim_gpu_memory=args.gpu_memory * MiB,
        allow_growth=True,
        vmem=True,
        intra_op_threads=1,
    )
    losses = []
    async with ac.Session(g, config=config) as sess:
        await sess.run(t["init"])
        if limit is not None:
            sess.adjust_memory_limit("/gpu:0", limit)
        print(f"{label}: limit {sess.memory_stats('/gpu:0').bytes_limit / MiB:.0f} MiB")
        for step in range(1, args.steps + 1):
            if raise_at is not None and step == raise_at:
                reached = sess.adjust_memory_limit("/gpu:0", args.gpu_memory * MiB)
                print(f"  -- limit raised to {reached / MiB:.0f} MiB before step {step}")
            before = sess.memory_stats("/gpu:0").num_host_fallbacks
            _, loss = await sess.run([t["train"], t["loss"]], feed)
            stats = sess.memory_stats("/gpu:0")
            losses.append(float(loss))
            print(
                f"  step {step:2d}  loss {loss:9.5f}  device peak {stats.window_peak_bytes_in_use / MiB:7.1f} MiB  "
                f"host peak {stats.host_window_peak_bytes_in_use / MiB:7.1f} MiB  "
                f"new host fallbacks {stats.num_host_fallbacks - before:4d}"
            )
            sess.reset_memory_peak("/gpu:0")
        stats = sess.memory_stats("/gpu:0")
        print(
            f"  total host fallbacks {stats.num_host_fallbacks} (last reason: {stats.swap_reason or '-'}), "
            f"host peak {stats.host_peak_bytes_in_use / MiB:.1f} MiB, device peak {stats.peak_bytes_in_use / MiB:.1f} MiB"
        )
    return losses


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--batch", type=int, default=2048)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--depth", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--gpu-memory", type=int, default=1024, help="simulated GPU memory in MiB")
    args = p.parse_args()
    reference = ac.run(run(args, None, None, "unlimited GPU"))
    need = _peak_need(args)
    limit = int(need / 1.5)
    print(
        f"a step needs about {need / MiB:.0f} MiB on the GPU; limiting the job to {limit / MiB:.0f} MiB (1/1.5)"
    )
    squeezed = ac.run(run(args, limit, None, "limited GPU, vmem on"))
    raised = ac.run(run(args, limit, args.steps // 2 + 1, "limited, raised mid-run"))
    same = np.allclose(squeezed, reference, rtol=1e-5) and np.allclose(raised, reference, rtol=1e-5)
    print(
        f"loss curves identical to the unlimited run: {same} "
        f"(max relative difference {max(abs(a - b) / abs(b) for a, b in zip(squeezed + raised, reference * 2)):.2e})"
    )


def _peak_need(args: argparse.Namespace) -> int:
    async def measure() -> int:
        g, t = build(args.batch, args.width, args.depth, args.seed)
        config = ac.SessionConfig(
            gpu_backend="sim",
            sim_gpu_count=1,
            sim_gpu_memory=args.gpu_memory * MiB,
            allow_growth=True,
            intra_op_threads=1,
        )
        rng = np.random.default_rng(args.seed + 1)
        feed = {
            t["x"]: rng.standard_normal((args.batch, args.width)).astype(np.float32),
            t["y"]: rng.standard_normal((args.batch, 1)).astype(np.float32),
        }
        async with ac.Session(g, config=config) as sess:
            await sess.run(t["init"])
            await sess.run(t["train"], feed)
            return sess.memory_stats("/gpu:0").peak_bytes_in_use

    return ac.run(measure())


if __name__ == "__main__":
    main()
