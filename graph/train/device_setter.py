"""``tf.train.replica_device_setter``: a device function that puts variables on parameter-server
tasks and everything else on the worker, for between-graph replication.

Placement rules, as TF1's: an op whose type is one of ``ps_ops`` goes to ``ps_device`` with the
task ``ps_strategy(op)`` chooses (round-robin by default), unless the op already names another
job; any other op goes to ``worker_device``. With ``merge_devices`` (the default) the parts of the
op's own device (from inner ``tf.device`` scopes) win over the chosen device's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from ..core import Operation
from ..device_spec import DeviceSpec
from ..tensor_shape import TensorShape
from .cluster_spec import ClusterSpec

__all__ = [
    "STANDARD_PS_OPS",
    "GreedyLoadBalancingStrategy",
    "byte_size_load_fn",
    "replica_device_setter",
]

logger = logging.getLogger(__name__)

# The op types that hold state a replica shares (TF's list; the types antcolony lacks never match).
STANDARD_PS_OPS = (
    "Variable",
    "VariableV2",
    "AutoReloadVariable",
    "MutableHashTable",
    "MutableHashTableV2",
    "MutableHashTableOfTensors",
    "MutableHashTableOfTensorsV2",
    "MutableDenseHashTable",
    "MutableDenseHashTableV2",
    "VarHandleOp",
    "BoostedTreesEnsembleResourceHandleOp",
    "BoostedTreesQuantileStreamResourceHandleOp",
    "ResourceConditionalAccumulator",
    "DecisionTreeResource",
)


class _RoundRobinStrategy:
    """ps task 0, 1, ..., n-1, 0, ... in the order ps ops are created."""

    def __init__(self, num_tasks: int) -> None:
        self._num_tasks = num_tasks
        self._next = 0

    def __call__(self, op: Operation) -> int:
        task = self._next
        self._next = (self._next + 1) % self._num_tasks
        return task


class GreedyLoadBalancingStrategy:
    """Each ps op goes to the ps task with the least load so far (lowest index on ties); the
    op's load (``load_fn(op)``, by default its byte size) is then added to that task's."""

    def __init__(self, num_tasks: int, load_fn: Callable[[Operation], float] | None = None) -> None:
        if num_tasks <= 0:
            raise ValueError(f"GreedyLoadBalancingStrategy needs num_tasks > 0, got {num_tasks}")
        self._num_tasks = num_tasks
        self._load_fn = load_fn or byte_size_load_fn
        self._loads = [0.0] * num_tasks

    def __call__(self, op: Operation) -> int:
        task = min(range(self._num_tasks), key=self._loads.__getitem__)
        self._loads[task] += self._load_fn(op)
        return task


def byte_size_load_fn(op: Operation) -> int:
    """The byte size of the single output of ``op`` (a variable): elements times item size."""
    if len(op.outputs) != 1:
        raise ValueError(f"Op {op.name} must have a single output to be measured by its byte size")
    out = op.outputs[0]
    shape = out.shape
    if not shape.is_fully_defined() and "shape" in op.attrs and op.attrs["shape"] is not None:
        shape = TensorShape(op.attrs["shape"])
    n = shape.num_elements()
    if n is None:
        raise ValueError(
            f"Op {op.name} has shape {shape}, not fully defined: give the variable a full shape to "
            "balance ps tasks by byte size"
        )
    return n * out.dtype.itemsize


class _ReplicaDeviceChooser:
    def __init__(
        self,
        ps_tasks: int,
        ps_device: str,
        worker_device: str,
        merge_devices: bool,
        ps_ops: Sequence[str],
        ps_strategy: Callable[[Operation], int],
    ) -> None:
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = frozenset(ps_ops)
        self._ps_strategy = ps_strategy

    def device_function(self, op: Operation) -> str:
        if not self._merge_devices and op.device:
            return op.device
        current = DeviceSpec.parse(op.device or "")
        if self._ps_tasks and self._ps_device and op.type in self._ps_ops:
            ps = DeviceSpec.parse(self._ps_device)
            # The strategy picks the task only where the op stays in the ps job: an op already
            # placed in another job keeps its own placement and costs no ps task a turn.
            if ps.job and (not current.job or current.job == ps.job):
                ps = ps.replace(task=self._ps_strategy(op))
            return ps.merged_with(current).to_string()
        return DeviceSpec.parse(self._worker_device or "").merged_with(current).to_string()


def replica_device_setter(
    ps_tasks: int = 0,
    ps_device: str = "/job:ps",
    worker_device: str = "/job:worker",
    merge_devices: bool = True,
    cluster: ClusterSpec | dict[str, Any] | Any = None,
    ps_ops: Sequence[str] | None = None,
    ps_strategy: Callable[[Operation], int] | None = None,
) -> Callable[[Operation], str] | None:
    """A device function for ``tf.device(...)``; None (no placement) when there are no ps tasks.

    ``cluster`` (a ClusterSpec or its dict) overrides ``ps_tasks`` with the size of the job that
    ``ps_device`` names; a cluster without that job gives None.
    """
    if cluster is not None:
        spec = cluster.as_dict() if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster).as_dict()
        ps_job = DeviceSpec.parse(ps_device).job
        if ps_job not in spec or spec[ps_job] is None:
            return None
        ps_tasks = len(spec[ps_job])
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if not merge_devices:
        logger.warning(
            "replica_device_setter(merge_devices=False): ops that already have a device keep it "
            "whole; TF1 deprecated this mode"
        )
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    chooser = _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, merge_devices, ps_ops, ps_strategy)
    return chooser.device_function
