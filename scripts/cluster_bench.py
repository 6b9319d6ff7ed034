"""Several jobs arriving and leaving on two simulated GPUs of a two-node local Ray cluster, for
``--minutes``: the utilisation figures of cluster_figures.py over a longer, busier mix than
cluster_demo.py's.

The schedule, in fractions of the run (guaranteed jobs spend ``--host-ms`` per step on the host,
an input pipeline, leaving their GPU idle that long):

    sim_gpu_0: oppA (opportunistic) throughout; guarA (guaranteed) 0.10-0.55; oppC 0.40-0.90;
               guarC (guaranteed, half the host time) 0.65-end
    sim_gpu_1: oppB (opportunistic) throughout; guarB (guaranteed, 1.5x the host time) 0.25-0.80

On the local cluster each simulated GPU's jobs run on their own host cores (half of them each;
``--no-pin``: anywhere): a simulated GPU computes on the host, and unpinned, a job on one GPU slows
a guaranteed job on the other through the shared cores, which no GPU policy governs (the jobs of
two real GPUs do not share their compute).

It prints one line per sample, the coordinators' decisions, the figures with met / MISSED, and a
plot (a suspended job shaded, with no step time).

    pip install -e '.[ray,examples]' && python scripts/cluster_bench.py [--minutes 4] [--out cluster_bench.png]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cluster_demo import GPUS, JOB, add_pin_option, connect_cluster, pin_args, start_local_cluster
from cluster_figures import Run, figures, line, plot, sample

os.environ["RAY_USAGE_STATS_ENABLED"] = "0"

MiB = 1 << 20

# name, priority, GPU, arrives, leaves (fractions of the run), host time per step (x --host-ms)
SCHEDULE = (
    ("oppA", "opportunistic", GPUS[0], 0.0, 1.0, 0.0),
    ("oppB", "opportunistic", GPUS[1], 0.0, 1.0, 0.0),
    ("guarA", "guaranteed", GPUS[0], 0.10, 0.55, 1.0),
    ("guarB", "guaranteed", GPUS[1], 0.25, 0.80, 1.5),
    ("oppC", "opportunistic", GPUS[0], 0.40, 0.90, 0.0),
    ("guarC", "guaranteed", GPUS[0], 0.65, 1.0, 0.5),
)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=4.0, help="length of the run")
    p.add_argument("--host-ms", type=float, default=20.0, help="a guaranteed job's host work per step")
    p.add_argument("--width", type=int, default=256, help="every job's model width and batch size")
    p.add_argument("--out", default="cluster_bench.png")
    p.add_argument("--every", type=float, default=0.5, help="seconds between samples")
    add_pin_option(p)
    p.add_argument(
        "--address",
        default=None,
        help="an existing Ray cluster with simulated GPUs sim_gpu_0 and sim_gpu_1 (default: start a "
        "two-node local one)",
    )
    args = p.parse_args(argv)
    from antcolony.cluster import client
    from antcolony.cluster.ray_support import loopback_only

    if args.address is None:
        loopback_only()  # before ray is imported
    try:
        import ray
    except ImportError:
        print("this benchmark needs Ray: pip install -e '.[ray]'", file=sys.stderr)
        return 2
    workdir = Path(tempfile.mkdtemp(prefix="cluster_bench_"))
    cluster = start_local_cluster(workdir) if args.address is None else None
    duration = args.minutes * 60
    started: list[str] = []
    run = Run(capacity={})
    try:
        gpus = connect_cluster(args.address or cluster.address)
        if gpus is None:
            return 2
        run.capacity = gpus
        gpu_mib = min(gpus.values()) >> 20
        base_args = [
            "--width",
            str(args.width),
            "--batch",
            str(args.width),
            "--sim-gpu-memory-mib",
            str(gpu_mib),
            "--every",
            "0.25",
        ]
        pinned = pin_args(args.pin, args.address)
        pending = sorted(SCHEDULE, key=lambda job: job[3])
        leaving = {name: leave for name, _, _, _, leave, _ in SCHEDULE if leave < 1.0}
        t0 = time.time()
        while (now := time.time() - t0) < duration:
            while pending and now >= pending[0][3] * duration:
                name, priority, gpu, _, _, host = pending.pop(0)
                extra = ["--host-ms", str(args.host_ms * host)] if host else []
                extra += pinned.get(gpu, [])
                files = ["--stop", str(workdir / f"{name}.stop"), "--progress", str(workdir / f"{name}.json")]
                client.submit(
                    JOB,
                    [*base_args, *files, *extra],
                    gpu_memory=48 * MiB,
                    priority=priority,
                    gpu=gpu,
                    job_id=name,
                )
                started.append(name)
                if priority == "guaranteed":
                    run.arrivals[name] = time.time() - t0
                else:
                    run.kinds[name] = "opportunistic"  # the same script and sizes
                print(f"--- t={now:5.1f}s submitted {name}: {priority} on {gpu}", flush=True)
            for name, leave in list(leaving.items()):
                if name in started and now >= leave * duration:
                    (workdir / f"{name}.stop").touch()
                    client.stop(name)  # a suspended job would not reach its next step to see the file
                    run.departures[name] = time.time() - t0
                    del leaving[name]
                    print(f"--- t={now:5.1f}s {name} left", flush=True)
            s, _ = sample(client, t0, workdir)
            run.samples.append(s)
            print(line(s), flush=True)
            time.sleep(args.every)
        _, decisions = sample(client, t0, workdir)
        run.decisions = sorted(
            ({**d, "t_rel": d["t"] - t0} for d in decisions if d["t"] >= t0 - 5), key=lambda d: d["t_rel"]
        )
        print(f"decisions ({len(run.decisions)}; the last 40):")
        for d in run.decisions[-40:]:
            print(f"  t={d['t_rel']:6.1f}s {d['job']}: perfControl {d['perfControl']}: {d['reason']}")
        print("figures:")
        for text in figures(run):
            print("  " + text)
        print(plot(run, args.out, f"{len(SCHEDULE)} jobs arriving and leaving on two simulated GPUs"))
    finally:
        for name in started:
            (workdir / f"{name}.stop").touch()
            if name not in run.departures:
                try:
                    client.stop(name)
                except Exception as exc:
                    print(f"could not stop {name}: {exc}", file=sys.stderr)
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
