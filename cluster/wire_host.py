"""A task process's ends of the tensor wire, as one Ray actor class (``ray.remote(WireHost)``):
a TCP wire and an object-store wire for the task, and the methods peers call on it.

    host = ray.remote(WireHost).options(num_cpus=0).remote("/job:ps/task:0")
    address = await host.start.remote()
    await host.connect.remote("/job:worker/task:0", worker_address, worker_handle)
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from antcolony.actors.tcp_wire import TcpWire
from antcolony.actors.wire_mailbox import TensorWire, task_name
from antcolony.errors import InvalidArgumentError

from .ray_wire import RayWire

__all__ = ["TRANSPORTS", "WireHost"]

TRANSPORTS = ("tcp", "ray")


class WireHost:
    """The wires of one task; its methods run on the actor's event loop (an async actor)."""

    def __init__(self, task: str, host: str = "127.0.0.1") -> None:
        self.task = task_name(task)
        self._host = host
        self.wires: dict[str, TensorWire] = {}
        self._hold = asyncio.Event()

    async def start(self) -> tuple[str, int]:
        """Listen; returns the TCP address peers connect to."""
        tcp = await TcpWire.start(self.task, self._host)
        ray_wire = RayWire(self.task)
        # One mailbox for the task: a peer seen dead by either transport (a dropped connection,
        # a dead actor) fails the receives waiting on it over both.
        ray_wire.mailbox = tcp.mailbox
        self.wires = {"tcp": tcp, "ray": ray_wire}
        return tcp.address

    def connect(self, peer: str, address: tuple[str, int], handle: Any) -> None:
        tcp, ray_wire = self.wires["tcp"], self.wires["ray"]
        assert isinstance(tcp, TcpWire) and isinstance(ray_wire, RayWire)
        tcp.add_peer(peer, tuple(address))  # type: ignore[arg-type]
        ray_wire.add_peer(peer, handle)

    def wire(self, transport: str) -> TensorWire:
        try:
            return self.wires[transport]
        except KeyError:
            raise InvalidArgumentError(
                None, None, f"transport {transport!r}: use one of {TRANSPORTS}"
            ) from None

    async def send(self, transport: str, peer: str, key: str, step_id: int, value: np.ndarray) -> None:
        await self.wire(transport).send(peer, key, step_id, value)

    async def recv(self, transport: str, key: str, step_id: int, timeout: float | None = None) -> np.ndarray:
        return await self.wire(transport).recv(key, step_id, timeout)

    async def wire_deliver(self, head: bytes, refs: list[Any]) -> None:
        wire = self.wires["ray"]
        assert isinstance(wire, RayWire)
        await wire.deliver(head, refs)

    async def wire_hold(self) -> None:
        """Returns when this task closes; a peer holding this call learns of the task's death."""
        await self._hold.wait()

    async def close(self) -> None:
        self._hold.set()
        for wire in self.wires.values():
            await wire.close()
