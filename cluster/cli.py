"""``antcolony submit`` and ``antcolony cluster status|stop`` (Ray is imported only when one runs)."""

from __future__ import annotations

import argparse
import re
import sys
import time
from typing import Any, TextIO

from antcolony.errors import ConfigError

__all__ = ["SUBMIT_VALUE_OPTIONS", "add_parsers", "format_cluster", "parse_size"]

_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gib": 1 << 30,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
}
#: submit's options that take a value (the CLI splits ``submit [OPTIONS] SCRIPT ARGS`` after SCRIPT)
SUBMIT_VALUE_OPTIONS = frozenset(
    {"--gpu-memory", "--perf", "--priority", "--address", "--gpu", "--name", "--sim-gpus", "--sim-gpu-memory"}
)


def parse_size(text: str) -> int:
    """Bytes from ``4GiB``, ``512MiB``, ``1.5G``, ``1000000`` (binary units; KB/MB/GB decimal)."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in _UNITS:
        raise ConfigError(f"{text!r} is not a size: write e.g. 4GiB, 512MiB or a number of bytes")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def _cmd_submit(args: argparse.Namespace) -> int:
    from . import client
    from .ray_support import connect

    try:
        gpu_memory = parse_size(args.gpu_memory)
        if args.detach and args.address is None:
            raise ConfigError("--detach needs --address: a local Ray started by submit ends with it")
        ray = connect(args.address, sim_gpus=args.sim_gpus, sim_gpu_mib=parse_size(args.sim_gpu_memory) >> 20)
        job_id, done = client.submit(
            args.script,
            args.args,
            gpu_memory=gpu_memory,
            perf=args.perf,
            priority=args.priority,
            gpu=args.gpu,
            job_id=args.name,
            detach=args.detach,
        )
    except ConfigError as exc:
        print(f"antcolony submit: {exc}", file=sys.stderr)
        return 2
    print(f"antcolony submit: job {job_id} submitted", file=sys.stderr)
    if args.detach:
        return 0
    try:
        return int(ray.get(done))
    except KeyboardInterrupt:
        client.stop(job_id)
        return 130


def _mib(value: Any) -> str:
    return f"{value / (1 << 20):.1f}M" if isinstance(value, (int, float)) and value >= 0 else "-"


def _gpu_text(name: str, mem: int, node: dict[str, Any]) -> str:
    """A GPU of a node: a real one as NVML names it (model, bus id, memory in use of its total)."""
    info = node.get("gpu_info", {}).get(name)
    if not info:
        return f"{name} {_mib(mem)}"
    return f"{name} {info['name']} {info['bus_id']} ({_mib(info['used'])} used of {_mib(info['total'])})"


def format_cluster(nodes: list[dict[str, Any]], decisions: int = 10) -> str:
    """The cluster as a table: nodes, their GPUs, their jobs; then each node's last decisions."""
    lines = []
    for node in nodes:
        gpus = ", ".join(_gpu_text(name, mem, node) for name, mem in node.get("gpus", {}).items()) or "no GPU"
        state = "alive" if node.get("alive") else "GONE (its jobs went with it)"
        lines.append(f"node {node['node_id'][:12]} {node.get('address', '')} {state}: {gpus}")
        if node.get("error"):
            lines.append(f"  {node['error']}")
        for job in node.get("lost_jobs", []):
            lines.append(
                f"  {job['job_id']:<24} {job.get('gpu', '-'):<10} {job.get('priority', '-'):<13} LOST with its "
                f"node (asked {_mib(job.get('gpu_memory'))}; antcolony cluster stop {job['job_id']} "
                "forgets it)"
            )
        for job in node.get("jobs", []):
            st, cfg = job.get("status", {}), job.get("config", {})
            step = st.get("stepTime") or st.get("miniBatchDuration")
            base = job.get("baseline_us")
            lines.append(
                f"  {job['job_id']:<24} {job['gpu']:<10} {job['priority']:<13} perf {cfg.get('perfControl', '-'):>3} "
                f"(asked {job['perf']})  mem asked {_mib(job['gpu_memory'])} config {_mib(cfg.get('maxDeviceMem'))} "
                f"reached {_mib(st.get('deviceMemLimit'))}  used {_mib(st.get('deviceMemUsedMax'))}  "
                f"step {f'{step / 1000:.1f} ms' if step else '-'}"
                f"{f' (baseline {base / 1000:.1f} ms)' if base else ''}  host fallbacks {st.get('hostFallbacks', '-')}"
            )
        for d in node.get("decisions", [])[-decisions:]:
            stamp = time.strftime("%H:%M:%S", time.localtime(d["t"]))
            lines.append(
                f"  {stamp} {d['job']}: perfControl {d['perfControl']}, maxDeviceMem "
                f"{_mib(d['maxDeviceMem'])}: {d['reason']}"
            )
    return "\n".join(lines) or "no nodes"


def _cmd_cluster(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from . import client
    from .ray_support import connect

    out = out or sys.stdout
    try:
        connect(args.address)
    except (ConfigError, ConnectionError) as exc:
        print(f"antcolony cluster: {exc}", file=sys.stderr)
        return 2
    if args.action == "status":
        print(format_cluster(client.cluster_status(), args.decisions), file=out)
        return 0
    if client.stop(args.job):
        print(f"job {args.job} stopped", file=out)
        return 0
    print(
        f"antcolony cluster stop: no job {args.job!r} in the cluster (see antcolony cluster status)",
        file=sys.stderr,
    )
    return 1


def add_parsers(sub: Any) -> None:
    submit = sub.add_parser(
        "submit", help="run a script as a job on a Ray cluster's shared GPUs (needs the ray extra)"
    )
    submit.add_argument("--gpu-memory", default="1GiB", help="GPU memory the job asks (e.g. 4GiB)")
    submit.add_argument("--perf", type=int, default=100, help="perfControl the job asks (0..100)")
    submit.add_argument("--priority", choices=["guaranteed", "opportunistic"], default="guaranteed")
    submit.add_argument("--address", default=None, help="Ray cluster address (default: start a local Ray)")
    submit.add_argument(
        "--gpu",
        default=None,
        help="gpu: a real GPU, through Ray's num_gpus (Ray picks which); or a simulated GPU resource "
        "such as sim_gpu_0 (default: the freest)",
    )
    submit.add_argument("--name", default=None, help="job id (default: script name + random suffix)")
    submit.add_argument("--detach", action="store_true", help="return once submitted (needs --address)")
    submit.add_argument(
        "--sim-gpus",
        type=int,
        default=None,
        help="simulated GPUs of a local Ray (no --address; default: none on a machine with real GPUs, else 1)",
    )
    submit.add_argument(
        "--sim-gpu-memory", default="16GiB", help="memory of each simulated GPU of a local Ray"
    )
    submit.add_argument("script", help="path of the job's script")
    submit.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    submit.set_defaults(func=_cmd_submit)
    cluster = sub.add_parser("cluster", help="see or stop the jobs of a Ray cluster (needs the ray extra)")
    actions = cluster.add_subparsers(dest="action", required=True)
    status = actions.add_parser("status", help="nodes, GPUs, jobs and the coordinators' decisions")
    status.add_argument("--decisions", type=int, default=10, help="decisions shown per node")
    stop = actions.add_parser(
        "stop", help="stop a job (kill its process; its share is freed), or forget a job lost with its node"
    )
    stop.add_argument("job", help="the job id, as antcolony submit and cluster status print it")
    for p in (status, stop):
        p.add_argument("--address", default="auto", help="Ray cluster address (default: the local one)")
    cluster.set_defaults(func=_cmd_cluster)
