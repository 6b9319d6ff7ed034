"""A step's fetch slots (``StepState.fetched``), filled in place as TF's executor fills its call
frame's retvals: by the host partition's node that produces a fetched value, before it finishes
the unit that produced it, and by the coordinator for a fetch that is also fed.

Every writer runs on the loop's thread, in a host-partition actor's turn (fetches are served on
the host: ``planner._wire_fetches``). The coordinator reads the slots only when the step has
nothing in flight, so every write happened before (step.py's count orders them). A write to an
aborted step is dropped: the step's values are never read, and must not be kept alive by it.
"""

from __future__ import annotations

from typing import Any

from antcolony.actors.frames import DEAD
from antcolony.actors.step import UNSET, StepState


def put(step: StepState, j: int, value: Any) -> None:
    """Fetch slot ``j`` of ``step`` holds ``value`` (a dead value fails the step at completion)."""
    if step.aborted:
        return
    fetched = step.fetched
    if fetched[j] is UNSET:
        step.fetches_set += 1
    fetched[j] = value
    if value is DEAD:
        step.dead_fetch = True


def put_outputs(step: StepState, fetch_slots: tuple[tuple[int, int], ...], single: bool, out: Any) -> None:
    """The outputs a node serves as fetches: ``fetch_slots`` holds (output index, fetch index)
    pairs, ``out`` is the kernel's output (its only one when ``single``, else a tuple)."""
    for index, j in fetch_slots:
        put(step, j, out if single else out[index])
