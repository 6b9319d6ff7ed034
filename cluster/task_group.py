"""A distributed TF1 job on Ray: one script run as ``ps`` and ``worker`` tasks, each in its own
Ray actor process, as ``antcolony submit --ps N --workers M`` starts it.

TF1's between-graph replication runs the same script once per task; each reads its job name and
task index from flags or from ``TF_CONFIG`` and starts a ``tf.train.Server`` at its own address
of the cluster spec. So the addresses must be known before any task starts:

1. every task's actor is placed (a placement group, one bundle per task; ``spread`` asks Ray to
   put them on different nodes) and reserves a free port on its node's address, holding the
   socket open;
2. the driver assembles the cluster spec from those addresses and starts every task with
   ``TF_CONFIG`` (``{"cluster": {...}, "task": {"type": ..., "index": ...}}``) in its environment;
   in the script's arguments ``{job_name}``, ``{task_index}``, ``{ps_hosts}`` and
   ``{worker_hosts}`` become the task's own values (TF's mnist_replica-style flags);
3. the job ends when every worker has ended: ps tasks serve for ever (``server.join()``), so they
   are then stopped, and the placement group is removed.

Workers are GPU jobs like ``antcolony submit``'s (``JobActor``): each registers with its node's
coordinator, gets its config and status files and is governed like any other job. Parameter
servers hold variables on the host and ask for no GPU.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any

from antcolony.errors import ConfigError

from .job import GUARANTEED, JobActor, JobSpec, _run_script
from .ray_support import REAL_GPU, job_actor_name, require_ray

logger = logging.getLogger(__name__)

PS, WORKER = "ps", "worker"
# Ray refuses an empty bundle: each task's bundle holds this much CPU besides its GPU share.
TASK_CPU = 0.01
PLACEMENT_TIMEOUT_S = 120.0


def _reserve_port(host: str) -> socket.socket:
    """A socket bound to a free port of ``host``, held until the task starts (so no other task
    of this job is given the same port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((host, 0))  # not SO_REUSEADDR: the kernel then gives this port to no other bind
    return sock


def task_environment(cluster: dict[str, list[str]], job_name: str, index: int) -> str:
    """The ``TF_CONFIG`` value of task ``job_name:index`` of ``cluster``."""
    return json.dumps({"cluster": cluster, "task": {"type": job_name, "index": index}})


def task_arguments(args: list[str], cluster: dict[str, list[str]], job_name: str, index: int) -> list[str]:
    """``args`` with the placeholders of TF1 distributed scripts' flags replaced."""
    values = {
        "{job_name}": job_name,
        "{task_index}": str(index),
        "{ps_hosts}": ",".join(cluster.get(PS, [])),
        "{worker_hosts}": ",".join(cluster.get(WORKER, [])),
    }
    out = []
    for arg in args:
        for key, value in values.items():
            arg = arg.replace(key, value)
        out.append(arg)
    return out


class TaskActor(JobActor):
    """One task of a distributed job (wrapped by ``ray.remote`` in ``submit_tasks``): ``reserve``
    then ``start``. A worker runs as a GPU job (``JobActor.run``); a ps task runs its script
    directly, on the host."""

    def __init__(self, spec: dict[str, Any], job_name: str, index: int) -> None:
        super().__init__(spec)
        self.job_name, self.index = job_name, index
        self._sock: socket.socket | None = None

    def reserve(self) -> str:
        """This task's address, ``host:port``, on its node."""
        ray = require_ray()
        host = ray.util.get_node_ip_address()
        self._sock = _reserve_port(host)
        return f"{host}:{self._sock.getsockname()[1]}"

    def start(self, cluster: dict[str, list[str]]) -> int:
        """Run the script as this task of ``cluster``; its exit code."""
        os.environ["TF_CONFIG"] = task_environment(cluster, self.job_name, self.index)
        args = task_arguments(self.spec.args, cluster, self.job_name, self.index)
        self.spec = JobSpec(**{**asdict(self.spec), "args": args})
        if self._sock is not None:
            self._sock.close()  # the script's Server binds the port now
            self._sock = None
        if self.job_name == PS:
            return _run_script(self.spec.script, args)
        return self.run()


def _bundle(gpu: str | None, share: float) -> dict[str, float]:
    bundle = {"CPU": TASK_CPU}
    if gpu == REAL_GPU:
        bundle["GPU"] = share
    elif gpu is not None:
        bundle[gpu] = share
    return bundle


def submit_tasks(
    script: str,
    args: list[str],
    *,
    ps: int,
    workers: int,
    gpus: list[tuple[str, float]],
    gpu_memory: int,
    perf: int = 100,
    priority: str = GUARANTEED,
    job_id: str | None = None,
    spread: bool = False,
) -> tuple[str, TaskGroup]:
    """Start the tasks of a distributed job (``gpus``: each worker's GPU and share, as
    ``client`` chose them); returns the job id and the running group. The caller is connected."""
    if workers < 1 or ps < 0:
        raise ConfigError(
            f"--workers {workers} --ps {ps}: a distributed job needs 1 worker or more and 0 ps or more"
        )
    if not os.path.isfile(script):
        raise ConfigError(f"{script}: no such file; give the path of a Python script")
    ray = require_ray()
    from ray.util.placement_group import placement_group, remove_placement_group
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    job_id = job_id or f"{Path(script).stem}-{uuid.uuid4().hex[:6]}"
    tasks = [(PS, i, None, 0.0) for i in range(ps)] + [(WORKER, i, *gpus[i]) for i in range(workers)]
    pg = placement_group([_bundle(g, s) for _, _, g, s in tasks], strategy="SPREAD" if spread else "PACK")
    if not pg.wait(PLACEMENT_TIMEOUT_S):
        remove_placement_group(pg)
        raise ConfigError(
            f"job {job_id}: the cluster could not place {ps} ps and {workers} worker tasks within "
            f"{PLACEMENT_TIMEOUT_S:.0f} s (each worker needs its GPU share; see antcolony cluster status)"
        )
    actors = []
    for bundle_index, (name, index, gpu, share) in enumerate(tasks):
        spec = JobSpec(
            f"{job_id}-{name}-{index}",
            os.path.abspath(script),
            list(args),
            gpu or "",
            gpu_memory if name == WORKER else 0,
            perf,
            priority,
        )
        strategy = PlacementGroupSchedulingStrategy(
            placement_group=pg, placement_group_bundle_index=bundle_index
        )
        options: dict[str, Any] = {
            "name": job_actor_name(spec.job_id),
            "num_cpus": TASK_CPU,
            "scheduling_strategy": strategy,
        }
        if gpu == REAL_GPU:
            options["num_gpus"] = share
        elif gpu is not None:
            options["resources"] = {gpu: share}
        actors.append(ray.remote(TaskActor).options(**options).remote(asdict(spec), name, index))
    addresses = ray.get([a.reserve.remote() for a in actors])
    cluster: dict[str, list[str]] = {WORKER: addresses[ps:]}
    if ps:
        cluster[PS] = addresses[:ps]
    logger.info("job %s: cluster %s", job_id, json.dumps(cluster))
    runs = [a.start.remote(cluster) for a in actors]
    return job_id, TaskGroup(job_id, ray, pg, actors, runs, ps, cluster)


class TaskGroup:
    """The running tasks of a distributed job: ``wait`` for the workers, then stop the rest."""

    def __init__(
        self,
        job_id: str,
        ray: Any,
        pg: Any,
        actors: list[Any],
        runs: list[Any],
        ps: int,
        cluster: dict[str, list[str]],
    ) -> None:
        self.job_id = job_id
        self.ray, self.pg, self.actors, self.runs, self.ps = ray, pg, actors, runs, ps
        self.cluster = cluster

    @property
    def task_ids(self) -> list[str]:
        """The job ids of the worker tasks, as the coordinators know them."""
        workers = len(self.runs) - self.ps
        job_id = self.job_id
        return [f"{job_id}-{WORKER}-{i}" for i in range(workers)]

    def wait(self) -> int:
        """Every worker's end (the largest exit code); then the ps tasks are stopped. A worker
        whose actor died counts as exit code 1."""
        codes = []
        for ref in self.runs[self.ps :]:
            try:
                codes.append(int(self.ray.get(ref)))
            except Exception as exc:  # a worker that raised or died: the others went on
                logger.warning("a worker of the job ended with %s", exc)
                codes.append(1)
        self.stop()
        return max(codes)

    def stop(self) -> None:
        from ray.util.placement_group import remove_placement_group

        for actor in self.actors:
            self.ray.kill(actor)
        remove_placement_group(self.pg)
