"""``RecvNode``: receives a value from another partition through the step's rendezvous."""

from __future__ import annotations

from typing import Any

from antcolony.actors.frames import DEAD
from antcolony.actors.messages import Arrived
from antcolony.actors.node import NodeActor
from antcolony.actors.propagation import HELD, Outcome, propagate
from antcolony.devices.launch import Launch


class RecvNode(NodeActor):
    """A Recv: its start token's unit is held while it waits for its rendezvous key; the value's
    arrival (``Arrived``, a later turn) is returned by ``_arrived`` and handed to propagation
    like any node kind's outputs. A value to copy to the node's device goes through the copy
    worker first (``Launch(kind="copy")``, handed on at its ``KernelDone`` as any launch's)."""

    def on_receive(self, msg: Any) -> None:
        cls = msg.__class__
        if cls is tuple:
            tag = msg[0]
            if not tag.aborted:
                fut = tag.step.rendezvous.recv(self.spec.recv_key)
                fut.add_done_callback(lambda f, tag=tag: self.ref.tell(Arrived(tag, f)))
        elif cls is Arrived:
            tag = msg.step
            if not tag.aborted:
                out = self._arrived(tag, msg.future)
                # propagation.settle, inline as NodeActor's: a Recv returns outputs or HELD
                if out.__class__ is not Outcome:
                    propagate(self, tag, out)
        else:
            self._on_other(msg)

    def _arrived(self, tag: Any, fut: Any) -> Any:
        """The rendezvous value of ``tag``, or ``HELD``: it is being copied, or it failed (the
        step is aborted by whoever failed it)."""
        if fut.cancelled() or fut.exception() is not None:
            return HELD
        value = fut.result()
        spec = self.spec
        if spec.compute is None or value is DEAD:
            return value
        spec.worker.tell(Launch(tag, spec.compute, [value], 1, self.ref, kind="copy"))
        return HELD


__all__ = ["RecvNode"]
