"""A job for the Ray tests: ``share_gpu_job.py``'s training step, logging when each step ends.

As any AntMan job it follows ``GPU_CONFIG_FILE`` / ``GPU_STATUS_FILE`` from its environment. It
appends the end time of every step (``time.time()``, one per line) to ``--progress``, the
training log a user would read its throughput from, so a test measures the job's step rate over
any interval. It stops when the ``--stop`` file appears.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import time
from pathlib import Path

import antcolony as ac

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from share_gpu_job import build, job_config


def _append(path: str, stamps: list[float]) -> None:
    with open(path, "a") as f:
        f.write("".join(f"{t:.6f}\n" for t in stamps))


async def log_steps(path: str, ends: list[float], stop: asyncio.Event) -> None:
    """Every 0.1 s, append the step end times recorded since (in a thread: never block the loop)."""
    while True:
        done = stop.is_set()
        stamps, ends[:] = ends[:], []
        if stamps:
            await asyncio.to_thread(_append, path, stamps)
        if done:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.1)


async def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--sim-gpu-memory-mib", type=int, default=128)
    p.add_argument("--progress", required=True, help="file to append each step's end time to")
    p.add_argument("--stop", required=True, help="the job ends when this file exists")
    args = p.parse_args()
    g, t = build(args.width, args.batch, 0)
    config = job_config(args.sim_gpu_memory_mib)
    ends: list[float] = []
    stopped = asyncio.Event()
    async with ac.Session(g, config=config) as sess:
        await sess.run(t["init"])
        logger = asyncio.ensure_future(log_steps(args.progress, ends, stopped))
        while not os.path.exists(args.stop):
            await sess.run(t["train"], t["feed"])
            ends.append(time.time())
        stopped.set()
        await logger
    return 0


if __name__ == "__main__":
    raise SystemExit(ac.run(main()))
