"""The op registry: op type -> OpDef (shape/dtype rule and flags).

Ops register next to their builder functions (``graph/ops/*.py``) with ``@register_op``. A shape
rule receives the new Operation (inputs and attrs set, outputs not yet) and returns one
``(dtype, shape)`` pair per output; it raises ``ValueError`` with a message naming the offending
shapes, which the graph re-raises as ``GraphError`` naming the op.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from antcolony.errors import GraphError

from .shapes import Shape

if TYPE_CHECKING:
    from .core import Operation

ShapeFn = Callable[["Operation"], "list[tuple[np.dtype, Shape]]"]


@dataclass(frozen=True)
class OpDef:
    """How an op type behaves at build time.

    ``stateful``: reads or writes state (variables, RNG); never pruned as a duplicate, run once per step.
    ``ref_inputs``: input slots that take a variable reference rather than a value.
    ``reads_refs``: the op only reads its ref inputs (else it writes them); the dependency engine
    lets reads of one variable version run together and orders writes.
    """

    type: str
    shape_fn: ShapeFn
    stateful: bool = False
    ref_inputs: tuple[int, ...] = ()
    reads_refs: bool = False


OP_DEFS: dict[str, OpDef] = {}


def register_op(
    op_type: str,
    *,
    stateful: bool = False,
    ref_inputs: tuple[int, ...] = (),
    reads_refs: bool = False,
) -> Callable[[ShapeFn], ShapeFn]:
    """Decorator registering ``fn`` as the shape rule of ``op_type``."""

    def deco(fn: ShapeFn) -> ShapeFn:
        if op_type in OP_DEFS:
            raise GraphError(f"op type {op_type!r} is registered twice")
        OP_DEFS[op_type] = OpDef(op_type, fn, stateful, ref_inputs, reads_refs)
        return fn

    return deco


def get_op_def(op_type: str) -> OpDef:
    try:
        return OP_DEFS[op_type]
    except KeyError:
        raise GraphError(f"unknown op type {op_type!r}; is the module defining it imported?") from None
