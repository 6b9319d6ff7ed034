"""``tf.train.ClusterSpec``: the jobs of a distributed TF1 program and the addresses of their tasks.

Pure data, as TF1's: a job maps task indices to ``host:port`` addresses, given densely (a list) or
sparsely (a dict of index -> address). A ``tf.train.ClusterDef`` protocol buffer (anything with a
``job`` list of entries with ``name`` and a ``tasks`` mapping) is accepted too, so a TF1 program's
``ClusterDef`` carries over; :meth:`ClusterSpec.as_cluster_def` gives a plain-data equivalent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ClusterDef", "ClusterSpec", "JobDef"]


@dataclass
class JobDef:
    """One job of a :class:`ClusterDef`: its name and task index -> address."""

    name: str
    tasks: dict[int, str] = field(default_factory=dict)


@dataclass
class ClusterDef:
    """The shape of TF's ``ClusterDef`` proto, without protobuf: jobs sorted by name."""

    job: list[JobDef] = field(default_factory=list)


class ClusterSpec:
    """A cluster as jobs of tasks: ``ClusterSpec({"ps": ["h0:2222"], "worker": ["h1:2222", "h2:2222"]})``."""

    def __init__(self, cluster: Any) -> None:
        if isinstance(cluster, ClusterSpec):
            jobs = {j.name: dict(j.tasks) for j in cluster.as_cluster_def().job}
        elif isinstance(cluster, Mapping):
            jobs = {name: _job_tasks(name, tasks) for name, tasks in cluster.items()}
        elif hasattr(cluster, "job"):
            jobs = {str(j.name): {int(i): str(a) for i, a in j.tasks.items()} for j in cluster.job}
        else:
            raise TypeError(
                "`cluster` must be a dictionary mapping one or more job names to lists of network "
                "addresses, or a `ClusterDef` protocol buffer"
            )
        for name, tasks in jobs.items():
            if not isinstance(name, str):
                raise TypeError(f"Job name {name!r} must be bytes or unicode")
            for address in tasks.values():
                if not isinstance(address, str):
                    raise TypeError(f"Task address {address!r} must be bytes or unicode")
        self._jobs = jobs

    def __bool__(self) -> bool:
        return bool(self._jobs)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ClusterSpec):
            return self._jobs == other._jobs
        return self._jobs == other

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]  # mutable-looking value type, as TF's

    def __repr__(self) -> str:
        d = self.as_dict()
        return "ClusterSpec({" + ", ".join(f"{k!r}: {d[k]!r}" for k in sorted(d)) + "})"

    @property
    def jobs(self) -> list[str]:
        return list(self._jobs)

    def _job(self, job_name: str) -> dict[int, str]:
        try:
            return self._jobs[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    def num_tasks(self, job_name: str) -> int:
        return len(self._job(job_name))

    def task_indices(self, job_name: str) -> list[int]:
        return sorted(self._job(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        job = self._job(job_name)
        try:
            return job[task_index]
        except KeyError:
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r}") from None

    def job_tasks(self, job_name: str) -> list[str | None]:
        """Addresses by task index; None where a sparse job has no task of that index."""
        job = self._job(job_name)
        out: list[str | None] = [None] * (max(job) + 1 if job else 0)
        for i, address in job.items():
            out[i] = address
        return out

    def as_dict(self) -> dict[str, Any]:
        """Job -> list of addresses when its indices are dense (0..n-1), else index -> address."""
        out: dict[str, Any] = {}
        for name in self.jobs:
            indices = self.task_indices(name)
            if not indices:
                out[name] = {}
            elif indices[-1] + 1 == len(indices):
                out[name] = self.job_tasks(name)
            else:
                out[name] = {i: self.task_address(name, i) for i in indices}
        return out

    def as_cluster_def(self) -> ClusterDef:
        return ClusterDef(
            [JobDef(name, dict(sorted(self._jobs[name].items()))) for name in sorted(self._jobs)]
        )


def _job_tasks(name: Any, tasks: Any) -> dict[int, str]:
    if isinstance(tasks, (list, tuple)):
        return dict(enumerate(tasks))
    if isinstance(tasks, Mapping):
        return {int(i): t for i, t in tasks.items()}
    raise TypeError(f"The tasks for job {name!r} must be a list or a dictionary from integers to strings.")
