"""Prune: the subgraph a step needs to compute its fetches and run its targets."""

from __future__ import annotations

from collections.abc import Iterable

from ..core import Operation, Tensor


def prune(
    fetches: Iterable[Tensor], targets: Iterable[Operation], feeds: Iterable[Tensor]
) -> list[Operation]:
    """Ops reachable backwards from fetches and targets, not crossing fed tensors; topological order.

    An op whose outputs are all fed is not needed; an op with one fed output is still needed if
    another of its outputs is consumed. A control input whose outputs are all fed is met by the
    feed (TF1 moves such an edge onto the fed value), so it is not followed either: callers skip
    control inputs that are not in the step. Walks iteratively, so deep graphs are fine.
    """
    fed = {id(t) for t in feeds}
    needed: dict[int, Operation] = {}
    stack: list[Operation] = [t.op for t in fetches if id(t) not in fed]
    stack.extend(targets)
    while stack:
        op = stack.pop()
        if id(op) in needed:
            continue
        needed[id(op)] = op
        for t in op.inputs:
            if id(t) not in fed and id(t.op) not in needed:
                stack.append(t.op)
        for c in op.control_inputs:
            if id(c) not in needed and not _all_fed(c, fed):
                stack.append(c)
    # Creation order is a topological order: an op's inputs exist before it is created.
    return sorted(needed.values(), key=lambda o: o._id)


def _all_fed(op: Operation, fed: set[int]) -> bool:
    return bool(op.outputs) and all(id(t) in fed for t in op.outputs)
