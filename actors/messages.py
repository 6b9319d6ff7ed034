"""Messages of the executor protocol (session, executor actors, node actors).

Plain ``__slots__`` classes: some are created once per node per step, so they must be cheap.
The device protocol (``Launch``, ``KernelDone``) lives in ``devices/launch.py``.

``Input`` is a plain tuple ``(tag, slot, value)``: a value (or a control token, slot CONTROL)
for one input slot of a node under one tag (a step, or a loop iteration). It is created once
per edge per step, and a tuple is cheaper to make than a slotted instance; node actors
recognise it by ``msg.__class__ is tuple``. ``CachedExecutor.start`` starts a step by telling the
``StepState`` itself to each partition's executor.

One name per event:

====================  =====================  ==================================================
message               from -> to             event
====================  =====================  ==================================================
``Wire``              executor -> node       the node's successors, once, before any step
``StepDrained``       step.py -> coordinator nothing of the step is in flight any more
``NodeFailed``        node -> executor       a kernel failed; the step must abort
``AbortStep``         anyone -> executor,    abort the step with ``error``: fail it, drop state
                      executor -> node
``StepCompleted``     coordinator -> others  the step succeeded; partitions forget it
``ForgetStep``        executor -> node       drop a completed step's leftover inputs (loops)
``Arrived``           rendezvous -> Recv     a value from another partition is ready (or failed)
====================  =====================  ==================================================
"""

from __future__ import annotations

from typing import Any

CONTROL = -1  # slot of a control-edge or start token: carries no value


class Wire:
    """A node's out edges as ``(output index, successor ref, input slot)`` and its executor."""

    __slots__ = ("out_edges", "executor")

    def __init__(self, out_edges: tuple[tuple[int, Any, int], ...], executor: Any) -> None:
        self.out_edges = out_edges
        self.executor = executor


class StepDrained:
    """Nothing of ``step`` is in flight any more (told by ``step.finished`` only)."""

    __slots__ = ("step",)

    def __init__(self, step: Any) -> None:
        self.step = step


class NodeFailed:
    """A node's kernel failed in a step; ``error`` is an OpError naming the node."""

    __slots__ = ("step", "error")

    def __init__(self, step: Any, error: BaseException) -> None:
        self.step = step
        self.error = error


class AbortStep:
    """Abort a step (kernel failure, timeout, cancellation, close): fail it with ``error`` and
    drop its state."""

    __slots__ = ("step", "error")

    def __init__(self, step: Any, error: BaseException) -> None:
        self.step = step
        self.error = error


class StepCompleted:
    """The step succeeded: the other partitions drop it from their active set."""

    __slots__ = ("step",)

    def __init__(self, step: Any) -> None:
        self.step = step


class ForgetStep:
    """The step succeeded: drop partial inputs it left in loop frames."""

    __slots__ = ("step",)

    def __init__(self, step: Any) -> None:
        self.step = step


class Arrived:
    """A Recv's rendezvous value is ready (or failed): ``future`` is the rendezvous slot."""

    __slots__ = ("step", "future")

    def __init__(self, step: Any, future: Any) -> None:
        self.step = step
        self.future = future
