"""Tags and dead values: what an ``Input`` message carries besides its value (as TF's executor).

Every ``Input`` message carries a *tag*: the step itself for the root frame, or an ``IterTag``
(one iteration of one instance of a while loop's frame). Node actors key their pending inputs
by tag, so iterations of a loop, and concurrent steps, proceed independently.

The frames themselves (``FrameState``: iterations, invariants, deferred iterations) live with
propagation (propagation.py), which alone changes their counts, as TF keeps its frames in
PropagatorState: every unit under an iteration counts in the iteration and in the step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from antcolony.actors.propagation import FrameState


class _Dead:
    """The value of a tensor on an untaken branch."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<dead>"


DEAD = _Dead()


class IterTag:
    """One iteration of one frame instance."""

    __slots__ = ("step", "frame", "iter", "pending", "dead")

    def __init__(self, step: Any, frame: FrameState, iteration: int) -> None:
        self.step = step
        self.frame = frame
        self.iter = iteration
        self.pending = 0  # units in flight under this iteration (propagation.py's to change)
        self.dead = False  # the loop's Merge was dead here: its Exits pass dead values out

    @property
    def aborted(self) -> bool:
        return self.step.aborted

    @property
    def trace(self) -> Any:
        return self.step.trace

    @property
    def rendezvous(self) -> Any:
        return self.step.rendezvous

    def __repr__(self) -> str:
        return f"<{self.frame.name} iter {self.iter} of step {self.step.id}>"
