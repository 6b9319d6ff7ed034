"""Jobs sharing simulated GPUs across a two-node local Ray cluster, driven AntMan-style.

A local test cluster (``ray.cluster_utils``, both nodes on this machine, 127.0.0.1 only) has one
simulated GPU per node (or, with ``--address``, an existing cluster whose nodes have the simulated
GPUs ``sim_gpu_0`` and ``sim_gpu_1``). Two opportunistic jobs start, one per GPU; later a guaranteed job arrives
on GPU 0. Each node's coordinator writes its jobs' config files and reads their status files; this
script only watches, through ``antcolony.cluster.client.cluster_status`` (what ``antcolony cluster
status`` prints), every half second. It prints one line per sample, and at the end the figures:
the time from the guaranteed job's arrival to its step time within 1.25x its baseline, and the GPU
memory in use across the cluster; and a plot (PNG, matplotlib) of each job's step time,
perfControl and device memory with the coordinators' decisions marked.

    pip install -e '.[ray,examples]' && python scripts/cluster_demo.py [--seconds 12] [--out cluster_demo.png]
    python scripts/cluster_demo.py --address HEAD:6379   # on a cluster started with ray start
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Before ray is imported: no usage statistics (and, for a cluster on this machine, main() keeps
# Ray on 127.0.0.1 only).
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"

MiB = 1 << 20
GPU_MIB = 128  # each simulated GPU of the local cluster
GPUS = ("sim_gpu_0", "sim_gpu_1")
JOB = str(Path(__file__).resolve().with_name("share_gpu_job.py"))
DEGRADED = 1.25  # the policy's threshold: a guaranteed job's step time over 1.25x its baseline


@dataclass
class Sample:
    t: float
    jobs: dict[str, dict[str, Any]]  # job id -> {step_ms, perf, mem_asked, dev_used, baseline_ms, gpu}
    device_total: dict[str, int]  # GPU resource -> deviceMemUsedNvidia (bytes) as its jobs report it


@dataclass
class Run:
    samples: list[Sample] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    arrival: float | None = None


def sample(client: Any, t0: float) -> tuple[Sample, list[dict[str, Any]]]:
    jobs, totals, decisions = {}, {}, []
    for node in client.cluster_status():
        decisions += node.get("decisions", [])
        for job in node.get("jobs", []):
            status, config = job.get("status") or {}, job.get("config") or {}
            step = status.get("miniBatchDuration")
            base = job.get("baseline_us")
            jobs[job["job_id"]] = {
                "gpu": job["gpu"],
                "priority": job["priority"],
                "step_ms": step / 1000 if isinstance(step, (int, float)) and step > 0 else None,
                "baseline_ms": base / 1000 if base else None,
                "perf": config.get("perfControl"),
                "mem_asked": config.get("maxDeviceMem"),
                "dev_used": status.get("deviceMemUsedMax"),
            }
            if isinstance(status.get("deviceMemUsedNvidia"), int) and status["deviceMemUsedNvidia"] >= 0:
                totals[job["gpu"]] = max(totals.get(job["gpu"], 0), status["deviceMemUsedNvidia"])
    return Sample(time.time() - t0, jobs, totals), decisions


def line(s: Sample) -> str:
    parts = [f"t={s.t:5.1f}s"]
    for job_id, j in sorted(s.jobs.items()):
        step = f"{j['step_ms']:6.1f}ms" if j["step_ms"] else "     -  "
        perf = j["perf"] if j["perf"] is not None else "-"
        used = f"{j['dev_used'] / MiB:5.1f}M" if j["dev_used"] else "    -"
        parts.append(f"{job_id}({j['gpu']}) step {step} perf {perf:>3} dev {used}")
    parts.append("GPU use " + ", ".join(f"{g} {b / MiB:.0f}M" for g, b in sorted(s.device_total.items())))
    return " | ".join(parts)


def on_target(s: Sample, job_id: str) -> bool:
    """Whether the job's step time in this sample is within DEGRADED x its baseline."""
    j = s.jobs.get(job_id)
    return bool(j and j["step_ms"] and j["baseline_ms"] and j["step_ms"] <= DEGRADED * j["baseline_ms"])


def figures(run: Run, guaranteed: str, capacity: int) -> list[str]:
    """The closing figures; ``capacity``: the bytes of the GPUs the jobs share."""
    out = []
    if run.arrival is not None:
        ok = [s.t for s in run.samples if s.t >= run.arrival and on_target(s, guaranteed)]
        out.append(
            f"guaranteed job {guaranteed}: step time within {DEGRADED}x its baseline "
            + (f"{ok[0] - run.arrival:.1f} s after its arrival" if ok else "never (MISSED)")
        )
    used = [sum(s.device_total.values()) for s in run.samples if s.device_total]
    if used:
        out.append(
            f"GPU memory in use across the cluster: mean {sum(used) / len(used) / MiB:.0f} MiB, "
            f"max {max(used) / MiB:.0f} MiB of {capacity / MiB:.0f} MiB "
            f"({sum(used) / len(used) / capacity:.0%} mean utilisation)"
        )
    return out


def plot(run: Run, path: str) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install -e '.[examples]'); no plot written"
    ids = sorted({j for s in run.samples for j in s.jobs})
    fig, axes = plt.subplots(3, 1, figsize=(11, 8), sharex=True)
    for job_id in ids:
        t = [s.t for s in run.samples if job_id in s.jobs]
        js = [s.jobs[job_id] for s in run.samples if job_id in s.jobs]
        label = f"{job_id} ({js[0]['priority']}, {js[0]['gpu']})"
        axes[0].plot(t, [j["step_ms"] or float("nan") for j in js], label=label)
        axes[1].step(
            t, [j["perf"] if j["perf"] is not None else float("nan") for j in js], where="post", label=label
        )
        axes[2].plot(t, [(j["dev_used"] or 0) / MiB for j in js], label=label)
    for d in run.decisions:
        for ax in axes:
            ax.axvline(d["t_rel"], color="grey", linewidth=0.6, linestyle=":")
        axes[1].annotate(
            f"{d['job']}: perf {d['perfControl']}",
            (d["t_rel"], 1.0),
            xycoords=("data", "axes fraction"),
            rotation=90,
            fontsize=6,
            va="top",
        )
    if run.arrival is not None:
        for ax in axes:
            ax.axvline(run.arrival, color="red", linewidth=1)
        axes[0].annotate(
            "guaranteed job arrives",
            (run.arrival, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(3, -3),
            textcoords="offset points",
            va="top",
            fontsize=8,
            color="red",
        )
    axes[0].set_ylabel("step time (ms)")
    axes[1].set_ylabel("perfControl")
    axes[2].set_ylabel("device MiB used")
    axes[2].set_xlabel("seconds")
    for ax in axes:
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle("Jobs on a two-node Ray cluster; dotted lines: the coordinators' decisions")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return f"plot written to {path}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--seconds", type=float, default=12.0, help="seconds to watch after the guaranteed job arrives"
    )
    p.add_argument("--before", type=float, default=6.0, help="seconds the opportunistic jobs run alone")
    p.add_argument(
        "--settle",
        type=float,
        default=None,
        help="stop watching this many seconds after the guaranteed job is back within "
        f"{DEGRADED}x its baseline (default: watch for all of --seconds)",
    )
    p.add_argument("--out", default="cluster_demo.png")
    p.add_argument(
        "--address",
        default=None,
        help="an existing Ray cluster with simulated GPUs sim_gpu_0 and sim_gpu_1 (default: start a "
        "two-node local one); the job script must be at this path on its nodes",
    )
    args = p.parse_args(argv)
    from antcolony.cluster import client
    from antcolony.cluster.ray_support import CLUSTER_DIR_ENV, connect, loopback_only, node_sim_gpus

    if args.address is None:
        loopback_only()  # before ray is imported
    try:
        import ray
    except ImportError:
        print("this demo needs Ray: pip install -e '.[ray]'", file=sys.stderr)
        return 2

    workdir = Path(tempfile.mkdtemp(prefix="cluster_demo_"))
    cluster = None
    if args.address is None:
        from ray import cluster_utils

        os.environ[CLUSTER_DIR_ENV] = str(workdir / "cluster")  # the nodes' processes inherit it
        cluster = cluster_utils.Cluster(
            initialize_head=True,
            head_node_args={
                "num_cpus": 1,
                "node_ip_address": "127.0.0.1",
                "include_dashboard": False,
                "resources": {GPUS[0]: 1, "sim_gpu_mib": GPU_MIB},
            },
        )
    run, jobs = Run(), []
    try:
        if cluster is not None:
            cluster.add_node(
                num_cpus=1, node_ip_address="127.0.0.1", resources={GPUS[1]: 1, "sim_gpu_mib": GPU_MIB}
            )
            cluster.wait_for_nodes()
        connect(args.address or cluster.address, log_to_driver=False)
        gpus = {
            name: mem
            for node in ray.nodes()
            if node.get("Alive")
            for name, mem in node_sim_gpus(node).items()
        }
        if any(gpu not in gpus for gpu in GPUS):
            print(
                f"the cluster needs the simulated GPUs {', '.join(GPUS)} (it has {sorted(gpus) or 'none'}): "
                'start its nodes with ray start --resources \'{"sim_gpu_0": 1, "sim_gpu_mib": 128}\'',
                file=sys.stderr,
            )
            return 2
        gpu_mib = min(gpus[gpu] for gpu in GPUS) >> 20  # the jobs' simulated GPU is the node's
        job_args = ["--width", "256", "--batch", "256", "--sim-gpu-memory-mib", str(gpu_mib), "--every", "5"]

        def submit(name: str, priority: str, gpu: str, mib: int) -> None:
            job_id, _ = client.submit(
                JOB,
                [*job_args, "--stop", str(workdir / f"{name}.stop")],
                gpu_memory=mib * MiB,
                priority=priority,
                gpu=gpu,
                job_id=name,
            )
            jobs.append(job_id)
            print(f"--- submitted {job_id}: {priority} on {gpu}", flush=True)

        submit("opp0", "opportunistic", "sim_gpu_0", 64)
        submit("opp1", "opportunistic", "sim_gpu_1", 64)
        t0 = time.time()
        end = t0 + args.before + args.seconds
        while time.time() < end:
            if run.arrival is None and time.time() - t0 >= args.before:
                submit("guar", "guaranteed", "sim_gpu_0", 64)
                run.arrival = time.time() - t0
            s, decisions = sample(client, t0)
            run.samples.append(s)
            print(line(s), flush=True)
            if args.settle is not None and run.arrival is not None and on_target(s, "guar"):
                end = min(end, time.time() + args.settle)
            time.sleep(0.5)
        _, decisions = sample(client, t0)
        run.decisions = sorted(
            ({**d, "t_rel": d["t"] - t0} for d in decisions if d["t"] >= t0 - 5), key=lambda d: d["t_rel"]
        )
        print("decisions:")
        for d in run.decisions:
            print(
                f"  t={d['t_rel']:5.1f}s {d['job']}: maxDeviceMem {d['maxDeviceMem'] / MiB:.0f} MiB, "
                f"perfControl {d['perfControl']}: {d['reason']}"
            )
        for text in figures(run, "guar", sum(gpus[gpu] for gpu in GPUS)):
            print(text)
        print(plot(run, args.out))
    finally:
        for job_id in jobs:
            try:
                client.stop(job_id)
            except Exception as exc:
                print(f"could not stop {job_id}: {exc}", file=sys.stderr)
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
