"""A job: one script run in its own Ray actor process, on the GPU share it was placed with.

The actor asks its node's coordinator to register it (the coordinator writes the job's first
config file and says where its files are), puts those paths in its process environment, so the
script's antcolony sessions follow them as any AntMan job follows GPU_CONFIG_FILE and
GPU_STATUS_FILE, and runs the script as ``antcolony run`` would. Killing the actor kills the job's
process; the simulated GPU's ledger then reclaims its memory and Ray its resource share. A
detached job's actor starts its script itself and ends with it; otherwise the submitter, which
waits for the exit code, starts it and ends it (the CLI by exiting).

Its process's CPU priority follows its GPU priority. Ray starts worker processes at niceness 15,
so a guaranteed job would yield the host to every ordinary process; it runs at ``GUARANTEED_NICE``
(0), an opportunistic one at ``OPPORTUNISTIC_NICE`` (19): perfControl bounds an opportunistic job's
GPU time, not its host work (Python, launches, feeds), which competes with the guaranteed jobs' on
a node's shared cores. Measured with scripts/cluster_cpu_probe.py on simulated GPUs (whose kernels
run on the host), beside an opportunistic job at perfControl 20/50/100 the guaranteed job's median
step rose from 8.2 ms to 9.4/11.5/12.4 ms at equal niceness, and stayed at 8.5-10.0 ms with the
opportunistic job at nice 19, which still ran 102 steps/s at perfControl 100 (113 at equal
niceness).
"""

from __future__ import annotations

import os
import runpy
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

from .coordinator import ensure_coordinator
from .cpu_priority import GUARANTEED_NICE, OPPORTUNISTIC_NICE, set_cpu_priority
from .ray_support import REAL_GPU, REAL_GPU_PREFIX, require_ray

GUARANTEED = "guaranteed"
OPPORTUNISTIC = "opportunistic"


@dataclass(frozen=True)
class JobSpec:
    job_id: str
    script: str
    args: list[str] = field(default_factory=list)
    gpu: str = "sim_gpu_0"
    gpu_memory: int = 0
    perf: int = 100
    priority: str = GUARANTEED
    detach: bool = False  # nobody waits for the exit code: the actor ends with its script


class JobActor:
    """Wrapped by ``ray.remote`` in ``client.submit``; ``run`` runs the script to its end."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = JobSpec(**spec)
        if self.spec.detach:
            # The submitter of a detached job exits at once: a ``run`` task it sent would be lost
            # with it while the actor still waits for its share or starts (seen with ``ray start``
            # and ``antcolony submit --detach``: the script never ran). The actor sends its own,
            # queued behind this constructor, so the job starts whenever it is placed.
            ray = require_ray()
            ray.get_runtime_context().current_actor.run.remote()

    def run(self) -> int:
        ray = require_ray()
        node_id = ray.get_runtime_context().get_node_id()
        coordinator = ensure_coordinator(node_id)
        spec = {**asdict(self.spec), "pid": os.getpid(), "node_id": node_id}
        if self.spec.gpu == REAL_GPU:
            # Ray placed it on one of the node's GPUs (a fraction of num_gpus) and made that the
            # only one its process sees: the coordinator governs it as that GPU.
            ids = ray.get_gpu_ids()
            spec["gpu"] = f"{REAL_GPU_PREFIX}{ids[0]}"
            spec["cuda_visible_devices"] = os.environ.get("CUDA_VISIBLE_DEVICES")
        os.environ.update(ray.get(coordinator.register.remote(spec)))
        set_cpu_priority(OPPORTUNISTIC_NICE if self.spec.priority == OPPORTUNISTIC else GUARANTEED_NICE)
        code = 1  # the script raised: the exception reaches the submitter, the share is freed
        try:
            code = _run_script(self.spec.script, self.spec.args)
        finally:
            ray.get(coordinator.finished.remote(self.spec.job_id, code))
            if self.spec.detach:
                # A detached actor would outlive its script and hold its GPU share for ever.
                ray.actor.exit_actor()
        return code

    def pid(self) -> int:
        return os.getpid()


def _run_script(script: str, args: list[str]) -> int:
    """Run ``script`` as ``antcolony run`` does (as __main__, its directory first on sys.path)."""
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    return 0
