"""Importing Ray lazily, connecting to a cluster on loopback when asked, and the cluster's names.

Ray is an optional extra; every cluster entry point calls ``require_ray`` first, which says how
to install it when it is missing.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from antcolony.errors import ConfigError

logger = logging.getLogger(__name__)

NAMESPACE = "antcolony"
SIM_GPU_PREFIX = "sim_gpu_"  # a node resource per simulated GPU: {"sim_gpu_0": 1}
SIM_GPU_MIB = "sim_gpu_mib"  # a node resource giving the memory (MiB) of each of its simulated GPUs
REAL_GPU = "gpu"  # what a job names to run on a real GPU: it asks Ray's own num_gpus
REAL_GPU_PREFIX = "gpu_"  # a real GPU of a node, by the id Ray assigns: gpu_0, gpu_1, ...
REAL_GPU_MIB = "gpu_mib"  # a node resource giving the memory (MiB) of each of its real GPUs
# "1": a node's Ray GPUs are stand-ins (tests without CUDA): jobs are placed through num_gpus and
# learn the GPU index Ray assigned, but run on a simulated GPU of gpu_mib MiB.
STANDIN_GPUS_ENV = "ANTCOLONY_STANDIN_GPUS"
CLUSTER_DIR_ENV = "ANTCOLONY_CLUSTER_DIR"
SINGLE_MACHINE_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def require_ray() -> ModuleType:
    """The ``ray`` module, or a ConfigError saying how to install it."""
    # Usage statistics would be sent over the network; antcolony never asks for that.
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(
            "antcolony's cluster commands need Ray, which is not installed: "
            "pip install 'antcolony[ray]' (or pip install 'ray>=2.9')"
        ) from exc
    return ray


def loopback_only() -> None:
    """Keep a one-machine Ray on 127.0.0.1. Without this, Ray binds its gRPC servers to all
    interfaces and rewrites a loopback address to the machine's outward one before connecting;
    this setting (Ray's switch for single-machine clusters, read when ray is imported and by the
    processes it starts) makes it bind and connect on loopback only. Call before importing ray."""
    if "ray" in sys.modules and os.environ.get(SINGLE_MACHINE_ENV) != "0":
        logger.warning(
            "ray was imported before %s=0 was set: its servers may listen on every interface; "
            "set it in the environment first",
            SINGLE_MACHINE_ENV,
        )
    os.environ.setdefault(SINGLE_MACHINE_ENV, "0")


def _is_loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def connect(
    address: str | None,
    *,
    sim_gpus: int | None = 0,
    sim_gpu_mib: int = 0,
    num_cpus: int | None = None,
    log_to_driver: bool = True,
) -> Any:
    """Connect this process to Ray: to ``address`` ("auto": the cluster ``ray start`` left on this
    machine), or, with None, start a local Ray on 127.0.0.1 with ``sim_gpus`` simulated GPUs (None:
    none where this machine has real GPUs, which Ray counts itself and NVML sizes, else one).
    ``log_to_driver``: print the jobs' output here (Ray's option of that name)."""
    if address is None or _is_loopback(address):
        loopback_only()
    ray = require_ray()
    if ray.is_initialized():
        return ray
    if address is None:
        real = local_gpus()
        if sim_gpus is None:
            sim_gpus = 0 if real else 1
        resources = {f"{SIM_GPU_PREFIX}{i}": 1.0 for i in range(sim_gpus)}
        if sim_gpus:
            resources[SIM_GPU_MIB] = float(sim_gpu_mib)
        mib = min(g["total"] for g in real) >> 20 if real else _cuda_gpu_mib()
        if mib:  # Ray counts the GPUs as num_gpus itself; their size lets a job ask a memory share
            resources[REAL_GPU_MIB] = float(mib)
        ray.init(
            # "local": a new Ray even where RAY_ADDRESS or /tmp/ray/ray_current_cluster names one
            # (ray.init's default joins it, and then refuses num_cpus and resources)
            address="local",
            namespace=NAMESPACE,
            _node_ip_address="127.0.0.1",
            include_dashboard=False,
            num_cpus=num_cpus,
            resources=resources,
            log_to_driver=log_to_driver,
        )
    else:
        ray.init(address=address, namespace=NAMESPACE, log_to_driver=log_to_driver)
    return ray


def cluster_dir() -> Path:
    """Where coordinators keep their nodes' job files (env ANTCOLONY_CLUSTER_DIR, else under the
    antcolony runtime directory)."""
    env = os.environ.get(CLUSTER_DIR_ENV, "").strip()
    if env:
        path = Path(env)
    else:
        from antcolony.devices.sim_ledger import runtime_dir

        path = runtime_dir() / "cluster"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def coordinator_name(node_id: str) -> str:
    return f"antcolony-coordinator-{node_id}"


def job_actor_name(job_id: str) -> str:
    return f"antcolony-job-{job_id}"


def node_sim_gpus(node: dict[str, Any]) -> dict[str, int]:
    """A Ray node's simulated GPUs (resource name -> memory in bytes), from ``ray.nodes()``."""
    resources = node.get("Resources", {})
    mib = int(resources.get(SIM_GPU_MIB, 0))
    return {
        name: mib << 20
        for name in sorted(resources)
        if name.startswith(SIM_GPU_PREFIX) and name[len(SIM_GPU_PREFIX) :].isdigit()
    }


def node_real_gpus(node: dict[str, Any]) -> dict[str, int]:
    """A Ray node's real GPUs (``gpu_<Ray's id>`` -> memory in bytes), from ``ray.nodes()``: its
    ``GPU`` count, each of ``gpu_mib`` MiB (none when the node does not advertise their size)."""
    resources = node.get("Resources", {})
    mib = int(resources.get(REAL_GPU_MIB, 0))
    return {f"{REAL_GPU_PREFIX}{i}": mib << 20 for i in range(int(resources.get("GPU", 0)))} if mib else {}


def standin_gpus() -> bool:
    return os.environ.get(STANDIN_GPUS_ENV, "").strip() == "1"


def _cuda_gpu_mib() -> int:
    """The smallest GPU's memory (MiB) as CUDA reports it, where NVML could not; 0 without CUDA.
    (Ray finds the GPUs without nvidia-ml-py; their size is asked of CuPy then.)"""
    try:
        import cupy

        count = cupy.cuda.runtime.getDeviceCount()
        return (
            min(int(cupy.cuda.runtime.getDeviceProperties(i)["totalGlobalMem"]) for i in range(count)) >> 20
        )
    except Exception:  # no CuPy, no driver, no device: no real GPU to size
        return 0


def local_gpus() -> list[dict[str, Any]]:
    """This machine's GPUs from NVML: index, name, bus_id, total and used bytes; [] without NVML
    (module ``pynvml`` of the nvidia-ml-py distribution) or without a GPU."""
    try:
        import pynvml
    except ImportError:
        return []
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # NVMLError: no driver, no device
        logger.debug("NVML unavailable: %s", exc)
        return []
    try:
        out = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
            name = pynvml.nvmlDeviceGetName(handle)
            bus = pynvml.nvmlDeviceGetPciInfo(handle).busId
            out.append(
                {
                    "index": i,
                    "name": name.decode() if isinstance(name, bytes) else str(name),
                    "bus_id": (bus.decode() if isinstance(bus, bytes) else str(bus)).lower(),
                    "total": int(mem.total),
                    "used": int(mem.used),
                }
            )
        return out
    except Exception as exc:
        logger.warning("NVML failed while listing GPUs: %s", exc)
        return []
    finally:
        pynvml.nvmlShutdown()


# --- the cluster's record of where jobs run --------------------------------------------------
# A node's coordinator and its files go with the node; the record of which jobs it ran must not,
# or ``antcolony cluster status`` could not say which jobs a departed node took with it. The
# record lives in Ray's GCS key-value store (on the head node; it outlives any other node). Ray
# exposes that store only through ``ray.experimental.internal_kv`` (the underscore functions its
# own libraries use); these three functions are the one place that names it.
_JOB_KEY = "job/"


def _kv() -> Any:
    require_ray()
    from ray.experimental import internal_kv

    return internal_kv


def record_job(spec: dict[str, Any]) -> None:
    """Note that job ``spec["job_id"]`` runs on node ``spec["node_id"]`` (its coordinator calls this)."""
    keep = {k: spec[k] for k in ("job_id", "node_id", "gpu", "priority", "gpu_memory", "perf") if k in spec}
    _kv()._internal_kv_put(_JOB_KEY + spec["job_id"], json.dumps(keep), overwrite=True, namespace=NAMESPACE)


def forget_job(job_id: str) -> None:
    """The job ended (or was stopped, or its loss was acknowledged): drop its record."""
    _kv()._internal_kv_del(_JOB_KEY + job_id, namespace=NAMESPACE)


def recorded_jobs() -> dict[str, dict[str, Any]]:
    """Every job recorded as running, by job id: ``job_id, node_id, gpu, priority, gpu_memory, perf``."""
    kv = _kv()
    jobs = {}
    for key in kv._internal_kv_list(_JOB_KEY, namespace=NAMESPACE):
        raw = kv._internal_kv_get(key, namespace=NAMESPACE)
        try:
            body = json.loads(raw) if raw is not None else None
        except ValueError:
            body = None
        if isinstance(body, dict) and "job_id" in body:
            jobs[body["job_id"]] = body
    return jobs
