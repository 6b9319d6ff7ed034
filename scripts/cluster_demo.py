"""Jobs sharing simulated GPUs across a two-node local Ray cluster, driven AntMan-style.

A local test cluster (``ray.cluster_utils``, both nodes on this machine, 127.0.0.1 only) has one
simulated GPU per node (or, with ``--address``, an existing cluster whose nodes have the simulated
GPUs ``sim_gpu_0`` and ``sim_gpu_1``). Two opportunistic jobs start, one per GPU; later a guaranteed job arrives
on GPU 0. Each node's coordinator writes its jobs' config files and reads their status files; this
script only watches, through ``antcolony.cluster.client.cluster_status`` (what ``antcolony cluster
status`` prints) and the jobs' progress files, every half second. The guaranteed job spends
``--host-ms`` per step on the host (an input pipeline), leaving its GPU idle that long: the time
the opportunistic job beside it may fill. It prints one line per sample, and at the end the
figures of cluster_figures.py against their targets (met / MISSED), and a plot (PNG, matplotlib)
of each job's step time (a suspended job shaded, with no step time), perfControl, throughput and
device memory. On the local cluster each simulated GPU's jobs run on their own host cores (half of
them each; ``--no-pin``: anywhere): a simulated GPU computes on the host, and unpinned, the job on
GPU 1 slows the guaranteed job on GPU 0 through the shared cores, which no GPU policy governs. For
the same reason the cluster's own processes (Ray's, the coordinators, this watcher) run on GPU 1's
cores, where no guaranteed job runs.

    pip install -e '.[ray,examples]' && python scripts/cluster_demo.py [--seconds 20] [--out cluster_demo.png]
    python scripts/cluster_demo.py --address HEAD:6379   # on a cluster started with ray start
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cluster_figures import DEGRADED, Run, figures, line, plot, sample

# Before ray is imported: no usage statistics (and, for a cluster on this machine, main() keeps
# Ray on 127.0.0.1 only).
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"

MiB = 1 << 20
GPU_MIB = 128  # each simulated GPU of the local cluster
GPUS = ("sim_gpu_0", "sim_gpu_1")
JOB = str(Path(__file__).resolve().with_name("share_gpu_job.py"))
START_WAIT = 60.0  # seconds the opportunistic jobs may take to make their first steps


def start_local_cluster(workdir: Path) -> Any:
    """Two nodes on 127.0.0.1, one CPU and one simulated GPU of GPU_MIB each (``ray.cluster_utils``);
    their coordinators keep their files under ``workdir``."""
    from ray import cluster_utils

    from antcolony.cluster.ray_support import CLUSTER_DIR_ENV

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
    cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1", resources={GPUS[1]: 1, "sim_gpu_mib": GPU_MIB})
    cluster.wait_for_nodes()
    return cluster


def connect_cluster(address: str) -> dict[str, int] | None:
    """Connect to the cluster; its simulated GPUs GPUS and their bytes (None, said why, without)."""
    import ray

    from antcolony.cluster.ray_support import connect, node_sim_gpus

    connect(address, log_to_driver=False)
    gpus = {
        name: mem for node in ray.nodes() if node.get("Alive") for name, mem in node_sim_gpus(node).items()
    }
    if any(gpu not in gpus for gpu in GPUS):
        print(
            f"the cluster needs the simulated GPUs {', '.join(GPUS)} (it has {sorted(gpus) or 'none'}): "
            'start its nodes with ray start --resources \'{"sim_gpu_0": 1, "sim_gpu_mib": 128}\'',
            file=sys.stderr,
        )
        return None
    return {gpu: gpus[gpu] for gpu in GPUS}


def gpu_cores(gpus: list[str]) -> dict[str, list[int]]:
    """An equal share of this process's host cores per GPU; none with fewer cores than GPUs."""
    cores = sorted(os.sched_getaffinity(0))
    k = len(cores) // len(gpus)
    return {gpu: cores[i * k : (i + 1) * k] for i, gpu in enumerate(gpus)} if k else {}


def add_pin_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--pin",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="on the local cluster, run each simulated GPU's jobs on their own host cores (default)",
    )


def pin_args(pin: bool, address: str | None) -> dict[str, list[str]]:
    """``share_gpu_job.py``'s ``--cpus`` per GPU: on a local cluster only (an existing cluster's
    nodes are other machines), when asked."""
    cores = gpu_cores(list(GPUS)) if pin and address is None else {}
    print(f"host cores per GPU: {cores or 'any'}", flush=True)
    return {gpu: ["--cpus", ",".join(map(str, c))] for gpu, c in cores.items()}


def keep_cluster_on(cores: set[int]) -> None:
    """Run this process, and so the local cluster's processes it starts (Ray's, the coordinators;
    they inherit its cores), on host ``cores``: GPU 1's, where no guaranteed job runs. A simulated
    GPU computes on its cores: the guaranteed job's GPU is its cores, which a real GPU does not
    share with the cluster's processes."""
    from antcolony.cluster.cpu_priority import set_cpu_affinity

    if refused := set_cpu_affinity(cores):
        print(f"could not keep the cluster on cores {sorted(cores)}: {'; '.join(refused)}", file=sys.stderr)
    else:
        print(f"the cluster's own processes run on host cores {sorted(cores)}", flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--seconds",
        type=float,
        default=20.0,
        help="seconds to watch after the guaranteed job arrives: its baseline takes about 4 s, and "
        "a p95 after its recovery needs 20 samples (10 s) not to be their maximum",
    )
    p.add_argument(
        "--before",
        type=float,
        default=6.0,
        help="seconds the opportunistic jobs run alone, from their first steps (their processes "
        f"take seconds to start on a busy machine; at most {START_WAIT:.0f} s are waited for those)",
    )
    p.add_argument(
        "--settle",
        type=float,
        default=None,
        help="stop watching this many seconds after the guaranteed job is back within "
        f"{DEGRADED}x its baseline (default: watch for all of --seconds)",
    )
    p.add_argument("--out", default="cluster_demo.png")
    add_pin_option(p)
    p.add_argument("--host-ms", type=float, default=20.0, help="the guaranteed job's host work per step")
    p.add_argument("--width", type=int, default=256, help="every job's model width and batch size")
    p.add_argument(
        "--address",
        default=None,
        help="an existing Ray cluster with simulated GPUs sim_gpu_0 and sim_gpu_1 (default: start a "
        "two-node local one); the job script must be at this path on its nodes",
    )
    args = p.parse_args(argv)
    from antcolony.cluster import client
    from antcolony.cluster.ray_support import loopback_only

    if args.address is None:
        loopback_only()  # before ray is imported
    try:
        import ray
    except ImportError:
        print("this demo needs Ray: pip install -e '.[ray]'", file=sys.stderr)
        return 2

    workdir = Path(tempfile.mkdtemp(prefix="cluster_demo_"))
    pinned = pin_args(args.pin, args.address)
    if pinned:
        keep_cluster_on(set(gpu_cores(list(GPUS))[GPUS[1]]))  # before this process's cores narrow
    cluster = start_local_cluster(workdir) if args.address is None else None
    jobs: list[str] = []
    try:
        gpus = connect_cluster(args.address or cluster.address)
        if gpus is None:
            return 2
        run = Run(capacity=gpus, kinds={"opp0": "opportunistic", "opp1": "opportunistic"})
        gpu_mib = min(gpus[gpu] for gpu in GPUS) >> 20  # the jobs' simulated GPU is the node's
        job_args = [
            "--width",
            str(args.width),
            "--batch",
            str(args.width),
            "--sim-gpu-memory-mib",
            str(gpu_mib),
            "--every",
            "0.25",
        ]

        def submit(name: str, priority: str, gpu: str, mib: int, *extra: str) -> None:
            files = ["--stop", str(workdir / f"{name}.stop"), "--progress", str(workdir / f"{name}.json")]
            job_id, _ = client.submit(
                JOB,
                [*job_args, *files, *extra, *pinned.get(gpu, [])],
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
        end = t0 + START_WAIT + args.before + args.seconds
        stepping: float | None = None  # when both opportunistic jobs had made steps
        while time.time() < end:
            if "guar" not in run.arrivals and stepping is not None and time.time() - stepping >= args.before:
                submit("guar", "guaranteed", "sim_gpu_0", 64, "--host-ms", str(args.host_ms))
                run.arrivals["guar"] = time.time() - t0
                end = time.time() + args.seconds
            s, _ = sample(client, t0, workdir)
            if stepping is None and all(s.jobs.get(k, {}).get("steps", 0) > 0 for k in ("opp0", "opp1")):
                stepping = time.time()
            elif stepping is None and time.time() - t0 > START_WAIT:
                print(f"the opportunistic jobs made no step in {START_WAIT:.0f} s", file=sys.stderr)
                return 1
            run.samples.append(s)
            print(line(s), flush=True)
            guar = s.jobs.get("guar")
            on_target = (
                guar
                and guar["step_ms"]
                and guar["baseline_ms"]
                and guar["step_ms"] <= DEGRADED * guar["baseline_ms"]
            )
            if args.settle is not None and on_target:
                end = min(end, time.time() + args.settle)
            time.sleep(0.5)
        _, decisions = sample(client, t0, workdir)
        run.decisions = sorted(
            ({**d, "t_rel": d["t"] - t0} for d in decisions if d["t"] >= t0 - 5), key=lambda d: d["t_rel"]
        )
        print("decisions:")
        for d in run.decisions:
            print(
                f"  t={d['t_rel']:5.1f}s {d['job']}: maxDeviceMem {d['maxDeviceMem'] / MiB:.0f} MiB, "
                f"perfControl {d['perfControl']}: {d['reason']}"
            )
        print("figures:")
        for text in figures(run):
            print("  " + text)
        print(plot(run, args.out, "Jobs on a two-node Ray cluster (red: guaranteed job arrives)"))
    finally:
        for name in jobs:
            (workdir / f"{name}.stop").touch()
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
