"""ControlFlowNode: the executor's own implementation of TF's control-flow primitives.

Switch, Merge, Enter, Exit, NextIteration and LoopCond move values between branches, frames and
iterations, so they act on tags and dead values rather than through kernels:

- Switch(data, pred): the output of the untaken side is dead; dead data or pred: both dead.
- Merge: fires with (value, index) on its first live input once all its control inputs arrived
  (dead or alive: they order, they do not kill); dead when all its data inputs are dead. A loop's
  Merge gets one input per iteration (Enter at 0, NextIteration after) and fires on it.
- ControlTrigger: fires once all its control inputs arrived and is never dead, so what follows it
  runs even when it waited for an untaken branch.
- Enter: moves a value into iteration 0 of the child frame; an ``is_constant`` Enter (a loop
  invariant) is delivered to every iteration of the frame.
- Exit: moves the final (live) value out to the parent frame; dead exits are dropped unless the
  loop itself was dead (its Merge dead), so a loop on an untaken branch is dead as a whole.
- NextIteration: moves a value into the next iteration, which waits while ``parallel_iterations``
  iterations are unfinished; a dead value ends the loop.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.actors.frames import DEAD
from antcolony.actors.node import DeadAwareNode, NodeSpec
from antcolony.actors.propagation import NOTHING, conclude, emit, frame_for
from antcolony.actors.step import in_flight


class ControlFlowNode(DeadAwareNode):
    """A node whose ``spec.role`` names a control-flow primitive."""

    def __init__(self, spec: NodeSpec) -> None:
        super().__init__(spec)
        assert spec.role is not None  # node_class picks this class for control-flow roles only
        self.role: str = spec.role
        attrs = self.spec.role_attrs
        self.loop_merge = bool(attrs.get("loop_merge"))
        # Data inputs bound into the node (constants) never arrive as messages: a Merge counts only
        # the others, and holds a bound input as a live value from the start.
        bound = sorted(self.spec.bound_inputs, key=lambda b: b[0])
        self.n_data = int(attrs.get("n_data", 1)) - len(bound)
        self.bound_live = (bound[0][1], np.int32(bound[0][0])) if bound else None
        # every incoming edge that is not a data input is a control input
        self.n_control = max(spec.expected - self.n_data, 0) if self.role == "Merge" else 0
        self.handlers = {
            "Switch": self._switch,
            "LoopCond": self._identity,
            "Enter": self._enter,
            "Exit": self._exit,
            "NextIteration": self._next_iteration,
            "ControlTrigger": self._trigger,
        }

    def on_receive(self, msg: Any) -> None:
        if msg.__class__ is not tuple:
            self._on_other(msg)
            return
        tag, slot, value = msg
        if tag.aborted:
            self.partial.pop(tag, None)
            return
        if self.role == "Merge":
            self._merge(tag, slot, value)
            return
        gathered = self._gather(tag, slot, value)
        if gathered is not None:
            conclude(self, tag, self.handlers[self.role](tag, *gathered))

    # -- roles: each returns its outputs under the handled tag, or NOTHING ----------------------
    def _switch(self, tag: Any, args: list[Any], dead: bool) -> Any:
        if dead:
            return (DEAD, DEAD)
        data, pred = args[0], args[1]
        return (DEAD, data) if bool(pred) else (data, DEAD)

    def _identity(self, tag: Any, args: list[Any], dead: bool) -> Any:
        return DEAD if dead else args[0]

    def _trigger(self, tag: Any, args: list[Any], dead: bool) -> Any:
        return None  # a live control token whatever arrived

    def _merge(self, tag: Any, slot: int, value: Any) -> None:
        if self.loop_merge:
            # Iterations arrive as separate tags; a control input of a loop Merge would come from
            # outside the frame, which while_loop never builds, so it only orders nothing here.
            if slot < 0:
                conclude(self, tag)
            elif value is DEAD:
                tag.dead = True
                conclude(self, tag, (DEAD, DEAD))
            else:
                conclude(self, tag, (value, np.int32(slot)))
            return
        # [data inputs arrived, control inputs arrived, first live (value, index) or None, fired]
        state = self.partial.get(tag)
        if state is None:
            state = self.partial[tag] = [0, 0, self.bound_live, False]
        if slot < 0:
            state[1] += 1
        else:
            state[0] += 1
            if value is not DEAD and state[2] is None:
                state[2] = (value, np.int32(slot))
        out: Any = NOTHING
        if not state[3] and state[1] == self.n_control:
            if state[2] is not None:
                out = state[2]
                state[2], state[3] = (), True  # fired: drop the value, keep "a live input came"
            elif state[0] == self.n_data:
                state[3] = True
                out = (DEAD, DEAD)
        if state[0] == self.n_data and state[1] == self.n_control:
            del self.partial[tag]
        conclude(self, tag, out)

    def _enter(self, tag: Any, args: list[Any], dead: bool) -> Any:
        attrs = self.spec.role_attrs
        frame = frame_for(
            tag.step,
            tag,
            attrs["frame_name"],
            attrs["parallel_iterations"],
            attrs["constants"],
            attrs["enters"],
        )
        value = DEAD if dead else args[0]
        if attrs["is_constant"]:
            frame.add_constant(self.out_edges, value)
            first = frame.iterations.get(0)
            if first is not None and not in_flight(first):
                frame.iteration_idle(first)
        else:
            # ends the unit iteration 0 held for this loop variable
            conclude(self, frame.iteration(0), value)
        return NOTHING

    def _exit(self, tag: Any, args: list[Any], dead: bool) -> Any:
        if not dead or getattr(tag, "dead", False):
            emit(self, tag.frame.parent, DEAD if dead else args[0])
        return NOTHING

    def _next_iteration(self, tag: Any, args: list[Any], dead: bool) -> Any:
        if dead:
            return NOTHING
        frame, nxt, value = tag.frame, tag.iter + 1, args[0]
        if frame.may_start(nxt):
            self._enter_next(frame, nxt, value)
        else:
            # parallel_iterations reached: the value waits in the frame. Called inside another
            # node's turn (the one finishing the oldest iteration).
            frame.defer(nxt, lambda: self.as_turn(self._enter_next, frame, nxt, value))
        return NOTHING

    def _enter_next(self, frame: Any, nxt: int, value: Any) -> None:
        conclude(self, frame.iteration(nxt, hold=1), value)
