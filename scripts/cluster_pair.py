"""Two jobs sharing one GPU under a one-node Ray cluster: an opportunistic job runs alone, then a
guaranteed job arrives on the same GPU; the node's coordinator paces the opportunistic one.

``--backend cuda``: the GPU is the machine's real one (Ray's ``num_gpus``; the jobs run on the
CUDA backend on the GPU Ray assigned). ``--backend sim``: a simulated GPU (a custom resource).
Every half second it prints each job's step time, perfControl and device memory; at the end the
figures: the guaranteed job's step time against its baseline (p50, p95 after it recovered), the
time it took to recover, and the opportunistic job's throughput beside it as a fraction of its
throughput alone.

    python scripts/cluster_pair.py --backend sim [--before 8] [--seconds 30]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ["RAY_USAGE_STATS_ENABLED"] = "0"

MiB = 1 << 20
JOB = str(Path(__file__).resolve().with_name("share_gpu_job.py"))
DEGRADED = 1.25


def _steps(path: Path) -> tuple[float, int] | None:
    try:
        body = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return float(body["t"]), int(body["steps"])


def _rate(a: tuple[float, int] | None, b: tuple[float, int] | None) -> float | None:
    if a is None or b is None or b[0] <= a[0]:
        return None
    return (b[1] - a[1]) / (b[0] - a[0])


def _jobs(client: Any) -> dict[str, dict[str, Any]]:
    jobs = {}
    for node in client.cluster_status():
        for job in node.get("jobs", []):
            jobs[job["job_id"]] = job
    return jobs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=("sim", "cuda"), default="sim")
    p.add_argument("--before", type=float, default=8.0, help="seconds the opportunistic job runs alone")
    p.add_argument(
        "--seconds", type=float, default=30.0, help="seconds to watch after the guaranteed job arrives"
    )
    p.add_argument("--gpu-mib", type=int, default=256, help="the simulated GPU's memory")
    p.add_argument(
        "--width", type=int, default=None, help="the jobs' layer width (default: 256 sim, 4096 cuda)"
    )
    args = p.parse_args(argv)
    from antcolony.cluster import client
    from antcolony.cluster.ray_support import CLUSTER_DIR_ENV, REAL_GPU, connect, loopback_only

    loopback_only()
    try:
        import ray
    except ImportError:
        print("this script needs Ray: pip install -e '.[ray]'", file=sys.stderr)
        return 2
    workdir = Path(tempfile.mkdtemp(prefix="cluster_pair_"))
    os.environ[CLUSTER_DIR_ENV] = str(workdir / "cluster")
    cuda = args.backend == "cuda"
    connect(None, sim_gpus=0 if cuda else 1, sim_gpu_mib=args.gpu_mib, num_cpus=4, log_to_driver=False)
    gpu = REAL_GPU if cuda else "sim_gpu_0"
    mem = client.gpu_memory(gpu)
    width = args.width or (4096 if cuda else 256)
    job_args = [
        "--width",
        str(width),
        "--batch",
        str(width),
        "--sim-gpu-memory-mib",
        str(mem >> 20),
        "--every",
        "0.5",
    ]
    jobs: list[str] = []
    failed = False
    try:

        def submit(name: str, priority: str) -> None:
            job_id, _ = client.submit(
                JOB,
                [
                    *job_args,
                    "--stop",
                    str(workdir / f"{name}.stop"),
                    "--progress",
                    str(workdir / f"{name}.json"),
                ],
                gpu_memory=mem // 2,
                priority=priority,
                gpu=gpu,
                job_id=name,
            )
            jobs.append(job_id)
            print(f"--- submitted {job_id}: {priority} on {gpu} (asks {mem // 2 / MiB:.0f} MiB)", flush=True)

        submit("opp", "opportunistic")
        t0 = time.time()
        solo_from = None
        while time.time() - t0 < args.before:
            time.sleep(0.5)
            if solo_from is None:
                solo_from = _steps(workdir / "opp.json")
        solo = _rate(solo_from, _steps(workdir / "opp.json"))
        submit("guar", "guaranteed")
        arrival = time.time()
        rows: list[dict[str, Any]] = []
        while time.time() - arrival < args.seconds:
            time.sleep(0.5)
            jobs_now = _jobs(client)
            row: dict[str, Any] = {"t": time.time() - arrival, "opp_steps": _steps(workdir / "opp.json")}
            parts = [f"t={row['t']:5.1f}s"]
            for name in ("opp", "guar"):
                job = jobs_now.get(name, {})
                status, config = job.get("status") or {}, job.get("config") or {}
                step = status.get("stepTime") or status.get("miniBatchDuration")
                row[name] = {
                    "step_ms": step / 1000 if isinstance(step, (int, float)) and step > 0 else None,
                    "perf": config.get("perfControl"),
                    "baseline_ms": job["baseline_us"] / 1000 if job.get("baseline_us") else None,
                    "gpu": job.get("gpu"),
                    "used": status.get("deviceMemUsedMax"),
                }
                r = row[name]
                step_text = f"{r['step_ms']:7.1f}ms" if r["step_ms"] else "      -  "
                used = f"{r['used'] / MiB:6.1f}M" if r["used"] else "     -"
                parts.append(
                    f"{name}({r['gpu']}) perf {r['perf'] if r['perf'] is not None else '-':>3} step {step_text} dev {used}"
                )
            rows.append(row)
            print(" | ".join(parts), flush=True)
        failed = not _figures(rows, solo, arrival)
    finally:
        for name in ("opp", "guar"):
            (workdir / f"{name}.stop").touch()
        for job_id in jobs:
            try:
                client.stop(job_id)
            except Exception as exc:
                print(f"could not stop {job_id}: {exc}", file=sys.stderr)
        ray.shutdown()
    return 1 if failed else 0


def _figures(rows: list[dict[str, Any]], solo: float | None, arrival: float) -> bool:
    """Print the closing figures; False when the guaranteed job never ran."""
    guar = [(r["t"], r["guar"]) for r in rows if r["guar"]["step_ms"] and r["guar"]["baseline_ms"]]
    if not guar:
        print("guaranteed job: no step time with a baseline in the window (MISSED)")
        return False
    base = guar[-1][1]["baseline_ms"]
    ok = [t for t, g in guar if g["step_ms"] <= DEGRADED * base]
    print(f"guaranteed job: baseline {base:.1f} ms")
    if ok:
        after = [g["step_ms"] / base for t, g in guar if t >= ok[0]]
        p95 = sorted(after)[max(0, round(0.95 * len(after)) - 1)]
        print(
            f"  recovered within {DEGRADED}x its baseline {ok[0]:.1f} s after arriving "
            f"({'met' if ok[0] <= 3 else 'MISSED'}: 3 s)"
        )
        print(
            f"  step / baseline after recovery: p50 {statistics.median(after):.2f}, p95 {p95:.2f} "
            f"({'met' if p95 <= DEGRADED else 'MISSED'}: <= {DEGRADED})"
        )
    else:
        print(f"  never within {DEGRADED}x its baseline (MISSED)")
    beside = [r["opp_steps"] for r in rows if r["opp_steps"] is not None]
    rate = _rate(beside[len(beside) // 2], beside[-1]) if len(beside) > 2 else None
    perfs = [r["opp"]["perf"] for r in rows if r["opp"]["perf"] is not None]
    print(
        f"opportunistic job: alone {solo or 0:.1f} steps/s; beside the guaranteed job (second half) "
        f"{rate or 0:.1f} steps/s"
        + (f" = {rate / solo:.2f} of alone" if rate and solo else "")
        + f"; perfControl went {' -> '.join(str(p) for i, p in enumerate(perfs) if i == 0 or p != perfs[i - 1])}"
    )
    return True


if __name__ == "__main__":
    sys.exit(main())
