"""Run ``antcolony submit ARGS`` against a local Ray cluster of several nodes on this machine
(``ray.cluster_utils``, as the cluster tests use), then stop the cluster: a way to try a
distributed TF1 job (ps and workers, ``--spread`` over the nodes) without machines.

    python scripts/submit_on_local_cluster.py --nodes 2 -- --ps 1 --workers 2 --spread \\
        mnist_replica.py --job_name={job_name} --task_index={task_index} \\
        --ps_hosts={ps_hosts} --worker_hosts={worker_hosts} --num_gpus=0

Each node has ``--cpus`` CPUs and one simulated GPU (``sim_gpu_<n>``, ``--gpu-mib`` MiB). Prints
submit's output, each task's log (the job's folder under the cluster directory) and the wall time;
exits with submit's exit code.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def local_cluster(nodes: int, cpus: int, gpu_mib: int, prefix: str = "local_cluster_") -> tuple[Any, Path]:
    """A ``ray.cluster_utils.Cluster`` of ``nodes`` nodes on 127.0.0.1, each with ``cpus`` CPUs and
    one simulated GPU (``sim_gpu_<n>``, ``gpu_mib`` MiB), and the coordinators' directory (a new
    temporary folder, in ``CLUSTER_DIR_ENV``, which the nodes inherit). The caller shuts it down."""
    from ray import cluster_utils

    from antcolony.cluster.ray_support import CLUSTER_DIR_ENV

    root = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ[CLUSTER_DIR_ENV] = str(root)
    node = {"num_cpus": cpus, "node_ip_address": "127.0.0.1"}
    head = {**node, "include_dashboard": False, "resources": {"sim_gpu_0": 1, "sim_gpu_mib": gpu_mib}}
    cluster = cluster_utils.Cluster(initialize_head=True, head_node_args=head)
    try:
        for n in range(1, nodes):
            cluster.add_node(**node, resources={f"sim_gpu_{n}": 1, "sim_gpu_mib": gpu_mib})
        cluster.wait_for_nodes()
    except BaseException:
        cluster.shutdown()
        raise
    return cluster, root


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=2)
    p.add_argument("--cpus", type=int, default=2, help="CPUs each node advertises")
    p.add_argument("--gpu-mib", type=int, default=1024)
    p.add_argument("--timeout", type=float, default=600, help="seconds submit may take")
    p.add_argument("submit_args", nargs=argparse.REMAINDER, help="after --: antcolony submit's arguments")
    args = p.parse_args(argv)
    submit_args = args.submit_args[1:] if args.submit_args[:1] == ["--"] else args.submit_args
    if not submit_args:
        p.error("give antcolony submit's arguments after --")
    try:
        import ray
    except ImportError:
        print("this script needs Ray: pip install -e '.[ray]'", file=sys.stderr)
        return 2
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")  # every task's lines, even when two print the same
    cluster, root = local_cluster(args.nodes, args.cpus, args.gpu_mib)
    try:
        print(
            f"local Ray cluster: {args.nodes} node(s) at {cluster.address}; cluster directory {root}",
            flush=True,
        )
        start = time.monotonic()
        cmd = [sys.executable, "-m", "antcolony", "submit", "--address", cluster.address, *submit_args]
        print("$ " + " ".join(cmd), flush=True)
        proc = subprocess.run(cmd, timeout=args.timeout)
        took = time.monotonic() - start
        for log in sorted(root.rglob("*.log")):
            print(f"--- {log.relative_to(root)} (last 15 lines)")
            print("\n".join(log.read_text(errors="replace").splitlines()[-15:]))
        print(f"submit exit code {proc.returncode}; wall time {took:.1f} s (from submit to its end)")
        return proc.returncode
    finally:
        ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    sys.exit(main())
