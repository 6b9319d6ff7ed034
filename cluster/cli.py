"""``antcolony submit`` and ``antcolony cluster status|stop`` (Ray is imported only when one runs).

Every argument is checked before Ray starts (seconds), and an error names the flag at fault.
Every command has a connection deadline (``--connect-timeout``, default 30 s): an address is
first probed over TCP (nothing listening: an error naming it at once), and the connection and
the command's first calls run under a watchdog that ends the process with an error naming the
address when they take longer (``ray.init`` against something that is not a Ray cluster would
otherwise wait for minutes, in a call that cannot be interrupted from Python).
A local submit (no ``--address``) removes the job's files when the job ends (``--keep-files``
keeps them).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import os
import re
import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, TextIO

from antcolony.errors import ConfigError

logger = logging.getLogger(__name__)

__all__ = [
    "CONNECT_TIMEOUT_S",
    "SUBMIT_VALUE_OPTIONS",
    "add_parsers",
    "format_cluster",
    "parse_size",
    "probe_address",
]

#: Default deadline for reaching a Ray cluster (``--connect-timeout``).
CONNECT_TIMEOUT_S = 30.0
# A job id names a directory on its node: no separators, no leading dot.
_JOB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")

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
    {
        "--gpu-memory",
        "--perf",
        "--priority",
        "--address",
        "--gpu",
        "--name",
        "--sim-gpus",
        "--sim-gpu-memory",
        "--connect-timeout",
        "--workers",
        "--ps",
    }
)


def parse_size(text: str) -> int:
    """Bytes from ``4GiB``, ``512MiB``, ``1.5G``, ``1000000`` (binary units; KB/MB/GB decimal)."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in _UNITS:
        raise ConfigError(f"{text!r} is not a size: write e.g. 4GiB, 512MiB or a number of bytes")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def _size(flag: str, text: str, minimum: int) -> int:
    """``text`` (the value of ``flag``) in bytes, at least ``minimum``; ConfigError naming the flag."""
    if text.strip().startswith("-"):
        raise ConfigError(f"{flag} {text}: a size cannot be negative; write e.g. 4GiB or 512MiB")
    try:
        size = parse_size(text)
    except ConfigError:
        raise ConfigError(
            f"{flag} {text!r} is not a size: write e.g. 4GiB, 512MiB or a number of bytes"
        ) from None
    if size < minimum:
        raise ConfigError(f"{flag} {text}: must be at least {minimum} bytes")
    return size


def _check_timeout(args: argparse.Namespace) -> float:
    seconds = args.connect_timeout
    if not (math.isfinite(seconds) and seconds > 0):
        raise ConfigError(f"--connect-timeout {seconds}: give a positive number of seconds")
    return float(seconds)


def _check_submit(args: argparse.Namespace) -> dict[str, Any]:
    """The submit arguments, checked before Ray starts; ConfigError naming the flag at fault."""
    from .job import GUARANTEED

    gpu_memory = _size("--gpu-memory", args.gpu_memory, 1)
    if not 0 <= args.perf <= 100:
        raise ConfigError(f"--perf {args.perf}: perfControl is a percentage, 0..100")
    if args.name is not None and not _JOB_ID.match(args.name):
        raise ConfigError(
            f"--name {args.name!r}: a job id is 1-128 letters, digits, '.', '_' or '-', not starting with '.' or '-'"
        )
    if args.detach and args.address is None:
        raise ConfigError("--detach needs --address: a local Ray started by submit ends with it")
    distributed = args.ps is not None or args.workers is not None
    if distributed and (args.workers is None or args.workers < 1):
        raise ConfigError(f"--workers {args.workers}: a distributed job (--ps) needs 1 worker or more")
    if distributed and args.ps is not None and args.ps < 0:
        raise ConfigError(f"--ps {args.ps}: give 0 parameter servers or more")
    if distributed and args.detach:
        raise ConfigError("--detach: a distributed job (--ps/--workers) is waited for; leave out --detach")
    if args.spread and not distributed:
        raise ConfigError("--spread places the tasks of a distributed job: give --workers (and --ps)")
    sim_gpu_mib = 0
    if args.address is None:
        from .ray_support import local_gpus

        # --sim-gpus left out: none where this machine has real GPUs, else one (ray_support.connect)
        real = bool(local_gpus()) if args.sim_gpus is None or args.sim_gpus < 1 else False
        if args.sim_gpus is not None and args.sim_gpus < (0 if real else 1):
            raise ConfigError(
                f"--sim-gpus {args.sim_gpus}: a local Ray needs at least 1 simulated GPU on a machine without real GPUs"
            )
        sim_gpu_memory = _size("--sim-gpu-memory", args.sim_gpu_memory, 1 << 20)
        sim_gpu_mib = sim_gpu_memory >> 20
        if not real and args.priority == GUARANTEED and gpu_memory > sim_gpu_mib << 20:
            raise ConfigError(
                f"--gpu-memory {args.gpu_memory} is more than a simulated GPU of the local Ray has "
                f"(--sim-gpu-memory {args.sim_gpu_memory}); ask less or give the GPUs more"
            )
    if not os.path.isfile(args.script):
        raise ConfigError(f"{args.script}: no such file; give the path of a Python script")
    timeout = _check_timeout(args)
    return {"gpu_memory": gpu_memory, "sim_gpu_mib": sim_gpu_mib, "timeout": timeout}


def probe_address(address: str, timeout: float) -> None:
    """Raise ConnectionError naming ``address`` when nothing accepts a TCP connection there
    (``host:port`` or ``ray://host:port``; "auto" and other forms are left to Ray)."""
    m = re.fullmatch(r"(?:ray://)?\[?([^\[\]/]+?)\]?:(\d{1,5})/?", address.strip())
    if m is None:
        return
    host, port = m.group(1), int(m.group(2))
    try:
        with socket.create_connection((host, port), timeout=min(timeout, 5.0)):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConnectionError(
            f"no Ray cluster answers at {address} ({reason}); check the address, or start one there "
            "with `ray start --head`"
        ) from None


@contextlib.contextmanager
def _deadline(command: str, address: str | None, seconds: float) -> Iterator[None]:
    """End the process (exit code 2, an error naming the address) if the block takes longer than
    ``seconds``: Ray's connection calls block in native code that no Python exception reaches."""

    def expire() -> None:
        print(
            f"antcolony {command}: no answer from the Ray cluster at {address or 'the local Ray'} within "
            f"{seconds:g} s; check the address (`ray status` on its head node) or raise --connect-timeout",
            file=sys.stderr,
            flush=True,
        )
        os._exit(2)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _cmd_submit(args: argparse.Namespace) -> int:
    from . import client
    from .ray_support import connect

    try:
        checked = _check_submit(args)
        if args.address is not None:
            probe_address(args.address, checked["timeout"])
        # Starting a local Ray takes seconds more than reaching one: its deadline is looser.
        limit = checked["timeout"] if args.address is not None else max(checked["timeout"], 120.0)
        with _deadline("submit", args.address, limit):
            ray = connect(args.address, sim_gpus=args.sim_gpus, sim_gpu_mib=checked["sim_gpu_mib"])
        if args.workers is not None:  # placing its tasks may wait for shares: no connection deadline
            return _submit_distributed(ray, args, checked)
        with _deadline("submit", args.address, limit):
            job_id, done = client.submit(
                args.script,
                args.args,
                gpu_memory=checked["gpu_memory"],
                perf=args.perf,
                priority=args.priority,
                gpu=args.gpu,
                job_id=args.name,
                detach=args.detach,
            )
    except (ConfigError, ConnectionError) as exc:
        print(f"antcolony submit: {exc}", file=sys.stderr)
        return 2
    print(f"antcolony submit: job {job_id} submitted", file=sys.stderr)
    if args.detach:
        return 0
    try:
        code = int(ray.get(done))
    except KeyboardInterrupt:
        client.stop(job_id)
        code = 130
    if not args.keep_files:
        _remove_job_files(ray, job_id, local=args.address is None)
    return code


def _submit_distributed(ray: Any, args: argparse.Namespace, checked: dict[str, Any]) -> int:
    """Start the ps and worker tasks (cluster/task_group.py), wait for the workers, stop the rest."""
    from . import client

    try:
        job_id, group = client.submit_distributed(
            args.script,
            args.args,
            ps=args.ps or 0,
            workers=args.workers,
            gpu_memory=checked["gpu_memory"],
            perf=args.perf,
            priority=args.priority,
            gpu=args.gpu,
            job_id=args.name,
            spread=args.spread,
        )
    except ConfigError as exc:
        print(f"antcolony submit: {exc}", file=sys.stderr)
        return 2
    print(f"antcolony submit: job {job_id} submitted: {json.dumps(group.cluster)}", file=sys.stderr)
    try:
        code = group.wait()
    except KeyboardInterrupt:
        group.stop()
        code = 130
    if not args.keep_files:
        for name in group.task_ids:
            _remove_job_files(ray, name, local=False)
        if args.address is None:
            _remove_job_files(ray, job_id, local=True)
    return code


def _remove_job_files(ray: Any, job_id: str, *, local: bool) -> None:
    """Remove the ended job's directory where it is on this machine; for a local Ray (which ends
    with this command), its node's whole directory once Ray is shut down."""
    from .ray_support import cluster_dir

    try:
        root = cluster_dir()
    except OSError as exc:  # an unusable runtime directory: nothing of ours is there
        logger.warning("cannot look for job %s's files: %s", job_id, exc)
        return
    doomed = list(root.glob(f"*/jobs/{job_id}"))
    if local:
        node_id = ray.get_runtime_context().get_node_id()
        ray.shutdown()
        doomed = [root / node_id[:16]]
    for path in doomed:
        shutil.rmtree(path, ignore_errors=True)


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
        timeout = _check_timeout(args)
        if args.action == "status" and args.decisions < 0:
            raise ConfigError(f"--decisions {args.decisions}: give 0 or more")
        if args.address not in (None, "auto"):
            probe_address(args.address, timeout)
        # The connection, then the command's calls (each bounded by its own 10 s timeout).
        with _deadline(f"cluster {args.action}", args.address, timeout + 30.0):
            with _deadline(f"cluster {args.action}", args.address, timeout):
                connect(args.address)
            if args.action == "status":
                print(format_cluster(client.cluster_status(), args.decisions), file=out)
                return 0
            stopped = client.stop(args.job)
    except (ConfigError, ConnectionError) as exc:
        print(f"antcolony cluster: {exc}", file=sys.stderr)
        return 2
    if stopped:
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
    submit.add_argument(
        "--keep-files", action="store_true", help="keep a local job's files (config, status) when it ends"
    )
    submit.add_argument(
        "--connect-timeout",
        type=float,
        default=CONNECT_TIMEOUT_S,
        help=f"seconds to reach the Ray cluster before giving up (default {CONNECT_TIMEOUT_S:g})",
    )
    submit.add_argument(
        "--workers",
        type=int,
        default=None,
        help="run the script as a distributed TF1 job of this many worker tasks (TF_CONFIG set for each)",
    )
    submit.add_argument("--ps", type=int, default=None, help="parameter server tasks of a distributed job")
    submit.add_argument(
        "--spread",
        action="store_true",
        help="place a distributed job's tasks on different nodes where possible",
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
        p.add_argument(
            "--connect-timeout",
            type=float,
            default=CONNECT_TIMEOUT_S,
            help=f"seconds to reach the Ray cluster before giving up (default {CONNECT_TIMEOUT_S:g})",
        )
    cluster.set_defaults(func=_cmd_cluster)
