"""Partition: split a placed subgraph per device, with Send/Recv pairs joined by a rendezvous.

Every edge whose producer and consumer sit on different devices becomes one transfer per
(tensor, destination device): the producer's partition sends the value under a rendezvous key,
the destination partition has a Recv that receives it (and copies it through the destination's
copy worker). Fed tensors are produced on the host; fetched tensors are consumed on the host,
so a fetch of a GPU tensor is a transfer to the host too. Control edges across devices carry a
token under a ``^``-prefixed key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..core import Operation, Tensor
from .place import HOST


@dataclass(frozen=True)
class Transfer:
    """One Send/Recv pair: ``tensor`` (None for a control token from ``control_src``) from src to dst."""

    key: str
    src: str
    dst: str
    tensor: Tensor | None = None
    control_src: Operation | None = None

    @classmethod
    def of_tensor(cls, t: Tensor, src: str, dst: str) -> Transfer:
        return cls(transfer_key(t.name, src, dst), src, dst, tensor=t)

    @classmethod
    def of_control(cls, op: Operation, src: str, dst: str) -> Transfer:
        return cls(transfer_key("^" + op.name, src, dst), src, dst, control_src=op)

    @property
    def name(self) -> str:
        """What it carries, as its key names it: the tensor's name, or ``^`` and the op's."""
        return self.key.split(";", 1)[0]


@dataclass
class Partition:
    device: str
    ops: list[Operation] = field(default_factory=list)
    sends: list[Transfer] = field(default_factory=list)
    recvs: list[Transfer] = field(default_factory=list)


def transfer_key(name: str, src: str, dst: str) -> str:
    return f"{name};{src};{dst}"


def partition(
    ops: Sequence[Operation],
    placement: dict[int, str],
    feeds: Sequence[Tensor],
    fetches: Sequence[Tensor],
) -> dict[str, Partition]:
    """Partitions by device; ops keep their topological order within each partition."""
    fed = {id(t) for t in feeds}
    parts: dict[str, Partition] = {}
    seen: set[str] = set()

    def part(device: str) -> Partition:
        if device not in parts:
            parts[device] = Partition(device)
        return parts[device]

    def add_transfer(tr: Transfer) -> None:
        if tr.key in seen:
            return
        seen.add(tr.key)
        part(tr.src).sends.append(tr)
        part(tr.dst).recvs.append(tr)

    def source_device(t: Tensor) -> str:
        return HOST if id(t) in fed else placement[id(t.op)]

    for op in ops:
        dst = placement[id(op)]
        part(dst).ops.append(op)
        for t in op.inputs:
            src = source_device(t)
            if src != dst:
                add_transfer(Transfer.of_tensor(t, src, dst))
        for c in op.control_inputs:
            if id(c) not in placement:
                continue  # all its outputs are fed: the feed is there before the step starts
            src = placement[id(c)]
            if src != dst:
                add_transfer(Transfer.of_control(c, src, dst))
    for t in fetches:
        src = source_device(t)
        if src != HOST:
            add_transfer(Transfer.of_tensor(t, src, HOST))
    part(HOST)
    return parts
