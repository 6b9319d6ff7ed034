"""Static shapes: a tuple of int-or-None dims, or None when even the rank is unknown."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeGuard, overload

import numpy as np

Shape = tuple[int | None, ...] | None
KnownShape = tuple[int, ...]  # every dim known


def as_shape(value: Any) -> Shape:
    """Normalise a user shape (None, list, tuple with -1/None) to ``Shape``."""
    if value is None:
        return None
    if isinstance(value, (int, np.integer)):
        return (int(value),)
    if hasattr(value, "dims") and value.dims is None:
        return None  # a TensorShape of unknown rank
    dims = [getattr(d, "value", d) for d in value]  # a TensorShape's Dimensions, Dimension(None) too
    return tuple(None if d is None or int(d) < 0 else int(d) for d in dims)


def rank(shape: Shape) -> int | None:
    return None if shape is None else len(shape)


def num_elements(shape: Shape) -> int | None:
    if not is_fully_defined(shape):
        return None
    return int(np.prod(shape, dtype=np.int64))


def is_fully_defined(shape: Shape) -> TypeGuard[KnownShape]:
    return shape is not None and all(d is not None for d in shape)


def compatible(a: Shape, b: Shape) -> bool:
    """True when some concrete shape matches both."""
    if a is None or b is None:
        return True
    if len(a) != len(b):
        return False
    return all(x is None or y is None or x == y for x, y in zip(a, b))


@overload
def merge(a: tuple[int | None, ...], b: tuple[int | None, ...]) -> tuple[int | None, ...]: ...
@overload
def merge(a: Shape, b: Shape) -> Shape: ...
def merge(a: Shape, b: Shape) -> Shape:
    """The most specific shape compatible with both (caller checked ``compatible``)."""
    if a is None:
        return b
    if b is None:
        return a
    return tuple(x if x is not None else y for x, y in zip(a, b))


def broadcast(a: Shape, b: Shape) -> Shape:
    """numpy broadcasting of static shapes; raises ValueError when they cannot broadcast."""
    if a is None or b is None:
        return None
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + tuple(a)
    pb = (1,) * (n - len(b)) + tuple(b)
    out: list[int | None] = []
    for x, y in zip(pa, pb):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None or y is None:
            out.append(x if y is None else y)
        elif x == y:
            out.append(x)
        else:
            raise ValueError(f"shapes {format_shape(a)} and {format_shape(b)} cannot broadcast")
    return tuple(out)


def broadcast_all(shapes: Iterable[Shape]) -> Shape:
    out: Shape = ()
    for s in shapes:
        out = broadcast(out, s)
    return out


def normalize_axis(axis: int, ndim: int, what: str) -> int:
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"axis {axis} is out of range for {what} of rank {ndim}")
    return axis % ndim if ndim else 0


def format_shape(shape: Shape) -> str:
    if shape is None:
        return "<unknown>"
    return (
        "(" + ", ".join("?" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    )
