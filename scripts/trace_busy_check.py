"""How share_gpu_job.py's busy figure compares with step time, traced and not (a diagnostic for
the GPU proof): N untraced steps, N traced steps, the busy union of each traced step.

    python scripts/trace_busy_check.py --backend cuda --width 4096 --steps 20
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import antcolony as ac

sys.path.insert(0, str(Path(__file__).resolve().parent))
from share_gpu_job import build, busy_seconds


async def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=("sim", "cuda"), default="sim")
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    g, t = build(args.width, args.width, 0)
    config = ac.SessionConfig(gpu_backend=args.backend, sim_gpu_count=1, intra_op_threads=1)
    trace = ac.RunOptions(trace_level=ac.RunOptions.FULL_TRACE)
    async with ac.Session(g, config=config) as sess:
        await sess.run(t["init"])
        first = time.perf_counter()
        await sess.run(t["train"], t["feed"])
        print(f"first step {1e3 * (time.perf_counter() - first):.1f} ms")
        plain, traced, busy = [], [], []
        for _ in range(args.steps):
            t0 = time.perf_counter()
            await sess.run(t["train"], t["feed"])
            plain.append(time.perf_counter() - t0)
        for _ in range(args.steps):
            md = ac.RunMetadata()
            t0 = time.perf_counter()
            await sess.run(t["train"], t["feed"], options=trace, run_metadata=md)
            traced.append(time.perf_counter() - t0)
            busy.append(busy_seconds(md))
    med = statistics.median
    print(
        f"{args.backend} width {args.width}: untraced step {1e3 * med(plain):.1f} ms, traced step "
        f"{1e3 * med(traced):.1f} ms, busy union of a traced step {1e3 * med(busy):.1f} ms "
        f"(max {1e3 * max(busy):.1f}); busy / untraced step {med(busy) / med(plain):.2f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(ac.run(main()))
