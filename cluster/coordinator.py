"""The coordinator of one Ray node: owns its jobs' config files, reads their status files, and
applies ``policy.decide`` at every poll, writing the configs that change.

It runs as a named, detached Ray actor pinned to its node (``NodeAffinitySchedulingStrategy``),
so the files it owns are on the node's own disk, where the jobs' antcolony sessions follow them.
Per node, under ``cluster_dir()/<node id>``: ``gpus/<gpu>/`` is the runtime directory (the
simulated GPU's memory ledger) of every job on that GPU, and ``jobs/<job>/`` holds a job's
``spec.json``, ``config.json`` (written only here) and ``status.json`` (written only by the job).
A restarted coordinator rebuilds its jobs from those files (``spec.json`` names the job's pid).
Each job is also recorded, with its node, in the cluster's key-value store (``record_job``), which
outlives the node: when a node leaves, ``antcolony cluster status`` lists its jobs as lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from antcolony.config.atomic_file import write_file_atomic

from .cpu_priority import GUARANTEED_NICE, set_cpu_priority
from .policy import Decision, JobView, PolicySettings, PolicyState, decide, step_time_us
from .ray_support import (
    REAL_GPU_PREFIX,
    cluster_dir,
    forget_job,
    job_actor_name,
    local_gpus,
    node_real_gpus,
    node_sim_gpus,
    record_job,
    require_ray,
    standin_gpus,
)

logger = logging.getLogger(__name__)

SIM_BUS = "01:00.0"  # a job sees its simulated GPU as GPU 0, as CUDA_VISIBLE_DEVICES would
REAL_KEY = "gpu:0"  # a job on a real GPU sees only the one Ray assigned it, as its GPU 0


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_json(path: Path) -> tuple[dict[str, Any], int]:
    """A JSON file's body and mtime (ns); ({}, 0) when absent or not (yet) whole."""
    try:
        mtime = path.stat().st_mtime_ns
        body = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}, 0
    return (body, mtime) if isinstance(body, dict) else ({}, 0)


class Coordinator:
    """See the module docstring. Wrapped by ``ray.remote`` in ``ensure_coordinator``."""

    def __init__(
        self, node_id: str, poll_interval: float = 0.25, settings: PolicySettings | None = None
    ) -> None:
        ray = require_ray()
        self.node_id = node_id
        self.poll_interval = poll_interval
        self.settings = settings or PolicySettings()
        self.dir = cluster_dir() / node_id[:16]
        node: dict[str, Any] = next((n for n in ray.nodes() if n["NodeID"] == node_id), {})
        self.gpus = node_sim_gpus(node) | node_real_gpus(node)
        self.standin = standin_gpus()
        self.jobs: dict[str, dict[str, Any]] = {}
        self.status: dict[str, dict[str, Any]] = {}
        self._graphs: dict[str, dict[str, float]] = {}  # job -> its graphs' first means (step_time_us)
        self.state = PolicyState()
        self.decisions: deque[dict[str, Any]] = deque(maxlen=1000)
        self._polls = 0
        # One lock for the node's state: the polling thread and the actor's methods (run in
        # worker threads through asyncio.to_thread, so the actor's event loop never waits on files).
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._rebuild()
        # Its polls pace the guaranteed jobs' neighbours: not at Ray's background niceness.
        set_cpu_priority(GUARANTEED_NICE)
        threading.Thread(target=self._poll, name="antcolony-coordinator-poll", daemon=True).start()

    # --- files -------------------------------------------------------------------------------

    def _job_dir(self, job_id: str) -> Path:
        return self.dir / "jobs" / job_id

    def _rebuild(self) -> None:
        """Adopt the jobs a previous coordinator of this node left whose processes still live."""
        for spec_path in sorted((self.dir / "jobs").glob("*/spec.json")):
            spec, _ = _read_json(spec_path)
            if not spec:
                continue
            if not _pid_alive(int(spec.get("pid", 0))):
                # Gone while no coordinator watched: forget it now, or a later process given the
                # same pid would be adopted in its place.
                spec_path.unlink(missing_ok=True)
                forget_job(spec["job_id"])
                self._log(
                    Decision(spec["job_id"], 0, 0, "left: its process exited while its coordinator was down")
                )
                continue
            config, _ = _read_json(spec_path.with_name("config.json"))
            self.jobs[spec["job_id"]] = spec
            info: dict[str, Any] = next(iter(config.get("gpuConfigInfo", {}).values()), {})
            self._log(
                Decision(
                    spec["job_id"],
                    int(info.get("maxDeviceMem", 0)),
                    int(config.get("perfControl", 100)),
                    "adopted by a restarted coordinator from its spec and config files",
                )
            )

    def _real(self, gpu: str) -> bool:
        """Whether jobs on ``gpu`` run on a real GPU (CUDA), not a simulated one."""
        return gpu.startswith(REAL_GPU_PREFIX) and not self.standin

    def _write_config(self, job_id: str, mem: int, perf: int) -> None:
        spec = self.jobs.get(job_id, {})
        key = REAL_KEY if self._real(str(spec.get("gpu", ""))) else SIM_BUS
        body = {"gpuConfigInfo": {key: {"maxDeviceMem": int(mem)}}, "perfControl": int(perf)}
        write_file_atomic(self._job_dir(job_id) / "config.json", json.dumps(body))

    def _log(self, d: Decision) -> None:
        logger.info("node %s: %s", self.node_id[:8], d.describe())
        self.decisions.append(
            {
                "t": time.time(),
                "job": d.job_id,
                "maxDeviceMem": d.mem,
                "perfControl": d.perf,
                "reason": d.reason,
            }
        )

    # --- the policy loop -----------------------------------------------------------------------

    def _views(self) -> list[JobView]:
        views = []
        now = time.monotonic()
        for job_id, spec in self.jobs.items():
            status, _ = _read_json(self._job_dir(job_id) / "status.json")
            # Every poll is a sample: the job rewrites its status file only when a figure moved,
            # so an unchanged file is the job still stepping at the same pace.
            seq = self._polls if status else 0
            gpu: dict[str, Any] = next(iter(status.get("gpuUsageInfo", {}).values()), {}) if status else {}
            step = step_time_us(status, self._graphs.setdefault(job_id, {})) if status else None
            # stepTime: what the policy judges (the job's repeating graphs; see step_time_us)
            self.status[job_id] = (
                {"miniBatchDuration": status.get("miniBatchDuration"), "stepTime": step, **gpu}
                if status
                else {}
            )
            views.append(
                JobView(
                    job_id,
                    spec["gpu"],
                    spec["priority"],
                    int(spec["gpu_memory"]),
                    int(spec["perf"]),
                    step,
                    seq,
                    int(gpu.get("hostFallbacks", 0) or 0),
                    now,
                )
            )
        return views

    def _step(self) -> None:
        """One poll: forget jobs whose process is gone, read status files, decide, write configs."""
        self._polls += 1
        for job_id, spec in list(self.jobs.items()):
            if spec.get("pid") and not _pid_alive(int(spec["pid"])):
                self._forget(job_id, "its process exited: its GPU share is free")
        self.state, decisions = decide(self.gpus, self._views(), self.state, self.settings)
        for d in decisions:
            self._write_config(d.job_id, d.mem, d.perf)
            self._log(d)

    def _forget(self, job_id: str, reason: str) -> None:
        spec = self.jobs.pop(job_id, None)
        self.status.pop(job_id, None)
        self._graphs.pop(job_id, None)
        if spec is not None:
            (self._job_dir(job_id) / "spec.json").unlink(missing_ok=True)
            forget_job(job_id)
            self._log(Decision(job_id, 0, 0, f"left: {reason}"))

    def _poll(self) -> None:
        """The polling thread: started with the actor, so a restarted coordinator governs the
        jobs it adopted at once."""
        while not self._closed.wait(self.poll_interval):
            try:
                with self._lock:
                    self._step()
            except Exception:  # a bad poll must not end the node's coordination
                logger.exception("node %s: coordinator poll failed", self.node_id[:8])

    async def _locked(self, fn: Any, *args: Any) -> Any:
        def call() -> Any:
            with self._lock:
                return fn(*args)

        return await asyncio.to_thread(call)

    # --- the actor's methods -------------------------------------------------------------------

    async def register(self, spec: dict[str, Any]) -> dict[str, str]:
        """A job started on this node: write its first config; return its environment."""
        return await self._locked(self._register, spec)

    def _register(self, spec: dict[str, Any]) -> dict[str, str]:
        gpu = spec["gpu"]
        if gpu not in self.gpus:
            raise ValueError(f"node {self.node_id[:8]} has no GPU {gpu!r} (it has {sorted(self.gpus)})")
        job_dir = self._job_dir(spec["job_id"])
        runtime = self.dir / "gpus" / gpu
        for d in (job_dir, runtime):
            d.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_file_atomic(job_dir / "spec.json", json.dumps(spec))
        record_job(spec)  # outlives this node: cluster status names the jobs a departed node took
        self.jobs[spec["job_id"]] = spec
        self._step()
        env = {
            "GPU_CONFIG_FILE": str(job_dir / "config.json"),
            "GPU_STATUS_FILE": str(job_dir / "status.json"),
            "ANTCOLONY_RUNTIME_DIR": str(runtime),
            "ANTCOLONY_STATISTICS_INTERVAL": str(self.poll_interval),
            "ANTCOLONY_CONFIG_POLL_INTERVAL": str(min(0.1, self.poll_interval)),
            "RAY_USAGE_STATS_ENABLED": "0",
        }
        if self._real(gpu):
            # CUDA numbers GPUs as NVML and Ray's ids do (by bus), not fastest first.
            env.update(ANTCOLONY_GPU_BACKEND="cuda", CUDA_DEVICE_ORDER="PCI_BUS_ID")
        else:
            env.update(
                ANTCOLONY_GPU_BACKEND="sim",
                ANTCOLONY_SIM_GPU_COUNT="1",
                ANTCOLONY_SIM_GPU_MEMORY=str(self.gpus[gpu]),
            )
        return env

    async def finished(self, job_id: str, code: int) -> None:
        await self._locked(self._forget, job_id, f"its script ended with exit code {code}")

    async def stop(self, job_id: str) -> bool:
        """Kill the job's actor (its process); False when this node has no such job."""
        if job_id not in self.jobs:
            return False
        ray = require_ray()
        with contextlib.suppress(ValueError):  # the actor is already gone
            ray.kill(ray.get_actor(job_actor_name(job_id)))
        await self._locked(self._forget, job_id, "stopped by antcolony cluster stop")
        return True

    async def report(self) -> dict[str, Any]:
        return await self._locked(self._report)

    def _report(self) -> dict[str, Any]:
        jobs = []
        for job_id, spec in self.jobs.items():
            st = self.state.jobs.get(job_id)
            jobs.append(
                {
                    **spec,
                    "config": {"maxDeviceMem": st.mem, "perfControl": st.perf} if st else {},
                    "baseline_us": st.baseline_us if st else None,
                    "status": self.status.get(job_id, {}),
                    "dir": str(self._job_dir(job_id)),
                }
            )
        return {
            "node_id": self.node_id,
            "dir": str(self.dir),
            "gpus": self.gpus,
            "gpu_info": self._gpu_info(),
            "jobs": jobs,
            "decisions": list(self.decisions),
        }

    def _gpu_info(self) -> dict[str, dict[str, Any]]:
        """The node's real GPUs as NVML sees them now (name, bus id, total and used bytes), by the
        name the coordinator governs them under; {} without NVML or real GPUs."""
        if not any(g.startswith(REAL_GPU_PREFIX) for g in self.gpus):
            return {}
        return {f"{REAL_GPU_PREFIX}{g['index']}": g for g in local_gpus()}


def ensure_coordinator(node_id: str, poll_interval: float = 0.25) -> Any:
    """The coordinator actor of ``node_id``, started (pinned to that node) when there is none."""
    ray = require_ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from .ray_support import coordinator_name

    actor = ray.remote(Coordinator).options(
        name=coordinator_name(node_id),
        get_if_exists=True,
        lifetime="detached",
        num_cpus=0,
        max_restarts=-1,
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
    )
    return actor.remote(node_id, poll_interval)
