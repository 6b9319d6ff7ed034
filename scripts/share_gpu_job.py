"""One training job of the GPU-sharing demo (``share_gpu.py``), run as its own OS process.

As an AntMan job, it learns its resource config and status file from the environment
(``GPU_CONFIG_FILE``, ``GPU_STATUS_FILE``) and knows nothing of the scheduler: limits and compute
share reach it only through the config file, its figures leave only through the status file.
Its stdout is a progress log, one JSON line ``{"t": unix time, "steps": n, "busy_s": s}`` every
``--every`` seconds, which the demo plots as throughput; ``busy_s`` is its GPU busy time so far as
its own traces show it (every ``--trace-every``-th step runs traced: the union of its GPU kernels'
intervals, counted for the steps since the last traced one). ``--host-ms`` adds host-side work to
each step (an input pipeline: the GPU idles meanwhile). ``--cpus`` keeps it on those host cores
(cluster_bench.py gives each simulated GPU's jobs their own: a simulated GPU computes on the host).
It stops when the ``--stop`` file appears.

    GPU_CONFIG_FILE=a.json GPU_STATUS_FILE=a_status.json antcolony run scripts/share_gpu_job.py --stop a.stop
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from typing import Any

import numpy as np

import antcolony as ac
from antcolony.cluster.cpu_priority import set_cpu_affinity

MiB = 1 << 20


def build(width: int, batch: int, seed: int) -> tuple[ac.Graph, dict[str, Any]]:
    """A 3-layer MLP regression step on GPU 0: ~12 MiB of weights at width 1024, plus activations."""
    g = ac.Graph()
    rng = np.random.default_rng(seed)
    with g.as_default(), ac.device("/gpu:0"):
        x = ac.placeholder(ac.float32, [batch, width], name="x")
        y = ac.placeholder(ac.float32, [batch, 1], name="y")
        h = x
        for i in range(3):
            w = ac.Variable(
                (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32), name=f"w{i}"
            )
            h = ac.nn.relu(ac.matmul(h, w))
        head = ac.Variable(np.zeros((width, 1), np.float32), name="head")
        loss = ac.reduce_mean(ac.square(ac.matmul(h, head) - y))
        train = ac.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = ac.global_variables_initializer()
    feed = {x: rng.standard_normal((batch, width)).astype(np.float32), y: np.ones((batch, 1), np.float32)}
    return g, {"train": train, "init": init, "feed": feed}


def busy_seconds(md: ac.RunMetadata) -> float:
    """The union of a traced step's GPU kernel intervals (kernels side by side count once)."""
    total, end = 0.0, float("-inf")
    for s, e in sorted((r.start_us / 1e6, r.end_us / 1e6) for r in md.step_stats if "/compute" in r.worker):
        if e > end:
            total += e - max(s, end)
            end = e
    return total


async def report(
    progress_state: dict[str, Any], every: float, stop: str, progress: str | None = None
) -> None:
    while not os.path.exists(stop):
        line = json.dumps({"t": time.time(), **progress_state})
        print(line, flush=True)
        if progress:
            # whole or absent for a reader: written aside, then renamed over the last one
            tmp = f"{progress}.tmp"
            with open(tmp, "w") as f:
                f.write(line)
            os.replace(tmp, progress)
        await asyncio.sleep(every)


def job_config(sim_gpu_memory_mib: int) -> ac.SessionConfig:
    """The job's session settings; its config and status paths come from GPU_CONFIG_FILE /
    GPU_STATUS_FILE, as AntMan's jobs'."""
    return ac.SessionConfig(
        # a cluster job runs on the backend its coordinator names (a real GPU where Ray gave one)
        gpu_backend=os.environ.get("ANTCOLONY_GPU_BACKEND", "sim"),
        sim_gpu_count=1,
        sim_gpu_memory=sim_gpu_memory_mib * MiB,
        intra_op_threads=1,
        config_poll_interval=0.1,
        statistics_interval=0.25,
    )


async def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sim-gpu-memory-mib", type=int, default=256)
    p.add_argument("--every", type=float, default=0.25, help="seconds between progress lines")
    p.add_argument("--stop", required=True, help="the job ends when this file exists")
    p.add_argument("--progress", default=None, help="also keep the latest progress line in this file")
    p.add_argument("--host-ms", type=float, default=0.0, help="host-side work per step (the GPU idles)")
    p.add_argument("--trace-every", type=int, default=4, help="every n-th step runs traced (its busy time)")
    p.add_argument("--cpus", default=None, help="host cores to run on, e.g. 0 or 0,1 (default: any)")
    args = p.parse_args()
    if args.cpus and (refused := set_cpu_affinity({int(c) for c in args.cpus.split(",")})):
        raise SystemExit(f"--cpus {args.cpus}: {'; '.join(refused)}")
    g, t = build(args.width, args.batch, args.seed)
    config = job_config(args.sim_gpu_memory_mib)
    state: dict[str, Any] = {"steps": 0, "busy_s": 0.0}
    trace = ac.RunOptions(trace_level=ac.RunOptions.FULL_TRACE)
    async with ac.Session(g, config=config) as sess:
        await sess.run(t["init"])
        # one untimed step first: on a real GPU the first step compiles CuPy's kernels (seconds),
        # and a traced first step would count that as busy time trace_every times over (seen on
        # an H200: the guaranteed job "busy 1.39" of the time alone)
        await sess.run(t["train"], t["feed"])
        reporter = asyncio.ensure_future(report(state, args.every, args.stop, args.progress))
        while not os.path.exists(args.stop):
            if args.host_ms:
                await asyncio.sleep(args.host_ms / 1000)
            if state["steps"] % args.trace_every == 0:
                md = ac.RunMetadata()
                await sess.run(t["train"], t["feed"], options=trace, run_metadata=md)
                state["busy_s"] += busy_seconds(md) * args.trace_every
            else:
                await sess.run(t["train"], t["feed"])
            state["steps"] += 1
        await reporter
    return 0


if __name__ == "__main__":
    raise SystemExit(ac.run(main()))
