"""A task's side of steps partitioned across tasks (TF's WorkerService: RegisterGraph, RunGraph).

Every task's server keeps a :class:`PartitionService` on its wire. A worker registers a
partition of one of its steps once (``__part/reg/<handle>``: the partition's GraphDef JSON and a
description of its wire transfers, remote_partition.py); the service imports the GraphDef into a
graph of its own, plans it as this task's host partition (the stand-in of each received tensor
is placed on its sender's device, so the planner makes it a Recv) and binds it with this
server's resources: its variables are the ones the server's VariableService keeps, by shared
name, so pull/push sessions and partitioned steps see the same values, and the dependency
engine orders the updates of concurrent workers' steps.

``__part/run/<handle>`` (the frame's step id: the step's wire id) runs the partition once; when
it ends the service answers ``__part/done/<handle>`` (empty, or the error's class and message).
``__part/abort/<handle>`` aborts a running one (the worker's step failed);
``__part/unreg/<handle>`` drops it (the worker's session closed). A registration that failed is
reported by the done answer of each run of it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import numpy as np

from antcolony.config.session_config import SessionConfig
from antcolony.devices.device_set import DeviceSet
from antcolony.errors import CancelledError, InternalError, NotFoundError, OpError
from antcolony.graph.control_flow import CONTROL_FLOW_OPS
from antcolony.graph.core import Graph, Operation
from antcolony.graph.graph_def import import_graph_def
from antcolony.graph.passes import HOST, Partition, Transfer

from .device_context import SessionDevices, device_settings
from .partition_graph import remote_device
from .planner import bind_plans, plan_partitions
from .remote_partition import (
    ABORT,
    DONE,
    REGISTER,
    RUN,
    UNREGISTER,
    TaskDevices,
    WireExecutor,
    error_frame,
)
from .runtime import get_runtime
from .services.job import job_services
from .step import StepState
from .tensor_wire import parse_rendezvous_key, rendezvous_key
from .wire_mailbox import TensorWire, task_name
from .wire_rendezvous import PeerSends

__all__ = ["PartitionService"]

logger = logging.getLogger(__name__)

_MARK = ";__part/"


def _text(item: Any) -> str:
    return item.decode() if isinstance(item, bytes) else str(item)


class PartitionService:
    """The partitions other tasks registered here, run per step on request. Loop-thread only."""

    def __init__(self, wire: TensorWire, resources: Any) -> None:
        self.wire = wire
        self.resources = resources
        self.device = remote_device(wire.task)
        self.sends = PeerSends(wire)
        self._registered: dict[str, WireExecutor | OpError] = {}
        self._steps: dict[tuple[str, int], tuple[WireExecutor, StepState]] = {}
        self._finishing: set[asyncio.Future[None]] = set()
        before = wire.mailbox.service
        wire.mailbox.service = lambda step_id, key, value: (
            self.handle(step_id, key, value) or (before is not None and before(step_id, key, value))
        )

    @property
    def registered(self) -> int:
        return len(self._registered)

    def handle(self, step_id: int, key: str, value: np.ndarray) -> bool:
        """Take a request frame; False for every other frame."""
        if _MARK not in key:
            return False
        parsed = parse_rendezvous_key(key)
        name = parsed.tensor_name
        if name.startswith(REGISTER):
            self._register(name[len(REGISTER) :], task_name(parsed.src_device), value)
        elif name.startswith(RUN):
            self._run(name[len(RUN) :], parsed.src_device, step_id)
        elif name.startswith(ABORT):
            self._abort(name[len(ABORT) :], task_name(parsed.src_device), step_id, value)
        elif name.startswith(UNREGISTER):
            self._unregister(name[len(UNREGISTER) :])
        else:
            return False
        return True

    def _register(self, handle: str, peer: str, value: np.ndarray) -> None:
        self._unregister(handle)  # registered again (the worker could not tell it arrived)
        try:
            self._registered[handle] = self._build(value)
        except Exception as exc:
            logger.warning("task %s: could not register a partition of %s: %s", self.wire.task, peer, exc)
            message = exc.message if isinstance(exc, OpError) else f"{type(exc).__name__}: {exc}"
            self._registered[handle] = InternalError(
                None, None, f"task {self.wire.task} could not register the step's partition: {message}"
            )

    def _build(self, value: np.ndarray) -> WireExecutor:
        graph_def, description = (_text(v) for v in value.reshape(-1))
        desc = json.loads(description)
        g = Graph()
        with g.as_default():
            import_graph_def(graph_def, name="")
        sources = {r["standin"]: r for r in desc["recvs"]}
        placement: dict[int, str] = {}
        ops: list[Operation] = []
        for op in g.get_operations():
            recv = sources.get(op.name)
            placement[id(op)] = HOST if recv is None else recv["src"]
            if recv is None:
                ops.append(op)
        routes: dict[str, tuple[str, str, bool]] = {}
        recvs = []
        for r in desc["recvs"]:
            op = g.get_operation_by_name(r["standin"])
            if r["control"]:
                tr = Transfer.of_control(op, r["src"], HOST)
            else:
                tr = Transfer.of_tensor(op.outputs[0], r["src"], HOST)
            recvs.append(tr)
            routes[tr.key] = (task_name(r["src"]), r["wire"], bool(r["control"]))
        sends, senders = [], []
        for s in desc["sends"]:
            if s["tensor"] is not None:
                t = g.get_tensor_by_name(s["tensor"])
                tr = Transfer.of_tensor(t, HOST, s["dst"])
                senders.append(t.op)
            else:
                src = g.get_operation_by_name(s["op"])
                tr = Transfer.of_control(src, HOST, s["dst"])
                senders.append(src)
            sends.append(tr)
            routes[tr.key] = (task_name(s["dst"]), s["wire"], s["tensor"] is None)
        rt = get_runtime()
        config = SessionConfig()
        # the process's devices, made with default settings if no session made them first
        devices = rt.extension("devices", lambda rt: DeviceSet(rt, device_settings(config)))
        ctx = TaskDevices(SessionDevices(devices, self.resources, config), self.wire.task)
        control_flow = any(op.type in CONTROL_FLOW_OPS for op in ops)
        part = Partition(HOST, ops, sends, recvs)
        plans = plan_partitions({HOST: part}, placement, [], senders, [], ctx, control_flow)
        bind_plans(plans, ctx)
        return WireExecutor(rt, plans, [], job_services(rt).next_graph_id(), routes, self.sends)

    def _run(self, handle: str, client: str, step_id: int) -> None:
        executor = self._registered.get(handle)
        if executor is None:
            executor = NotFoundError(
                None,
                None,
                f"task {self.wire.task} has no partition {handle} (was it restarted since the "
                "worker registered it?); the worker registers it again at its next step",
            )
        if isinstance(executor, OpError):
            self._answer(handle, client, step_id, executor)
            return
        step = executor.start_wire({}, 0, False, 0, step_id, 0)
        if step is None:
            self._answer(
                handle, client, step_id, InternalError(None, None, "the partition's executors stopped")
            )
            return
        self._steps[(handle, step_id)] = (executor, step)
        task = asyncio.ensure_future(self._finish(handle, client, step_id, step))
        self._finishing.add(task)
        task.add_done_callback(self._finishing.discard)

    async def _finish(self, handle: str, client: str, step_id: int, step: StepState) -> None:
        error: BaseException | None = None
        try:
            await step.waiter()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            error = exc
        if self._steps.pop((handle, step_id), None) is not None:  # not aborted by its client
            self._answer(handle, client, step_id, error)

    def _answer(self, handle: str, client: str, step_id: int, error: BaseException | None) -> None:
        key = rendezvous_key(self.device, 0, client, f"{DONE}{handle}")
        self.sends.send(task_name(client), key, step_id, error_frame(error), self._unanswered)

    def _unanswered(self, error: BaseException) -> None:
        logger.warning("task %s: could not answer a partitioned step: %s", self.wire.task, error)

    def _unregister(self, handle: str) -> None:
        """The worker's session closed: its partition's node actors stop (steps still running
        end first: their messages are ahead of the stop in the mailboxes)."""
        executor = self._registered.pop(handle, None)
        if isinstance(executor, WireExecutor):
            for ref in executor.refs:
                if ref.is_alive:
                    ref.stop()
            executor.release()

    def _abort(self, handle: str, peer: str, step_id: int, value: np.ndarray) -> None:
        found = self._steps.pop((handle, step_id), None)
        if found is None:
            return  # ended already (its own error ended it, or the done answer crossed the abort)
        why = " ".join(_text(v) for v in value.reshape(-1)[1:])
        executor, step = found
        executor.abort(step, CancelledError(None, None, f"{peer} aborted the step: {why}"))
