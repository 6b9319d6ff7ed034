"""Implied control inputs: control edges a step need not deliver, because another path orders
the same two ops.

``with ac.control_dependencies(updates):`` puts an edge from every update on every op built in
the block, though most of those ops already depend on one that has it: Adam's beta-power
``Mul`` reads a ``ReadVariable`` with the same six edges, its ``Assign`` reads the ``Mul``, and
the train op waits on the ``Assign``s and on the updates again. In a DAG, an edge ``c -> x`` is
implied when ``c`` is a proper ancestor of another of ``x``'s predecessors; dropping implied
edges keeps every op's set of ancestors, so every ordering the graph asks for still holds.

Only for graphs without control flow: there a control input also carries deadness, which
another path (through a ``Merge``) need not.
"""

from __future__ import annotations

from collections.abc import Collection

from ..core import Operation

#: Most ancestors one op's search visits; a search that stops there keeps the edges it did not
#: prove implied (it never drops one it did not find).
SEARCH_LIMIT = 256


def implied_control_inputs(op: Operation, fed: Collection[int], in_step: Collection[int]) -> set[int]:
    """Ids of ``op``'s control inputs that reach ``op`` along another path of ops in the step.

    ``fed``: ids of fed tensors (a fed tensor's producer does not run for its consumers);
    ``in_step``: ids of the ops that run in the step.
    """
    if not op.control_inputs:
        return set()
    wanted = {id(c) for c in op.control_inputs}
    seen: set[int] = set()
    # Start from the predecessors' predecessors: whatever is found is a proper ancestor of one
    # of op's predecessors, so its own edge into op is implied.
    stack = [p for pred in _preds(op, fed, in_step) for p in _preds(pred, fed, in_step)]
    implied: set[int] = set()
    while stack and len(seen) < SEARCH_LIMIT:
        node = stack.pop()
        key = id(node)
        if key in seen:
            continue
        seen.add(key)
        if key in wanted:
            implied.add(key)
            if len(implied) == len(wanted):
                break
        stack.extend(_preds(node, fed, in_step))
    return implied


def _preds(op: Operation, fed: Collection[int], in_step: Collection[int]) -> list[Operation]:
    """The ops that run before ``op`` in the step: producers of its inputs that are not fed, and
    its control inputs."""
    preds = [t.op for t in op.inputs if id(t) not in fed and id(t.op) in in_step]
    preds += [c for c in op.control_inputs if id(c) in in_step]
    return preds


__all__ = ["SEARCH_LIMIT", "implied_control_inputs"]
