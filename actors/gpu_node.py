"""``PipelinedGpuNode``: a GPU node on the launch pipeline (devices/pipeline.py)."""

from __future__ import annotations

from typing import Any

from antcolony.actors.messages import Wire
from antcolony.actors.node import NodeActor
from antcolony.actors.propagation import HELD, ahead
from antcolony.devices.launch import KernelDone
from antcolony.devices.pipeline import Pending, PipelinedLaunch, UpstreamFailed


class PipelinedGpuNode(NodeActor):
    """A GPU node on the launch pipeline (``devices/pipeline.py``): its launch may wait on the
    device for producers' ``Pending`` inputs, and successors on its GPU worker get a ``Pending``
    as soon as its ``Launch`` is told (``_run`` returns its ``ahead`` outcome holding the ``Pending``), not its value at
    ``KernelDone``. Its own unit is still held until its ``KernelDone``, which sends the real
    value to the other successors, other partitions and fetches, then finishes the unit. Never
    sees dead values and touches no variable (the planner only pipelines such nodes)."""

    def _wire(self, msg: Wire) -> None:
        super()._wire(msg)
        pipe = set(self.spec.pipe_edges)
        edges = self.out_edges
        self.pipe_tells = tuple((deliver, slot) for k, (_, deliver, slot) in enumerate(edges) if k in pipe)
        self.out_edges = tuple(edge for k, edge in enumerate(edges) if k not in pipe)
        self.tells = None  # a GPU kernel never runs inline
        self.ahead = ahead()
        self.host_value = bool(self.out_edges or self.spec.send_keys or self.spec.fetch_slots)

    def _run(self, tag: Any, args: list[Any], dead: bool = False) -> Any:
        after = None
        if self.spec.pipe_in:
            after = tuple({id(a): a for a in args if a.__class__ is Pending}.values()) or None
        tells = self.pipe_tells
        if not tells:
            self.spec.worker.tell(PipelinedLaunch(tag, self.compute, args, self.ref, after, None))
            return HELD
        pending = Pending(self.host_value)
        # The worker hears of this launch before any dependent's (pipeline.py's invariants).
        self.spec.worker.tell(PipelinedLaunch(tag, self.compute, args, self.ref, after, pending))
        out = self.ahead
        out.value = pending
        return out  # the value itself comes with the KernelDone

    _ready = _run

    def _on_kernel_done(self, msg: KernelDone) -> None:
        error = msg.error
        if error is not None and isinstance(error, UpstreamFailed) and error.error is not None:
            # A producer failed: its own KernelDone fails the step naming it; this kernel did
            # not run, and its unit stays held until the step is aborted. (A producer that never
            # ran at all is a bug of the pipeline: this node fails the step rather than hang it.)
            return
        NodeActor._on_kernel_done(self, msg)


__all__ = ["PipelinedGpuNode"]
