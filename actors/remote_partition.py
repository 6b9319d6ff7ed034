"""A step partitioned across tasks: the worker's side (TF's MasterSession with its RunGraph).

A session whose target is this process's server places ops on other tasks (``/job:ps/task:K``
from ``replica_device_setter``; reads, updates and gathers colocated with their variables) on
those tasks: :class:`TaskDevices` names a device of another task ``/job:J/replica:0/task:K/
device:CPU:0`` (a task's ops run on its CPU) and its own task's devices as a local session's.
The step is partitioned by device as any step; the partitions of other tasks are not run here
but registered once at their task's server (partition_service.py) as a GraphDef (the graph I/O
of graph/graph_def.py, JSON: no pickle) of their ops, a ``Placeholder`` standing for each tensor
they receive (a ``NoOp`` for a control token), and the wire keys of their sends and receives.

Each step then draws a wire step id, asks every such task to run its partition under it
(``__part/run/<handle>``), and runs its own partitions with a :class:`WireRendezvous`: the
Send/Recv pairs that cross tasks are frames on the TCP wire under TF's rendezvous key. The step
completes when its own partitions drained and every remote partition reported done
(``__part/done/<handle>``: empty, or the error's class name and message, which fails the step).
A task that dies fails the step waiting on it with the mailbox's UnavailableError naming it.

Graphs of synchronous replicas (a SyncReplicasOptimizer) keep the pull/push exchange of
remote_variables.py, whose rounds aggregate on the ps; so does every session when
``ANTCOLONY_REMOTE_STEPS=pull_push``.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import random
from collections.abc import Sequence
from typing import Any

import numpy as np

import antcolony.errors as errors
from antcolony.errors import InternalError, NotFoundError, OpError
from antcolony.graph.core import Graph, Operation, Tensor
from antcolony.graph.device_spec import DeviceSpec
from antcolony.graph.passes import HOST, partition
from antcolony.graph.train.sync_replicas import SYNC_REPLICAS_COLLECTION

from .cached_executor import CachedExecutor
from .partition_graph import qualified, registration, remote_device, wire_key
from .planner import bind_plans, place_step, plan_partitions
from .runtime import Runtime
from .services.job import job_services
from .step import StepState, finished
from .tensor_wire import rendezvous_key
from .wire_mailbox import task_name
from .wire_rendezvous import PeerSends, WireRendezvous

__all__ = [
    "MODE_ENV",
    "RemoteSteps",
    "TaskDevices",
    "WireExecutor",
    "error_frame",
    "frame_error",
]

#: ``pull_push``: every session of this process exchanges ps variables at step boundaries
#: instead of partitioning its steps across tasks (for comparisons; the default is partitioned).
MODE_ENV = "ANTCOLONY_REMOTE_STEPS"
PART = "__part/"
REGISTER = "__part/reg/"
RUN = "__part/run/"
DONE = "__part/done/"
ABORT = "__part/abort/"
UNREGISTER = "__part/unreg/"


def error_frame(error: BaseException | None) -> np.ndarray:
    """A done frame's payload: empty for success, else [class name, message]."""
    if error is None:
        return np.array([], dtype=object)
    message = error.message if isinstance(error, OpError) else f"{type(error).__name__}: {error}"
    return np.array([type(error).__name__.encode(), message.encode()], dtype=object)


def frame_error(value: np.ndarray, where: str) -> OpError | None:
    """The error a done frame reports (its class from antcolony.errors), None for success."""
    items = [item.decode() if isinstance(item, bytes) else str(item) for item in value.reshape(-1)]
    if not items:
        return None
    cls = getattr(errors, items[0], None)
    if not (isinstance(cls, type) and issubclass(cls, OpError)):
        cls = InternalError
    return cls(None, None, f"{where}: {items[1] if len(items) > 1 else items[0]}")


class TaskDevices:
    """A session's devices (``SessionDevices``) with the devices of other tasks: another task's
    device is that task's CPU, ``remote_device(task)``, which only planning sees (its ops run
    there); this task's named devices are the local ones."""

    def __init__(self, inner: Any, own_task: str) -> None:
        self._inner = inner
        self.own_task = task_name(own_task)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def task_of(self, requested: str) -> str | None:
        """The other task a requested device is on; None for this task's (or no task's)."""
        if not requested:
            return None
        spec = DeviceSpec.parse(requested)
        if spec.job is None:
            return None
        task = f"/job:{spec.job}/task:{spec.task or 0}"
        return None if task == self.own_task else task

    def resolve(self, requested: str) -> str | None:
        task = self.task_of(requested)
        if task is not None:
            return remote_device(task)
        if requested and requested.startswith("/job:"):
            local = DeviceSpec.parse(requested).replace(job=None, task=None, replica=None).to_string()
            return self._inner.resolve(local)
        return self._inner.resolve(requested)

    def has_kernel(self, op_type: str, device: str) -> bool:
        return self._inner.has_kernel(op_type, HOST if device.startswith("/job:") else device)

    def inline_kernel(self, op: Operation, device: str) -> bool:
        return not device.startswith("/job:") and self._inner.inline_kernel(op, device)

    def worker_kernel(self, op: Operation, device: str) -> bool:
        return not device.startswith("/job:") and self._inner.worker_kernel(op, device)

    def worker(self, device: str) -> Any:
        return self._inner.worker(HOST if device.startswith("/job:") else device)

    def transfer(self, src: str, dst: str) -> Any:
        return self._inner.transfer(HOST if src.startswith("/job:") else src, dst)


class WireExecutor(CachedExecutor):
    """The executors of a key whose steps exchange tensors with other tasks over the wire:
    ``routes`` maps the keys of transfers that cross tasks to (peer, wire key, control)."""

    __slots__ = ("routes", "sends")

    def __init__(
        self,
        rt: Runtime,
        plans: list[Any],
        feeds: list[Tensor],
        graph_id: str,
        routes: dict[str, tuple[str, str, bool]],
        sends: PeerSends,
    ) -> None:
        super().__init__(rt, plans, feeds, graph_id)
        self.routes = routes
        self.sends = sends

    def aborted(self, step_id: int, error: BaseException) -> None:
        """A step of wire id ``step_id`` was aborted here (the other tasks may need telling)."""

    def start_wire(
        self,
        feeds: dict[Tensor, Any],
        num_fetches: int,
        trace: bool,
        step_id: int,
        wire_step: int,
        extra: int,
    ) -> StepState | None:
        """A step with wire id ``wire_step``; ``extra`` more units are in flight until
        ``finished`` (a remote partition's done)."""
        if not self._cell.alive:
            return None
        box: list[StepState] = []
        rendezvous = WireRendezvous(
            self._loop,
            self.routes,
            self.sends,
            wire_step,
            lambda error: self.abort(box[0], error),
            lambda error: self.aborted(wire_step, error),
        )
        step = StepState(
            [*map(feeds.__getitem__, self.feeds)] if feeds else (),
            num_fetches,
            trace,
            self.refs,
            self._coordinator,
            rendezvous,
            self._units + extra,
            step_id,
        )
        box.append(step)
        for start in self._starts:
            start(step)
        return step


class _Registered:
    """A partition of the step to register at another task: its handle, where it runs, the
    registration's payload, and the task's epoch it was sent in. ``epochs`` (task -> epoch, one
    dict per session) moves on when a step finds the task unreachable or not knowing a
    partition (restarted): every partition of the session is then registered again there."""

    __slots__ = ("handle", "task", "device", "payload", "epochs", "sent_in")

    def __init__(self, handle: str, task: str, payload: np.ndarray, epochs: dict[str, int]) -> None:
        self.handle = handle
        self.task = task
        self.device = remote_device(task)
        self.payload = payload
        self.epochs = epochs
        self.sent_in = -1

    def due(self) -> bool:
        """Not sent in the task's current epoch (marked sent now)."""
        epoch = self.epochs.get(self.task, 0)
        if self.sent_in == epoch:
            return False
        self.sent_in = epoch
        return True

    def lost(self, _error: BaseException | None = None) -> None:
        if self.sent_in == self.epochs.get(self.task, 0):
            self.epochs[self.task] = self.sent_in + 1


class RemoteStepExecutor(WireExecutor):
    """The worker's executors of a key with partitions on other tasks, which each step runs."""

    __slots__ = ("remote", "own_device", "_wire_ids")

    def __init__(self, *args: Any, remote: list[_Registered], own_device: str) -> None:
        super().__init__(*args)
        self.remote = remote
        self.own_device = own_device
        self._wire_ids = itertools.count(random.getrandbits(52) << 8)

    def start(
        self, feeds: dict[Tensor, Any], num_fetches: int, trace: bool, step_id: int = 0
    ) -> StepState | None:
        wire_step = next(self._wire_ids)
        step = self.start_wire(feeds, num_fetches, trace, step_id, wire_step, len(self.remote))
        if step is None:
            return None
        rendezvous = step.rendezvous
        for reg in self.remote:
            if reg.due():  # registered once, again after the task was unreachable or restarted
                key = rendezvous_key(self.own_device, 0, reg.device, f"{REGISTER}{reg.handle}")
                self.sends.send(reg.task, key, 0, reg.payload, reg.lost)
            key = rendezvous_key(self.own_device, 0, reg.device, f"{RUN}{reg.handle}")
            self.sends.send(reg.task, key, wire_step, np.zeros(0, np.int8), rendezvous.fail)
            rendezvous.watch(asyncio.ensure_future(self._done(step, reg, wire_step)))
        return step

    async def _done(self, step: StepState, reg: _Registered, wire_step: int) -> None:
        key = rendezvous_key(reg.device, 0, self.own_device, f"{DONE}{reg.handle}")
        try:
            value = await self.sends.wire.recv(key, wire_step)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            reg.lost()
            step.rendezvous.fail(exc)
            return
        error = frame_error(value, f"the partition of the step on task {reg.task} failed")
        if error is not None:
            if isinstance(error, NotFoundError):
                reg.lost()  # a restarted task: the next step registers the partition again
            step.rendezvous.fail(error)
        elif not step.aborted:
            finished(step)

    def aborted(self, step_id: int, error: BaseException) -> None:
        # the other tasks stop their partitions of the step (a task that reported the error has
        # ended its own already and ignores the request)
        for reg in self.remote:
            key = rendezvous_key(self.own_device, 0, reg.device, f"{ABORT}{reg.handle}")
            self.sends.send(reg.task, key, step_id, error_frame(error), _ignore)

    def release(self) -> None:
        """The session closed: the other tasks drop the partitions registered for these executors."""
        super().release()
        remote, self.remote = self.remote, []
        for reg in remote:
            key = rendezvous_key(self.own_device, 0, reg.device, f"{UNREGISTER}{reg.handle}")
            self.sends.send(reg.task, key, 0, np.zeros(0, np.int8), _ignore)


def _ignore(_error: BaseException) -> None:
    return None


class RemoteSteps:
    """A task's session's builder of executors whose steps run partitions on other tasks."""

    def __init__(self, service: Any, graph: Graph) -> None:
        self._service = service  # this task's VariableService: its wire
        self._graph = graph
        self._sends: PeerSends | None = None
        self._handles = itertools.count(1)
        self._prefix = f"{random.getrandbits(48):012x}"
        self._epochs: dict[str, int] = {}  # see _Registered

    def active(self) -> bool:
        """Steps are partitioned across tasks (else variables are exchanged at step boundaries)."""
        if os.environ.get(MODE_ENV, "partitioned") == "pull_push":
            return False
        return not self._graph.get_collection(SYNC_REPLICAS_COLLECTION)

    def build(
        self,
        rt: Runtime,
        fetches: Sequence[Tensor],
        targets: Sequence[Operation],
        feeds: Sequence[Tensor],
        key_feeds: list[Tensor],
        devices: Any,
    ) -> CachedExecutor:
        wire = self._service.wire
        ctx = TaskDevices(devices, wire.task)
        ops, placement, control_flow = place_step(fetches, targets, feeds, ctx)
        _join_groups(ops, placement)
        parts = partition(ops, placement, feeds, fetches)
        local = {d: p for d, p in parts.items() if not d.startswith("/job:")}
        plans = plan_partitions(local, placement, fetches, targets, feeds, ctx, control_flow)
        bind_plans(plans, ctx)
        graph_id = job_services(rt).next_graph_id()
        if len(local) == len(parts):
            return CachedExecutor(rt, plans, key_feeds, graph_id)
        own = ctx.own_task
        if self._sends is None or self._sends.wire is not wire:
            self._sends = PeerSends(wire)
        routes: dict[str, tuple[str, str, bool]] = {}
        for p in local.values():
            for tr in (*p.sends, *p.recvs):
                if tr.src.startswith("/job:") or tr.dst.startswith("/job:"):
                    peer = task_name(tr.dst if tr.dst.startswith("/job:") else tr.src)
                    routes[tr.key] = (peer, wire_key(own, tr), tr.tensor is None)
        remote = []
        for device, part in sorted(parts.items()):
            if device.startswith("/job:"):
                handle = f"{self._prefix}.{next(self._handles)}"
                # sent before the first step's run request (RemoteStepExecutor.start)
                remote.append(
                    _Registered(handle, task_name(device), registration(part, own, feeds), self._epochs)
                )
        return RemoteStepExecutor(
            rt,
            plans,
            key_feeds,
            graph_id,
            routes,
            self._sends,
            remote=remote,
            own_device=qualified(own, HOST),
        )


def _join_groups(ops: Sequence[Operation], placement: dict[int, str]) -> None:
    """A NoOp that only waits for ops of one other task (``group`` of a ps's updates) runs on
    that task: one token (or none, when what waits for it is there too: the global step's
    increment) crosses instead of one per op, and a step's critical path loses the two crossings
    of the tokens to the worker and back. ``ops`` are in topological order, so nested groups
    follow their members."""
    for op in ops:
        if op.type != "NoOp" or op.inputs or not op.control_inputs:
            continue
        devices = {placement.get(id(c)) for c in op.control_inputs}
        if len(devices) == 1:
            (device,) = devices
            if device is not None and device.startswith("/job:"):
                placement[id(op)] = device
