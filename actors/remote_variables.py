"""Variables kept by another task (a ps): served by name over the tensor wire, exchanged at step
boundaries.

Every task's server keeps a :class:`VariableService`: variable values by shared name (as TF's
resource manager), each with a version counting its updates, living as long as the server, across
steps and across the workers that use them. A session whose target is this process's server
(``tf.Session(server.target)``) gets a :class:`RemoteVariables` client as two run actions:

* before a step it pulls every variable its graph places on another task (``/job:ps/task:K``) and
  writes them into its own variable store, so the step reads the ps's current values;
* after the step it pushes each variable the step changed: its delta from the pulled value, with
  the pulled version (the delta only: half the bytes of value and delta). The ps adds the delta to
  its current value, so concurrent workers' updates all count, as asynchronous between-graph
  replication. When nobody updated the variable since the pull, ``old + (new - old)`` is ``new``
  bit for bit wherever ``new - old`` is exact: always when ``new`` is within a factor of 2 of
  ``old`` (Sterbenz), which a training step's small update is; so one worker's run equals a
  single-process run.

This is a step-boundary exchange, not TF's partitioned Send/Recv: a step's ops on ps variables run
in the worker's process, and a variable changed twice within one step is pushed once. Requests go
in TCP order on one connection per peer, and the ps answers a pull when its frame arrives, so a
worker's pull sees its own earlier pushes.

Frames (tensor_wire.py) carry everything; tensor names in the keys say what a frame is:
``__ps/pull`` (names, string tensor) -> ``__ps/ver`` (int64 versions, -1 = not initialised) and
``__ps/val/<i>`` per initialised variable (``__ps/pvers``: the versions only, which a session
whose steps are partitioned across tasks asks while it waits for the chief's initialisation); ``__ps/push/<version>/<name>`` holds the delta
(version -1: the new value, set unconditionally).

With synchronous replicas (graph/train/sync_replicas.py) a push is ``__ps/psync/<version>/<n>/<name>``,
one of the ``n`` contributions of the round of that version (the ps applies their mean change once
and drops stale ones), and the worker then sends ``__ps/pwait`` ("name@version" strings), which the
ps answers with ``__ps/synced`` once every listed round is applied. A worker whose wait times out
asks ``__ps/pmissing`` (the same strings); the ps answers ``__ps/missing``: the tasks that pushed
to an earlier round of those variables but not to these (a replica that died), for the error.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import random
from typing import Any

import numpy as np

from antcolony.devices.resources import SessionResources
from antcolony.errors import DeadlineExceededError, InvalidArgumentError, UnavailableError
from antcolony.graph.core import Graph
from antcolony.graph.train.sync_replicas import SYNC_REPLICAS_COLLECTION

from .tensor_wire import parse_rendezvous_key, rendezvous_key
from .wire_mailbox import TensorWire, task_name

__all__ = ["RemoteVariables", "VariableService", "register_task", "task_for_target"]

logger = logging.getLogger(__name__)

PULL = "__ps/pull"
PULL_VERSIONS = "__ps/pvers"  # a pull answered with the versions only
PUSH = "__ps/push/"
SYNC_PUSH = "__ps/psync/"
SYNC_WAIT = "__ps/pwait"
SYNCED = "__ps/synced"
SYNC_MISSING = "__ps/pmissing"
MISSING = "__ps/missing"
VERSIONS = "__ps/ver"
VALUE = "__ps/val/"
#: seconds a worker waits for a ps to answer a pull before the step fails (a ps that dies closes
#: its connection and fails the wait at once; this bounds a ps that hangs)
PULL_TIMEOUT_S = 60.0
#: seconds a worker of synchronous replicas waits for a round to complete before its step fails
#: (the other replicas of the round may have died); env ANTCOLONY_SYNC_TIMEOUT_S overrides it
SYNC_TIMEOUT_S = 60.0
SYNC_TIMEOUT_ENV = "ANTCOLONY_SYNC_TIMEOUT_S"
_SERVICE_MARK = ";__ps/p"  # in a key whose tensor name is a request (pull, push, psync, pwait, pmissing)


def _device(task: str) -> str:
    job, _, index = task.removeprefix("/job:").partition("/task:")
    return f"/job:{job}/replica:0/task:{index}/device:CPU:0"


class _Versioned:
    """name -> (version, value) over a variable store: the values are the store's (which the
    partitions of steps run on this task read and update), the versions count the pushes."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.versions: dict[str, int] = {}

    def get(self, name: str, default: Any = None) -> Any:
        value = self.store.values.get(name)
        return default if value is None else (self.versions.get(name, 0), value)

    def __getitem__(self, name: str) -> tuple[int, Any]:
        return self.versions.get(name, 0), self.store.values[name]

    def __setitem__(self, name: str, item: tuple[int, Any]) -> None:
        self.versions[name] = item[0]
        self.store.values[name] = item[1]

    def __contains__(self, name: object) -> bool:
        return name in self.store.values


class VariableService:
    """One task's variables served to others: name -> (version, value). Loop-thread only."""

    def __init__(self, wire: TensorWire, incarnation: int) -> None:
        self.wire = wire
        self.incarnation = incarnation
        self.device = _device(wire.task)
        # the variables of the partitions other tasks run here (partition_service.py) too
        self.resources = SessionResources()
        self.values = _Versioned(self.resources.variables)
        # synchronous replicas: name -> (sum of the round's changes, replicas so far), and the
        # workers waiting for rounds: (peer, reply device, request id, [(name, base version)])
        self._rounds: dict[str, tuple[np.ndarray, int]] = {}
        self._waiting: list[tuple[str, str, int, list[tuple[str, int]]]] = []
        self._pushed: dict[str, dict[str, int]] = {}  # name -> task -> the last round it pushed to
        self._replies: set[asyncio.Task[None]] = set()
        wire.mailbox.service = self.handle

    def handle(self, step_id: int, key: str, value: np.ndarray) -> bool:
        """Apply a request frame; False for every other frame (it goes to the mailbox)."""
        if _SERVICE_MARK not in key:
            return False
        parsed = parse_rendezvous_key(key)
        name = parsed.tensor_name
        if name in (PULL, PULL_VERSIONS):
            self._pull(task_name(parsed.src_device), parsed.src_device, step_id, value, name == PULL)
        elif name.startswith(PUSH):
            version, _, var = name[len(PUSH) :].partition("/")
            self._push(var, int(version), value)
        elif name.startswith(SYNC_PUSH):
            version, _, rest = name[len(SYNC_PUSH) :].partition("/")
            replicas, _, var = rest.partition("/")
            self._pushed.setdefault(var, {})[task_name(parsed.src_device)] = int(version)
            self._sync_push(var, int(version), int(replicas), value)
        elif name == SYNC_MISSING:
            peer = task_name(parsed.src_device)
            reply = _strings(self._missing(_waits(value)))
            self._send_later(peer, step_id, [(self._key(parsed.src_device, MISSING), reply)])
        elif name == SYNC_WAIT:
            self._waiting.append((task_name(parsed.src_device), parsed.src_device, step_id, _waits(value)))
            self._answer_waiting()
        else:
            return False
        return True

    def _push(self, name: str, version: int, value: np.ndarray) -> None:
        current = self.values.get(name)
        if version < 0:
            new = value
        elif current is None:
            logger.warning(
                "task %s: a change of %s (from version %d) for a variable this task does not hold "
                "was dropped (was the ps restarted?)",
                self.wire.task,
                name,
                version,
            )
            return
        else:
            new = current[1] + value
        self.values[name] = ((current[0] if current else 0) + 1, np.array(new))  # keeps 0-d

    def _sync_push(self, name: str, version: int, replicas: int, value: np.ndarray) -> None:
        """One replica's change of ``name`` from ``version``: summed into the round of the
        current version; the ``replicas``-th applies the mean. A stale change is dropped."""
        current = self.values.get(name)
        if current is None or version != current[0]:
            logger.debug(
                "task %s: stale change of %s (from version %d) dropped", self.wire.task, name, version
            )
            return
        total, count = self._rounds.get(name, (np.zeros_like(value), 0))
        total, count = total + value, count + 1
        if count < replicas:
            self._rounds[name] = (total, count)
            return
        self._rounds.pop(name, None)
        mean = total / count
        if current[1].dtype.kind in "iu":
            mean = np.rint(mean)
        self.values[name] = (version + 1, np.array(current[1] + mean.astype(current[1].dtype)))
        self._answer_waiting()

    def _missing(self, waits: list[tuple[str, int]]) -> list[str]:
        """Each task that pushed to an earlier round of a waited variable but not to the one
        waited for, once, with the first such round."""
        missing: dict[str, str] = {}
        for n, version in waits:
            for task, last in self._pushed.get(n, {}).items():
                if last < version:
                    missing.setdefault(task, f"{task} (last pushed to the round of {n}@{last})")
        return sorted(missing.values())

    def _answer_waiting(self) -> None:
        """Answer every worker whose rounds are all applied (each variable past its base version)."""
        still = []
        for peer, dst, step_id, waits in self._waiting:
            if all(self.values.get(n, (version + 1,))[0] > version for n, version in waits):
                versions = np.array(
                    [self.values[n][0] if n in self.values else -1 for n, _ in waits], np.int64
                )
                self._send_later(peer, step_id, [(self._key(dst, SYNCED), versions)])
            else:
                still.append((peer, dst, step_id, waits))
        self._waiting = still

    def _pull(self, peer: str, dst: str, step_id: int, names: np.ndarray, values: bool = True) -> None:
        # The snapshot is taken now, in frame order: a pull sees every push sent before it.
        found = [self.values.get(_text(n)) for n in names.reshape(-1)]
        versions = np.array([f[0] if f else -1 for f in found], dtype=np.int64)
        frames = [(self._key(dst, VERSIONS), versions)]
        if values:
            frames += [(self._key(dst, f"{VALUE}{i}"), f[1]) for i, f in enumerate(found) if f is not None]
        self._send_later(peer, step_id, frames)

    def _send_later(self, peer: str, step_id: int, frames: list[tuple[str, np.ndarray]]) -> None:
        task = asyncio.ensure_future(self._reply(peer, step_id, frames))
        self._replies.add(task)
        task.add_done_callback(self._replies.discard)

    def _key(self, dst: str, tensor_name: str) -> str:
        # Replies carry incarnation 0: the asking worker's request id (the frame's step id) is
        # drawn by it and never reused, so a reply cannot match any other request.
        return rendezvous_key(self.device, 0, dst, tensor_name)

    async def _reply(self, peer: str, step_id: int, frames: list[tuple[str, np.ndarray]]) -> None:
        try:
            for key, value in frames:
                await self.wire.send(peer, key, step_id, value)
        except UnavailableError as exc:
            logger.warning("task %s: could not answer a variable pull of %s: %s", self.wire.task, peer, exc)


def _delta(new: np.ndarray, old: Any) -> np.ndarray:
    return np.asarray(new - np.asarray(old))  # an array, also for 0-d (numpy gives a scalar)


def _strings(items: list[str]) -> np.ndarray:
    """A string tensor for the wire (its elements bytes)."""
    return np.array([item.encode() for item in items], dtype=object)


def _text(item: Any) -> str:
    """An element of a string tensor from the wire (bytes) as str."""
    return item.decode() if isinstance(item, bytes) else str(item)


def _waits(value: np.ndarray) -> list[tuple[str, int]]:
    """A sync-wait request's payload, "name@version" strings, as (name, version)."""
    out = []
    for item in value.reshape(-1):
        name, _, version = _text(item).rpartition("@")
        out.append((name, int(version)))
    return out


# target ("grpc://host:port") -> the service of the server listening there, in this process
_TASKS: dict[str, VariableService] = {}


def register_task(target: str, service: VariableService | None) -> None:
    """A server of this process starts (``service``) or stops (None) serving at ``target``."""
    if service is None:
        _TASKS.pop(target, None)
    else:
        _TASKS[target] = service


def task_for_target(target: str) -> VariableService:
    service = _TASKS.get(target)
    if service is None:
        raise InvalidArgumentError(
            None,
            None,
            f"Session target {target!r} is not a tf.train.Server of this process "
            f"(servers here: {sorted(_TASKS) or 'none'}); create the task's server first and pass server.target",
        )
    return service


class RemoteVariables:
    """A worker session's view of the variables its graph places on other tasks."""

    def __init__(self, service: VariableService, graph: Graph, store: Any) -> None:
        self._service = service
        self._graph = graph
        self._store = store
        self._by_task: dict[str, list[str]] = {}
        self._ops_seen = -1
        self._pulled: dict[str, tuple[int, Any]] = {}
        self._ids = itertools.count(random.getrandbits(48))
        # the session's builder of steps partitioned across tasks (remote_partition.py): while
        # it is active, variables on other tasks are used there, not exchanged at step boundaries
        self.steps: Any = None

    def _exchanging(self) -> bool:
        return self.steps is None or not self.steps.active()

    def remote_variables(self) -> dict[str, list[str]]:
        """Task -> shared names of the graph's variables placed there (recomputed as the graph grows)."""
        ops = self._graph.get_operations()
        if len(ops) != self._ops_seen:
            own = self._service.wire.task
            by_task: dict[str, list[str]] = {}
            for op in ops:
                if op.type == "VariableV2" and "/job:" in (op.device or ""):
                    task = task_name(op.device)
                    if task != own:
                        by_task.setdefault(task, []).append(op.attrs.get("shared_name") or op.name)
            self._by_task, self._ops_seen = by_task, len(ops)
        return self._by_task

    async def before_step(self, _ctx: Any) -> None:
        if self._exchanging():
            await self.pull()

    async def pull(self) -> dict[str, int]:
        """Write every remote variable the ps holds into the session's store; name -> version."""
        by_task = self.remote_variables()
        keep = self._exchanging()  # else the steps use them on their tasks: only the versions count
        results = await asyncio.gather(*(self._pull_from(t, names, keep) for t, names in by_task.items()))
        pulled: dict[str, tuple[int, Any]] = {}
        store = self._store
        for names, (versions, values) in zip(by_task.values(), results):
            for i, name in enumerate(names):
                if versions[i] >= 0 and keep:
                    store.ref(name, None).write(values[i])
                    pulled[name] = (int(versions[i]), store.values[name])
                elif versions[i] >= 0:
                    pulled[name] = (int(versions[i]), None)
        self._pulled = pulled
        return {n: v for n, (v, _) in pulled.items()}

    async def _ask(
        self, task: str, request: str, payload: np.ndarray, reply: str, timeout: float
    ) -> tuple[int, np.ndarray]:
        """Send ``request`` with ``payload`` to ``task``'s variable service and wait for its
        ``reply`` frame; with the request id, which the reply's further frames carry."""
        req = next(self._ids)
        await self._service.wire.send(task, self._request_key(task, request), req, payload)
        return req, await self._service.wire.recv(self._reply_key(task, reply), req, timeout)

    def _request_key(self, task: str, tensor_name: str) -> str:
        svc = self._service
        return rendezvous_key(svc.device, svc.incarnation, _device(task), tensor_name)

    def _reply_key(self, task: str, tensor_name: str) -> str:
        return rendezvous_key(_device(task), 0, self._service.device, tensor_name)

    async def _pull_from(
        self, task: str, names: list[str], with_values: bool = True
    ) -> tuple[np.ndarray, list[Any]]:
        request = PULL if with_values else PULL_VERSIONS
        req, versions = await self._ask(task, request, _strings(names), VERSIONS, PULL_TIMEOUT_S)
        values: list[Any] = [None] * len(names)
        for i in np.flatnonzero(versions >= 0) if with_values else ():
            values[i] = await self._service.wire.recv(
                self._reply_key(task, f"{VALUE}{i}"), req, PULL_TIMEOUT_S
            )
        return versions, values

    async def push(self, _ctx: Any = None) -> None:
        """Send each variable this step changed (see the module docstring); with synchronous
        replicas (a SyncReplicasOptimizer in the graph), as contributions to the rounds of the
        pulled versions, then wait until those rounds are applied."""
        if not self._exchanging():
            return
        svc, store = self._service, self._store
        pulled, self._pulled = self._pulled, {}
        rounds = self._graph.get_collection(SYNC_REPLICAS_COLLECTION)
        joined: dict[str, list[str]] = {}
        for task, names in self.remote_variables().items():
            for name in names:
                new = store.values.get(name)
                if new is None:
                    continue
                before = pulled.get(name)
                if before is not None and new is before[1]:
                    continue  # unchanged: the pulled value is held here, so never updated in place
                new = np.asarray(
                    new.get() if hasattr(new, "get") and not isinstance(new, np.ndarray) else new
                )
                if before is None or new.dtype == np.bool_ or new.dtype == object:
                    tensor, frame = f"{PUSH}-1/{name}", new
                elif rounds:
                    tensor, frame = f"{SYNC_PUSH}{before[0]}/{max(rounds)}/{name}", _delta(new, before[1])
                    joined.setdefault(task, []).append(f"{name}@{before[0]}")
                else:
                    tensor, frame = f"{PUSH}{before[0]}/{name}", _delta(new, before[1])
                await svc.wire.send(task, self._request_key(task, tensor), 0, frame)
        if joined:
            await asyncio.gather(*(self._wait_rounds(task, waits) for task, waits in joined.items()))

    async def _wait_rounds(self, task: str, waits: list[str]) -> None:
        timeout = float(os.environ.get(SYNC_TIMEOUT_ENV, SYNC_TIMEOUT_S))
        try:
            await self._ask(task, SYNC_WAIT, _strings(waits), SYNCED, timeout)
        except DeadlineExceededError:
            missing = await self._missing(task, waits)
            raise DeadlineExceededError(
                None,
                None,
                f"synchronous replicas: the round of {waits[0]} on {task} did not complete in "
                f"{timeout:.0f} s; fewer replicas than replicas_to_aggregate are pushing "
                + (
                    f"(pushed before, not to this round: {', '.join(missing)}; has it died?)"
                    if missing
                    else "(a worker may have died)"
                ),
            ) from None

    async def _missing(self, task: str, waits: list[str]) -> list[str]:
        """The ps's list of the tasks that pushed to earlier rounds of ``waits`` but not to these;
        empty when it does not answer in time."""
        try:
            _, reply = await self._ask(task, SYNC_MISSING, _strings(waits), MISSING, 5.0)
        except (DeadlineExceededError, UnavailableError):
            return []
        return [_text(m) for m in reply.reshape(-1)]

    def initialized(self, versions: dict[str, int]) -> list[str]:
        """Remote variables missing from ``versions`` (a pull's result): the ones not initialised."""
        return [n for names in self.remote_variables().values() for n in names if n not in versions]
