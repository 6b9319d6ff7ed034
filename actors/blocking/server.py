"""``tf.train.Server``: this process as one task of a distributed TF1 cluster.

A server takes its address from the cluster spec (``job_name``, ``task_index``), listens there
with the tensor wire (tcp_wire.py) on the loop that runs the process's blocking sessions, and
knows every other task's address, so the runtime's partitions on this task can receive tensors
other tasks send it and send theirs. ``server.target`` is TF's ``grpc://host:port`` string for
sessions to name; ``server.join()`` blocks, as a ps task's main does, until the server stops.

The host part of the task's address is the interface it listens on: ``localhost:2222`` stays on
loopback; a real cluster names each machine's own host name or address. Port 0 picks a free port
(``create_local_server``), which ``target`` then shows.
"""

from __future__ import annotations

import logging
import random
import threading
from dataclasses import dataclass
from typing import Any

from antcolony.errors import InternalError
from antcolony.graph.train.cluster_spec import ClusterSpec

from ..partition_service import PartitionService
from ..remote_variables import VariableService, register_task
from ..runtime import get_runtime
from ..tcp_wire import TcpWire
from .background_loop import background_loop, refuse_in_event_loop

__all__ = ["Server", "ServerDef"]

logger = logging.getLogger(__name__)


@dataclass
class ServerDef:
    """TF's ``ServerDef`` fields: the cluster, this task's job and index, protocol, session config."""

    cluster: Any
    job_name: str
    task_index: int
    protocol: str = "grpc"
    default_session_config: Any = None


def _server_def(
    source: Any, job_name: str | None, task_index: int | None, protocol: str | None, config: Any
) -> ServerDef:
    if isinstance(source, ServerDef) or (hasattr(source, "cluster") and hasattr(source, "job_name")):
        return ServerDef(
            ClusterSpec(source.cluster).as_cluster_def(),
            job_name if job_name is not None else source.job_name,
            task_index if task_index is not None else source.task_index,
            protocol if protocol is not None else (source.protocol or "grpc"),
            config if config is not None else getattr(source, "default_session_config", None),
        )
    try:
        spec = ClusterSpec(source)
    except TypeError:
        raise TypeError(
            "Could not convert `server_or_cluster_def` to a `tf.train.ServerDef` or `tf.train.ClusterSpec`."
        ) from None
    if job_name is None:
        if len(spec.jobs) != 1:
            raise ValueError("Must specify an explicit `job_name`.")
        job_name = spec.jobs[0]
    if task_index is None:
        indices = spec.task_indices(job_name)
        if len(indices) != 1:
            raise ValueError("Must specify an explicit `task_index`.")
        task_index = indices[0]
    return ServerDef(spec.as_cluster_def(), job_name, task_index, protocol or "grpc", config)


def _split(address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"task address {address!r} is not host:port")
    return host, int(port)


class Server:
    """``tf.train.Server(cluster, job_name="ps", task_index=0)``; ``server.join()`` serves forever."""

    def __init__(
        self,
        server_or_cluster_def: Any,
        job_name: str | None = None,
        task_index: int | None = None,
        protocol: str | None = None,
        config: Any = None,
        start: bool = True,
    ) -> None:
        self._server_def = _server_def(server_or_cluster_def, job_name, task_index, protocol, config)
        if self._server_def.protocol not in ("grpc", "grpc+verbs"):
            raise ValueError(
                f"protocol {self._server_def.protocol!r}: use 'grpc' (tensors go over antcolony's own wire)"
            )
        self._spec = ClusterSpec(self._server_def.cluster)
        self.task = f"/job:{self._server_def.job_name}/task:{self._server_def.task_index}"
        job, index = self._server_def.job_name, self._server_def.task_index
        if job not in self._spec.jobs or index not in self._spec.task_indices(job):
            raise InternalError(None, None, f'Task {index} was not defined in job "{job}"')
        self._address = self._spec.task_address(job, index)
        self._wire: TcpWire | None = None
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        if start:
            self.start()

    @property
    def server_def(self) -> ServerDef:
        return self._server_def

    @property
    def wire(self) -> TcpWire:
        """The tensor wire this task listens with (after ``start``)."""
        if self._wire is None:
            raise RuntimeError(f"server of task {self.task} is not started; call start()")
        return self._wire

    @property
    def target(self) -> str:
        host, port = _split(self._address)
        if self._wire is not None:
            port = self._wire.address[1]
        return f"grpc://{host}:{port}"

    def start(self) -> None:
        """Listen on this task's address (once; later calls do nothing)."""
        with self._lock:
            if self._wire is not None:
                return
            host, port = _split(self._address)
            self._wire = background_loop().call(
                f"starting the server of task {self.task}", self._start, host, port
            )
            # Variables other tasks place here live in this service as long as the server.
            self.variables = VariableService(self._wire, random.getrandbits(63))
            # partitions of other tasks' steps run here with those variables
            self.partitions = PartitionService(self._wire, self.variables.resources)
            register_task(self.target, self.variables)
        logger.info("task %s serves the tensor wire at %s", self.task, self.target)

    async def _start(self, host: str, port: int) -> TcpWire:
        get_runtime()  # the task's runtime: its devices run the partitions placed on this task
        wire = await TcpWire.start(self.task, host, port)
        for job in self._spec.jobs:
            for index in self._spec.task_indices(job):
                peer = f"/job:{job}/task:{index}"
                if peer != self.task:
                    wire.add_peer(peer, _split(self._spec.task_address(job, index)))
        return wire

    def join(self) -> None:
        """Block until the server stops (TF's never does: a ps task's main ends here)."""
        refuse_in_event_loop("Server.join()")
        self._stopped.wait()

    def stop(self) -> None:
        """Stop listening; receives waiting on other tasks fail; ``join`` returns."""
        with self._lock:
            if self._wire is not None:
                register_task(self.target, None)
            wire, self._wire = self._wire, None
        if wire is not None:
            background_loop().call(f"stopping the server of task {self.task}", wire.close)
        self._stopped.set()

    @staticmethod
    def create_local_server(config: Any = None, start: bool = True) -> Server:
        """A one-task cluster on loopback with a free port."""
        return Server({"localhost": ["localhost:0"]}, protocol="grpc", config=config, start=start)

    def __repr__(self) -> str:
        return f"<tf.train.Server task={self.task} target={self.target}>"
