"""How large a kernel's inputs and outputs are: what decides whether a node's kernel runs inline
or is launched on its device worker (node.py, engine_node.py, and propagation.py's drain of a
segment), whether a variable kernel can join a segment (segment_plan.py), and what a trace
records."""

from __future__ import annotations

import operator
from typing import Any

from antcolony.graph import shapes as S

_size = operator.attrgetter("size")


def input_elements(args: list[Any]) -> int:
    """Elements in a kernel's inputs (1 for an input without ``size``, e.g. a Python number)."""
    try:
        return sum(map(_size, args))  # in C: every array, and a VarRef (size 1)
    except AttributeError:
        return sum(getattr(a, "size", 1) for a in args)


def static_input_elements(op: Any) -> int | None:
    """The most elements ``input_elements`` can count for ``op``'s inputs in any step, from their
    static shapes (a variable's reference counts one); None when a shape is not fully known."""
    refs = op.op_def.ref_inputs
    total = 0
    for slot, t in enumerate(op.inputs):
        n = 1 if slot in refs else S.num_elements(t._shape)
        if n is None:
            return None
        total += n
    return total


def output_nbytes(out: Any) -> int:
    """Output bytes for a trace record (the trace must not keep the values alive)."""
    outs = out if isinstance(out, tuple) else (out,)
    return sum(int(getattr(o, "nbytes", 0)) for o in outs)


__all__ = ["input_elements", "output_nbytes", "static_input_elements"]
