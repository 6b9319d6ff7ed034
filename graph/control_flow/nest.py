"""Flattening and packing of nested results (Tensor / Operation leaves in lists, tuples, namedtuples
and dicts), for cond and while_loop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from antcolony.errors import GraphError


def is_sequence(x: Any) -> bool:
    return isinstance(x, (list, tuple, dict))


def _children(x: Any) -> list[Any]:
    if isinstance(x, dict):
        return [x[k] for k in sorted(x)]
    return list(x)


def flatten(structure: Any) -> list[Any]:
    """The leaves of ``structure`` in order (dicts by sorted key)."""
    out: list[Any] = []
    stack = [structure]
    while stack:
        item = stack.pop()
        if is_sequence(item):
            stack.extend(reversed(_children(item)))
        else:
            out.append(item)
    return out


def pack_as(structure: Any, flat: list[Any]) -> Any:
    """``flat`` arranged like ``structure``."""
    it = iter(flat)

    def build(s: Any) -> Any:
        if isinstance(s, dict):
            return type(s)((k, build(s[k])) for k in sorted(s))
        if isinstance(s, tuple) and hasattr(s, "_fields"):
            return type(s)(*[build(v) for v in s])
        if isinstance(s, (list, tuple)):
            return type(s)(build(v) for v in s)
        return next(it)

    return build(structure)


def map_structure(fn: Callable[[Any], Any], structure: Any) -> Any:
    return pack_as(structure, [fn(x) for x in flatten(structure)])


def assert_same_structure(a: Any, b: Any, what: str) -> None:
    """Raise GraphError unless ``a`` and ``b`` nest alike (lists and tuples are interchangeable)."""
    stack = [(a, b, "")]
    while stack:
        x, y, path = stack.pop()
        if is_sequence(x) != is_sequence(y) or isinstance(x, dict) != isinstance(y, dict):
            raise GraphError(f"{what}: structures differ at {path or 'the top'}: {_kind(x)} vs {_kind(y)}")
        if isinstance(x, dict):
            if sorted(x) != sorted(y):
                raise GraphError(
                    f"{what}: dict keys differ at {path or 'the top'}: {sorted(x)} vs {sorted(y)}"
                )
            stack.extend((x[k], y[k], f"{path}[{k!r}]") for k in sorted(x))
        elif is_sequence(x):
            if len(x) != len(y):
                raise GraphError(f"{what}: lengths differ at {path or 'the top'}: {len(x)} vs {len(y)}")
            stack.extend((u, v, f"{path}[{i}]") for i, (u, v) in enumerate(zip(x, y)))


def same_structure(a: Any, b: Any) -> bool:
    try:
        assert_same_structure(a, b, "")
    except GraphError:
        return False
    return True


def _kind(x: Any) -> str:
    return type(x).__name__
