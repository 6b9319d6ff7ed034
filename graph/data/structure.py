"""Element structures of datasets: nests of tuples, lists and dicts over components.

A dataset element is a nest (a single component, a tuple/list of nests, or a dict of nests with
string keys; dict items are ordered by sorted key, as ``tf.nest``). Pipelines carry elements
flattened (a tuple of numpy arrays); graphs see them packed again. Specs (``ComponentSpec``) give
each component's static dtype and shape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import shapes as S

__all__ = ["ComponentSpec", "flatten", "map_structure", "pack_as", "same_structure"]


@dataclass(frozen=True)
class ComponentSpec:
    """The static type of one component: a numpy dtype and a ``shapes.Shape``."""

    dtype: np.dtype
    shape: S.Shape


def _is_nest(x: Any) -> bool:
    return isinstance(x, (tuple, list, dict))


def flatten(nest: Any) -> list[Any]:
    """The leaves of ``nest`` in order (dict values by sorted key); iterative, any depth."""
    out: list[Any] = []
    stack = [nest]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x[k] for k in reversed(sorted(x)))
        elif isinstance(x, (tuple, list)):
            stack.extend(reversed(x))
        else:
            out.append(x)
    return out


def pack_as(template: Any, flat: Sequence[Any]) -> Any:
    """``flat`` laid out as ``template`` (the inverse of ``flatten``)."""
    leaves = iter(flat)

    def build(t: Any) -> Any:
        if isinstance(t, dict):
            return {k: build(t[k]) for k in sorted(t)}
        if isinstance(t, tuple) and hasattr(t, "_fields"):  # namedtuple
            return type(t)(*(build(v) for v in t))
        if isinstance(t, (tuple, list)):
            return type(t)(build(v) for v in t)
        return next(leaves)

    # Recursion depth is the nesting depth of one element's structure, written by hand in a
    # program: a handful of levels, never data-sized.
    packed = build(template)
    if next(leaves, _END) is not _END:
        raise ValueError("more values than the structure has components")
    return packed


_END = object()


def map_structure(fn: Callable[[Any], Any], nest: Any) -> Any:
    return pack_as(nest, [fn(x) for x in flatten(nest)])


def same_structure(a: Any, b: Any) -> bool:
    """True when ``a`` and ``b`` nest alike (types of containers ignored, dict keys compared)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, dict) or isinstance(y, dict):
            if not (isinstance(x, dict) and isinstance(y, dict)) or sorted(x) != sorted(y):
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif _is_nest(x) or _is_nest(y):
            if not (_is_nest(x) and _is_nest(y)) or len(x) != len(y):
                return False
            stack.extend(zip(x, y))
    return True
