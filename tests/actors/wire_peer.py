"""A task process for the tensor-wire tests: listens, prints its port, sends one tensor to the
test's wire, then echoes every tensor it receives (step s) back as step s + 1000, until killed.

    python wire_peer.py TASK PEER_TASK PEER_HOST:PEER_PORT
"""

from __future__ import annotations

import asyncio
import sys

import numpy as np

from antcolony.actors.tcp_wire import TcpWire
from antcolony.actors.tensor_wire import rendezvous_key


async def main(task: str, peer: str, address: str) -> None:
    wire = await TcpWire.start(task)
    wire.add_peer(peer, address)
    print(wire.address[1], flush=True)
    out_key = rendezvous_key(f"{task}/device:CPU:0", 7, f"{peer}/device:CPU:0", "hello:0")
    await wire.send(peer, out_key, 1, np.arange(10, dtype=np.float32))
    in_key = rendezvous_key(f"{peer}/device:CPU:0", 1, f"{task}/device:CPU:0", "echo:0")
    step = 100
    while True:
        value = await wire.recv(in_key, step)
        await wire.send(peer, out_key, step + 1000, value)
        step += 1


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
