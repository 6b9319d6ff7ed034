"""Distributed TF1 figures (issue 29), part 1: the cost of one cross-task Send/Recv.

Two task actors (``/job:worker/task:0`` and ``/job:ps/task:0``, each a Ray actor process with
both tensor wires, cluster/wire_host.py) on a local Ray (loopback only) play ping-pong with a
float32 tensor of each size: the worker sends, the ps receives and sends it back, the worker
receives. One Send/Recv is half that round trip. The same ping-pong with a plain Ray object
round trip (``ray.put`` in one actor, ``ray.get`` of it in the other, the ref passed by an actor
call) is the baseline, measured in the same run on the same actors. Prints the median and best
one-way time per transport and size, its throughput, and the ratio to the baseline. No target
is set for these figures yet: the ratios are printed without a verdict.

    pip install -e '.[ray]' && python scripts/bench_distributed.py [--sizes 1024,1048576,67108864] [--reps 20]

The machine's load moves these figures; compare ratios from one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any

import numpy as np

os.environ["RAY_USAGE_STATS_ENABLED"] = "0"

WORKER, PS = "/job:worker/task:0", "/job:ps/task:0"
DEFAULT_SIZES = (1 << 10, 1 << 20, 64 << 20)


def _key(src: str, dst: str, name: str) -> str:
    from antcolony.actors.tensor_wire import rendezvous_key

    return rendezvous_key(f"{src}/device:CPU:0", 1, f"{dst}/device:CPU:0", name)


def bench_task_class() -> type:
    from antcolony.cluster.wire_host import WireHost

    class BenchTask(WireHost):
        """A task actor with the ping-pong loops of this benchmark."""

        async def pingpong(self, transport: str, peer: str, nbytes: int, reps: int) -> list[float]:
            out_key, back_key = _key(self.task, peer, "ping:0"), _key(peer, self.task, "pong:0")
            value = np.random.default_rng(0).standard_normal(nbytes // 4).astype(np.float32)
            times = []
            for step in range(reps):
                t0 = time.perf_counter()
                await self.send(transport, peer, out_key, step, value)
                back = await self.recv(transport, back_key, step, 600)
                times.append(time.perf_counter() - t0)
            if not np.array_equal(back, value):
                raise AssertionError(f"{transport}: the tensor came back changed")
            return times

        async def echo(self, transport: str, peer: str, reps: int) -> None:
            in_key, out_key = _key(peer, self.task, "ping:0"), _key(self.task, peer, "pong:0")
            for step in range(reps):
                value = await self.recv(transport, in_key, step, 600)
                await self.send(transport, peer, out_key, step, value)

        async def object_pingpong(self, peer_handle: Any, nbytes: int, reps: int) -> list[float]:
            import ray

            value = np.random.default_rng(0).standard_normal(nbytes // 4).astype(np.float32)
            times = []
            for _ in range(reps):
                t0 = time.perf_counter()
                (back_ref,) = await peer_handle.object_echo.remote([ray.put(value)])
                back = await back_ref
                times.append(time.perf_counter() - t0)
            if not np.array_equal(back, value):
                raise AssertionError("object round trip: the array came back changed")
            return times

        async def object_echo(self, refs: list[Any]) -> list[Any]:
            import ray

            return [ray.put(await refs[0])]

    return BenchTask


def _fmt_size(n: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n} B"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES), help="tensor sizes in bytes")
    p.add_argument(
        "--reps", type=int, default=20, help="round trips per transport and size (the first is dropped)"
    )
    args = p.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    reps = max(2, args.reps)

    from antcolony.cluster.ray_support import connect

    ray = connect(None, sim_gpus=0, num_cpus=2, log_to_driver=False)
    try:
        actor = ray.remote(bench_task_class()).options(num_cpus=0, max_concurrency=16)
        worker, ps = actor.remote(WORKER), actor.remote(PS)
        w_addr, p_addr = ray.get([worker.start.remote(), ps.start.remote()])
        ray.get([worker.connect.remote(PS, p_addr, ps), ps.connect.remote(WORKER, w_addr, worker)])
        print(
            f"bench_distributed part 1: one Send/Recv between two task actors, local Ray, {reps - 1} round trips each"
        )
        print(
            f"{'size':>9} {'transport':>14} {'median ms':>10} {'best ms':>9} {'MB/s':>9} {'vs ray object':>14}"
        )
        for nbytes in sizes:
            rows: dict[str, list[float]] = {}
            for transport in ("baseline", "tcp", "ray"):
                if transport == "baseline":
                    times = ray.get(worker.object_pingpong.remote(ps, nbytes, reps))
                else:
                    echo = ps.echo.remote(transport, WORKER, reps)
                    times = ray.get(worker.pingpong.remote(transport, PS, nbytes, reps))
                    ray.get(echo)
                rows[transport] = [t / 2 for t in times[1:]]  # one way; the first warms connections up
            base = statistics.median(rows["baseline"])
            for transport, label in (
                ("baseline", "ray object"),
                ("tcp", "wire tcp"),
                ("ray", "wire objstore"),
            ):
                one_way = rows[transport]
                med = statistics.median(one_way)
                print(
                    f"{_fmt_size(nbytes):>9} {label:>14} {med * 1e3:>10.3f} {min(one_way) * 1e3:>9.3f} "
                    f"{nbytes / med / 1e6:>9.1f} {med / base:>13.2f}x"
                )
        ray.get([worker.close.remote(), ps.close.remote()])
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
