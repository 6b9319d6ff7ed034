"""``EngineNode``: a node actor whose kernel reads or writes variables, ordered by the
dependency engine (devices/engine/)."""

from __future__ import annotations

from typing import Any

from antcolony.actors.kernel_size import input_elements
from antcolony.actors.node import DeadAwareNode, NodeSpec
from antcolony.actors.propagation import HELD, settle
from antcolony.devices.launch import KernelDone


class EngineNode(DeadAwareNode):
    """A node that reads or writes variables: its kernel runs when the dependency engine grants
    the variables (reads shared, writes exclusive, in push order)."""

    def __init__(self, spec: NodeSpec) -> None:
        super().__init__(spec)
        self.granted: dict[Any, Any] = {}  # tag -> the engine op's on_complete, while launched

    def _ready(self, tag: Any, args: list[Any], dead: bool = False) -> Any:
        if dead:
            return self.dead_out
        spec = self.spec
        inline = not self.offload or (self.threshold > 0 and input_elements(args) < self.threshold)
        # An inline kernel whose variables nobody holds or waits for runs now, in this turn.
        held = spec.engine.hold(spec.var_reads, spec.var_writes) if inline else None
        if held is not None:
            try:
                return self._run(tag, args)
            finally:
                spec.engine.release(held)

        # The grant may arrive outside this actor's turns (when another op releases the vars), so
        # it runs as a turn; the engine op ends (``on_complete``) exactly once: right after an
        # inline kernel, or when a launched kernel's ``KernelDone`` arrives.
        def granted(on_complete: Any) -> None:
            if tag.aborted or not self.ref.is_alive:
                on_complete()
                return
            if self.offload and (self.threshold <= 0 or input_elements(args) >= self.threshold):
                self.granted[tag] = on_complete
                self.as_turn(self._run, tag, args)  # it launches: HELD until the KernelDone
            else:
                try:
                    self.as_turn(self._run_granted, tag, args)
                finally:
                    on_complete()

        spec.engine.push(granted, spec.device, spec.var_reads, spec.var_writes, "async")
        return HELD  # until the grant

    def _run_granted(self, tag: Any, args: list[Any]) -> None:
        """The grant's turn for an inline kernel: run it, and hand its outputs to propagation."""
        settle(self, tag, self._run(tag, args))

    def _on_kernel_done(self, msg: KernelDone) -> None:
        release_engine = self.granted.pop(msg.step, None)
        if release_engine is not None:
            release_engine()
        super()._on_kernel_done(msg)

    def on_stop(self) -> None:
        # Never leave an engine var blocked by a kernel whose completion will not be handled.
        for release_engine in self.granted.values():
            release_engine()
        self.granted.clear()


__all__ = ["EngineNode"]
