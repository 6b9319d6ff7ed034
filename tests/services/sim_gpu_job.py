"""A job for the cross-process tests, run as its own OS process (``antcolony run``).

It places a variable of ``--mib`` MiB on simulated GPU 0, writes its memory figures to the
``--ready`` file (or the error, if the variable cannot be placed), then keeps stepping and
rewriting its status file until the ``--stop`` file appears.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path

import antcolony as ac

MiB = 1 << 20


def _write_json(path: str, body: dict) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    Path(tmp).write_text(json.dumps(body))
    os.replace(tmp, path)


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, required=True)
    parser.add_argument("--sim-memory-mib", type=int, required=True)
    parser.add_argument("--vmem", type=int, default=1)
    parser.add_argument("--status", required=True)
    parser.add_argument("--ready", required=True)
    parser.add_argument("--stop", required=True)
    args = parser.parse_args()
    g = ac.Graph()
    with g.as_default():
        with ac.device("/cpu:0"):
            zeros = ac.zeros([args.mib * MiB // 4])  # no GPU temporary: the variable takes the copy
        with ac.device("/gpu:0"):
            hold = ac.Variable(zeros, name="hold")
            out = ac.reduce_sum(hold)
    config = ac.SessionConfig(
        gpu_backend="sim",
        sim_gpu_count=1,
        sim_gpu_memory=args.sim_memory_mib * MiB,
        vmem=bool(args.vmem),
        statistics_file=args.status,
        statistics_interval=0.05,
    )
    async with ac.Session(g, config=config) as sess:
        try:
            await sess.run(hold.initializer)
        except ac.errors.ResourceExhaustedError as exc:
            await asyncio.to_thread(
                _write_json, args.ready, {"error": type(exc).__name__, "message": str(exc)}
            )
            return 3
        s = sess.memory_stats("/gpu:0")
        await asyncio.to_thread(
            _write_json,
            args.ready,
            {
                "bytes_in_use": s.bytes_in_use,
                "pool_bytes": s.pool_bytes,
                "host_bytes_in_use": s.host_bytes_in_use,
                "num_host_fallbacks": s.num_host_fallbacks,
            },
        )
        while not os.path.exists(args.stop):
            await sess.run(out)
            await sess.flush_statistics()
            await asyncio.sleep(0.05)
    return 0


if __name__ == "__main__":
    raise SystemExit(ac.run(main()))
