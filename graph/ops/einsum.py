"""Einsum: the equation is normalised when the graph is built (ellipses spelled out as letters,
the implicit output made explicit, as numpy), so the shape rule and the gradient see plain
subscripts.

The gradient of operand i contracts the output gradient with the other operands and a ones
tensor shaped like operand i: the ones operand supplies i's own letters even when they are
summed away in the forward equation (``ij->i``). A letter repeated within operand i (a diagonal,
``ii->i``) gets its gradient on the diagonal only: the contraction yields it once per distinct
letter and identity matrices spread it back onto the repeated axes, as TF does.
"""

from __future__ import annotations

import string
from typing import Any

from antcolony.errors import GraphError

from ..core import Operation, Tensor
from ..gradients import register_gradient
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op

__all__ = ["einsum"]

_LETTERS = set(string.ascii_letters)


def _split(equation: str) -> tuple[list[str], str | None]:
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    return lhs.split(","), (rhs if arrow else None)


def _normalize(equation: str, ranks: list[int | None]) -> str:
    """``equation`` with explicit output and, when the ranks are known, ellipses as letters."""
    ins, out = _split(equation)
    if len(ins) != len(ranks):
        raise GraphError(f"einsum equation {equation!r} has {len(ins)} operands but {len(ranks)} were given")
    for part in [*ins, out or ""]:
        bad = set(part.replace("...", "")) - _LETTERS
        if bad or part.count("...") > 1:
            raise GraphError(
                f"einsum equation {equation!r}: subscripts must be letters and at most one '...' each"
            )
    used = set("".join(ins)) & _LETTERS
    if out is None:
        # numpy's implicit mode: the letters that appear once, in alphabetical order.
        flat = "".join(p.replace("...", "") for p in ins)
        out = ("..." if any("..." in p for p in ins) else "") + "".join(
            sorted(c for c in set(flat) if flat.count(c) == 1)
        )
    if not any("..." in p for p in [*ins, out]):
        return ",".join(ins) + "->" + out
    if any(r is None for r, p in zip(ranks, ins) if "..." in p):
        return ",".join(ins) + "->" + out  # left to the kernel; no static shape or gradient
    spare = [c for c in string.ascii_uppercase + string.ascii_lowercase if c not in used]
    widths = [r - (len(p) - 3) for r, p in zip(ranks, ins) if "..." in p and r is not None]
    if any(w < 0 for w in widths):
        raise GraphError(f"einsum equation {equation!r} has more subscripts than an operand has dimensions")
    width = max(widths, default=0)
    ell = "".join(spare[:width])

    def expand(p: str, w: int) -> str:
        return p.replace("...", ell[width - w :]) if "..." in p else p

    new_ins = [expand(p, r - (len(p) - 3) if "..." in p and r is not None else 0) for p, r in zip(ins, ranks)]
    if "..." in out:
        out = out.replace("...", ell)
    return ",".join(new_ins) + "->" + out


@register_op("Einsum")
def _einsum_shape(op: Operation) -> list:
    ins, out = _split(op.attrs["equation"])
    first = op.inputs[0]
    if any(t.dtype != first.dtype for t in op.inputs):
        raise ValueError(f"einsum operands have different dtypes: {[t.dtype.name for t in op.inputs]}")
    if out is None or "..." in op.attrs["equation"] or any(t._shape is None for t in op.inputs):
        return [(first.dtype, None)]
    sizes: dict[str, int | None] = {}
    for p, t in zip(ins, op.inputs):
        shape = t._shape
        assert shape is not None  # unknown ranks returned above
        if len(p) != len(shape):
            raise ValueError(f"subscripts {p!r} name {len(p)} dimensions but {t.name} has shape {t.shape}")
        for c, d in zip(p, shape):
            old = sizes.get(c)
            if old is not None and d is not None and d != old and 1 not in (d, old):
                raise ValueError(f"dimension {c!r} is {old} in one operand and {d} in {t.name}")
            if old is None or old == 1:
                sizes[c] = d
    if set(out) - set(sizes):
        raise ValueError(f"output subscripts {out!r} name letters no operand has")
    return [(first.dtype, tuple(sizes[c] for c in out))]


def einsum(equation: str, *inputs: Any, name: str | None = None, **kwargs: Any) -> Tensor:
    """Sum of products over the letters the output drops (numpy's einsum equations)."""
    if kwargs:
        raise TypeError(f"einsum got unexpected keyword arguments {sorted(kwargs)}")
    ts = [convert_to_tensor(x) for x in inputs]
    ranks = [None if t._shape is None else len(t._shape) for t in ts]
    eq = _normalize(equation, ranks)
    return make_op("Einsum", ts, {"equation": eq}, name or "Einsum").outputs[0]


@register_gradient("Einsum")
def _einsum_grad(op: Operation, grad: Tensor) -> list:
    from .array import ones_like
    from .math import reduce_to

    ins, out = _split(op.attrs["equation"])
    if out is None or "..." in op.attrs["equation"]:
        raise GraphError(
            f"einsum '{op.name}': the gradient needs the operands' ranks known when the graph is built"
        )
    grads = []
    for i, (p, x) in enumerate(zip(ins, op.inputs)):
        others = [(q, t) for j, (q, t) in enumerate(zip(ins, op.inputs)) if j != i]
        distinct = "".join(dict.fromkeys(p))
        eq = ",".join([out, *(q for q, _ in others), p]) + "->" + distinct
        g = einsum(eq, grad, *(t for _, t in others), ones_like(x))
        if distinct != p:
            g = _onto_diagonals(op, i, g, distinct, p, x)
        # A letter of size 1 here that broadcast against a longer one elsewhere: sum it back.
        grads.append(reduce_to(g, x))
    return grads


def _onto_diagonals(
    op: Operation, index: int, g: Tensor, distinct: str, subscripts: str, x: Tensor
) -> Tensor:
    """``g`` (over the distinct letters of ``subscripts``) placed on the diagonals of ``x``'s shape:
    each repeat of a letter is renamed to a fresh letter tied to the first by an identity matrix."""
    from .array_composite import eye

    used = set(op.attrs["equation"])
    fresh = iter(c for c in string.ascii_letters if c not in used)
    renamed, eyes, seen = [], [], set()
    for axis, c in enumerate(subscripts):
        if c not in seen:
            seen.add(c)
            renamed.append(c)
            continue
        size = None if x._shape is None else x._shape[axis]
        if size is None:
            raise GraphError(
                f"einsum '{op.name}': the gradient of operand {index} ({subscripts!r} repeats {c!r}) needs "
                f"the size of axis {axis} known when the graph is built"
            )
        new = next(fresh)
        renamed.append(new)
        eyes.append((c + new, eye(size, dtype=x.dtype)))
    eq = ",".join([distinct, *(e for e, _ in eyes)]) + "->" + "".join(renamed)
    return einsum(eq, g, *(t for _, t in eyes))
