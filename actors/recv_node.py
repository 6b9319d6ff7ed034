"""``RecvNode``: receives a value from another partition through the step's rendezvous."""

from __future__ import annotations

from typing import Any

from antcolony.actors.frames import DEAD
from antcolony.actors.messages import Arrived
from antcolony.actors.node import NodeActor
from antcolony.actors.propagation import propagate
from antcolony.devices.launch import Launch


class RecvNode(NodeActor):
    """A Recv: on its start token it waits for its rendezvous key, then copies the value to its
    device through the copy worker (``Launch(kind="copy")``) and emits it like any node."""

    def on_receive(self, msg: Any) -> None:
        if msg.__class__ is tuple:
            tag = msg[0]
            if not tag.aborted:
                fut = tag.step.rendezvous.recv(self.spec.recv_key)
                fut.add_done_callback(lambda f, tag=tag: self.ref.tell(Arrived(tag, f)))
        elif msg.__class__ is Arrived:
            self._on_arrived(msg)
        else:
            self._on_other(msg)

    def _on_arrived(self, msg: Arrived) -> None:
        tag, fut = msg.step, msg.future
        if tag.aborted or fut.cancelled() or fut.exception() is not None:
            return
        value = fut.result()
        spec = self.spec
        if spec.compute is None or value is DEAD:
            propagate(self, tag, value)
        else:
            spec.worker.tell(Launch(tag, spec.compute, [value], 1, self.ref, kind="copy"))


__all__ = ["RecvNode"]
