"""The driver's side: submit a job, read the cluster's state, stop a job.

Placement is Ray's: a job asks a fraction of a GPU, where a guaranteed job's fraction is the
share of the GPU's memory it asks (so guaranteed jobs never over-commit a GPU, and one that does
not fit waits until a share is freed) and an opportunistic job asks a token
``OPPORTUNISTIC_SHARE`` (it uses what is left and is squeezed by the coordinator when needed).
On a simulated GPU the fraction is of its custom resource (``{"sim_gpu_0": fraction}``); on a
real one (``gpu="gpu"``) it is Ray's own ``num_gpus``, and Ray picks the GPU and sets the job's
CUDA_VISIBLE_DEVICES.
"""

from __future__ import annotations

import logging
import os
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any

from antcolony.errors import ConfigError

from .job import GUARANTEED, OPPORTUNISTIC, JobActor, JobSpec
from .ray_support import (
    REAL_GPU,
    coordinator_name,
    forget_job,
    job_actor_name,
    node_real_gpus,
    node_sim_gpus,
    recorded_jobs,
    require_ray,
)

logger = logging.getLogger(__name__)

OPPORTUNISTIC_SHARE = 0.01


def _gpus(ray: Any) -> dict[str, int]:
    """Every simulated GPU resource name in the cluster and its memory (largest where they
    differ), and ``REAL_GPU`` when some node has real GPUs (memory: the smallest of them, so a
    guaranteed job's share fits wherever Ray places it)."""
    gpus: dict[str, int] = {}
    real: list[int] = []
    for node in ray.nodes():
        if node.get("Alive"):
            for name, mem in node_sim_gpus(node).items():
                gpus[name] = max(gpus.get(name, 0), mem)
            real += node_real_gpus(node).values()
    if real:
        gpus[REAL_GPU] = min(real)
    return gpus


def gpu_memory(gpu: str) -> int:
    """The memory (bytes) of the cluster's GPU ``gpu`` (a simulated GPU resource, or ``REAL_GPU``)."""
    gpus = _gpus(require_ray())
    if gpu not in gpus:
        raise ConfigError(f"the cluster has no GPU {gpu!r}; it has {', '.join(sorted(gpus)) or 'none'}")
    return gpus[gpu]


def _choose_gpu(ray: Any, gpu: str | None, gpu_memory: int, priority: str) -> tuple[str, float]:
    gpus = _gpus(ray)
    if not gpus:
        raise ConfigError(
            "the Ray cluster has no GPU: start its nodes with real GPUs and their size, "
            "--num-gpus 1 --resources '{\"gpu_mib\": 81920}', or with simulated ones, "
            '--resources \'{"sim_gpu_0": 1, "sim_gpu_mib": 1024}\''
        )
    if gpu is not None and gpu not in gpus:
        raise ConfigError(f"--gpu {gpu}: the cluster has no such GPU; it has {', '.join(sorted(gpus))}")
    if gpu is None:
        # the freest simulated GPU where the cluster has some (as before real GPUs joined), else a
        # real one (Ray picks which)
        available = ray.available_resources()
        sims = sorted(name for name in gpus if name != REAL_GPU)
        gpu = max(sims, key=lambda name: available.get(name, 0.0)) if sims else REAL_GPU
    if priority == OPPORTUNISTIC:
        return gpu, OPPORTUNISTIC_SHARE
    if gpu_memory <= 0 or gpu_memory > gpus[gpu]:
        raise ConfigError(
            f"--gpu-memory {gpu_memory} bytes: a guaranteed job asks between 1 byte and its GPU's "
            f"{gpus[gpu]} bytes ({gpu})"
        )
    return gpu, round(gpu_memory / gpus[gpu], 4)


def _check_asks(priority: str, perf: int) -> None:
    if priority not in (GUARANTEED, OPPORTUNISTIC):
        raise ConfigError(f"--priority {priority!r}: use guaranteed or opportunistic")
    if not 0 <= perf <= 100:
        raise ConfigError(f"--perf {perf}: perfControl is a percentage, 0..100")


def submit(
    script: str,
    args: list[str] | None = None,
    *,
    gpu_memory: int,
    perf: int = 100,
    priority: str = GUARANTEED,
    gpu: str | None = None,
    job_id: str | None = None,
    detach: bool = False,
) -> tuple[str, Any]:
    """Start ``script`` as a job (a Ray actor); returns its id and the ObjectRef of its exit code
    (None for a detached job: it starts and ends by itself, nobody waits for it). The caller must
    be connected (``ray_support.connect``)."""
    _check_asks(priority, perf)
    if not os.path.isfile(script):
        raise ConfigError(f"{script}: no such file; give the path of a Python script")
    ray = require_ray()
    gpu, share = _choose_gpu(ray, gpu, gpu_memory, priority)
    job_id = job_id or f"{Path(script).stem}-{uuid.uuid4().hex[:6]}"
    spec = JobSpec(job_id, os.path.abspath(script), list(args or []), gpu, gpu_memory, perf, priority, detach)
    options: dict[str, Any] = {"name": job_actor_name(job_id), "num_cpus": 0}
    if gpu == REAL_GPU:
        options["num_gpus"] = share  # Ray picks the GPU and sets CUDA_VISIBLE_DEVICES
    else:
        options["resources"] = {gpu: share}
    if detach:
        options["lifetime"] = "detached"
    actor = ray.remote(JobActor).options(**options).remote(asdict(spec))
    logger.info("submitted job %s: %s on %s (share %.2f), %s", job_id, script, gpu, share, priority)
    return job_id, None if detach else actor.run.remote()


def _coordinators(ray: Any) -> tuple[list[Any], list[dict[str, Any]]]:
    """(coordinator handle or None, node) for every node the cluster has known."""
    handles, nodes = [], []
    for node in ray.nodes():
        try:
            handle = ray.get_actor(coordinator_name(node["NodeID"])) if node.get("Alive") else None
        except ValueError:
            handle = None  # no job ever ran there
        handles.append(handle)
        nodes.append(node)
    return handles, nodes


def cluster_status(timeout: float = 10.0) -> list[dict[str, Any]]:
    """Per node: its id, whether it is alive, its simulated GPUs and, from its coordinator, its
    jobs (asked and reached limits, perfControl, step time, host fallbacks) and decisions. A node
    that left has, instead, ``lost_jobs``: the jobs recorded as running there when it went."""
    ray = require_ray()
    handles, nodes = _coordinators(ray)
    refs = [h.report.remote() if h is not None else None for h in handles]
    records = recorded_jobs()
    out = []
    for ref, node in zip(refs, nodes):
        report: dict[str, Any] = {"jobs": [], "decisions": []}
        if ref is not None:
            try:
                report = ray.get(ref, timeout=timeout)
            except Exception as exc:
                report["error"] = (
                    f"its coordinator did not answer ({type(exc).__name__}); it restarts by itself"
                )
        alive = bool(node.get("Alive"))
        lost = (
            []
            if alive
            else sorted(
                (r for r in records.values() if r.get("node_id") == node["NodeID"]), key=lambda r: r["job_id"]
            )
        )
        out.append(
            {
                **report,
                "node_id": node["NodeID"],
                "alive": alive,
                "lost_jobs": lost,
                "address": node.get("NodeManagerAddress"),
                "gpus": node_sim_gpus(node) | node_real_gpus(node),
            }
        )
    # Ray forgets dead nodes after a while; their jobs are still reported lost.
    known = {node["NodeID"] for node in nodes}
    for node_id in sorted({str(r["node_id"]) for r in records.values() if r.get("node_id")} - known):
        lost = sorted((r for r in records.values() if r.get("node_id") == node_id), key=lambda r: r["job_id"])
        out.append(
            {
                "node_id": node_id,
                "alive": False,
                "lost_jobs": lost,
                "address": None,
                "gpus": {},
                "jobs": [],
                "decisions": [],
            }
        )
    return out


def stop(job_id: str, timeout: float = 10.0) -> bool:
    """Stop (kill) a job wherever it runs; for a job lost with its node, forget it (cluster status
    lists it no more). False when the cluster knows no such job."""
    ray = require_ray()
    handles, _ = _coordinators(ray)
    stopped = ray.get([h.stop.remote(job_id) for h in handles if h is not None], timeout=timeout)
    if any(stopped):
        return True
    try:  # placed but not yet registered (waiting for a share): kill its actor
        ray.kill(ray.get_actor(job_actor_name(job_id)))
        return True
    except ValueError:
        pass
    if job_id in recorded_jobs():  # its node left with it
        forget_job(job_id)
        return True
    return False


def submit_distributed(
    script: str,
    args: list[str] | None = None,
    *,
    ps: int,
    workers: int,
    gpu_memory: int,
    perf: int = 100,
    priority: str = GUARANTEED,
    gpu: str | None = None,
    job_id: str | None = None,
    spread: bool = False,
) -> tuple[str, Any]:
    """Start ``script`` as a distributed TF1 job of ``ps`` parameter servers and ``workers``
    workers (``task_group``); returns its id and the ``TaskGroup``, whose ``wait`` gives the
    workers' exit code. Without ``gpu``, workers go to the simulated GPUs in turn, freest first
    (or to real GPUs, which Ray picks). The caller must be connected."""
    from .task_group import submit_tasks

    _check_asks(priority, perf)
    ray = require_ray()
    if gpu is None:
        available = ray.available_resources()
        sims = sorted((n for n in _gpus(ray) if n != REAL_GPU), key=lambda n: -available.get(n, 0.0))
        names = [sims[i % len(sims)] for i in range(workers)] if sims else [None] * workers
    else:
        names = [gpu] * workers
    gpus = [_choose_gpu(ray, name, gpu_memory, priority) for name in names]
    return submit_tasks(
        script,
        list(args or []),
        ps=ps,
        workers=workers,
        gpus=gpus,
        gpu_memory=gpu_memory,
        perf=perf,
        priority=priority,
        job_id=job_id,
        spread=spread,
    )
