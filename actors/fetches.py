"""Fetch structures: flatten any nesting of list/tuple/namedtuple/dict of fetches, and rebuild it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from antcolony.errors import GraphError, InvalidFetchError
from antcolony.graph.core import Graph, Operation, Tensor
from antcolony.graph.indexed_slices import IndexedSlices, IndexedSlicesValue


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def flatten(structure: Any) -> tuple[list[Any], Callable[[list[Any]], Any]]:
    """Leaves of ``structure`` and a function rebuilding it from a list of leaf values."""
    leaves: list[Any] = []
    builder = _walk(structure, leaves)
    return leaves, lambda values: builder(iter(values))


def _walk(x: Any, leaves: list[Any]) -> Callable[[Any], Any]:
    # A module function, not a closure over itself: a self-referencing closure is a reference
    # cycle, garbage for the collector on every plan built.
    if isinstance(x, dict):
        keys = list(x)
        parts = [_walk(x[k], leaves) for k in keys]
        kind = type(x)
        return lambda it: kind((k, p(it)) for k, p in zip(keys, parts))
    if isinstance(x, (list, tuple)):
        parts = [_walk(v, leaves) for v in x]
        if _is_namedtuple(x):
            ntype = type(x)
            return lambda it: ntype(*[p(it) for p in parts])
        sequence = type(x)
        return lambda it: sequence(p(it) for p in parts)
    fetch_parts = getattr(x, "_fetch_parts", None)
    if fetch_parts is not None:
        # A composite fetch (e.g. a SparseTensor): its component tensors, then its value type.
        tensors, make = fetch_parts()
        part_builders = [_walk(t, leaves) for t in tensors]
        return lambda it: make([p(it) for p in part_builders])
    if isinstance(x, IndexedSlices):
        # fetched as TF1 does: an IndexedSlicesValue of its three tensors' values
        parts = [_walk(t, leaves) for t in (x.values, x.indices, x.dense_shape) if t is not None]
        return lambda it: IndexedSlicesValue(*[p(it) for p in parts], *([None] * (3 - len(parts))))
    leaves.append(x)
    return next


class FetchPlan:
    """The unique tensors and target ops of a fetch structure, and how to rebuild its result."""

    def __init__(self, graph: Graph, fetches: Any) -> None:
        leaves, self._pack = flatten(fetches)
        self.tensors: list[Tensor] = []
        self.targets: list[Operation] = []
        self._leaf_slots: list[int] = []
        # (fed tensors in feed order) -> (executor, fetch positions): filled by the session
        self.executors: dict[tuple[Any, ...], Any] = {}
        seen: dict[int, int] = {}
        for leaf in leaves:
            el = _resolve(graph, leaf)
            if isinstance(el, Operation):
                if el not in self.targets:
                    self.targets.append(el)
                self._leaf_slots.append(-1)
                continue
            if id(el) not in seen:
                seen[id(el)] = len(self.tensors)
                self.tensors.append(el)
            self._leaf_slots.append(seen[id(el)])
        # a lone tensor (not in a list): its value is the result, the hot case of session.run
        self.single = len(leaves) == 1 and not isinstance(fetches, (list, tuple, dict)) and bool(self.tensors)

    def pack(self, values: list[Any]) -> Any:
        if self.single:
            return values[0]
        return self._pack([None if s < 0 else values[s] for s in self._leaf_slots])


def _resolve(graph: Graph, leaf: Any) -> Tensor | Operation:
    if leaf is None:
        raise InvalidFetchError(
            None, None, "Fetch argument None is invalid; fetch a Tensor, Operation or name"
        )
    try:
        element = graph.as_graph_element(leaf)
        if isinstance(element, Tensor) and element.op.type == "VariableV2":
            return graph.fetch_read_of(element)  # a variable's reference fetches its value, as in TF1
        return element
    except GraphError as exc:
        raise InvalidFetchError(
            None,
            None,
            f"Fetch argument {leaf!r} cannot be interpreted as a Tensor or Operation: {exc}; fetch "
            "an element of the session's graph (names look like 'op' or 'op:0')",
        ) from None


def as_user_value(value: Any) -> Any:
    """A fetched value as TF1's ``session.run`` returns it: a 0-d array as its numpy scalar
    (``np.float32(1.0)``, bytes for a string), anything else unchanged."""
    if value.__class__ is np.ndarray and not value.ndim:
        return value[()]
    return value
