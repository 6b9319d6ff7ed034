"""``IndexedSlices``: a sparse gradient, rows ``values[i]`` at ``indices[i]`` of a dense tensor of
``dense_shape`` (TF1's ``tf.IndexedSlices``).

The gradient of a gather on axis 0 is one, so an embedding table's gradient costs the looked-up
rows, not the table. Repeated indices mean their rows add up. Any op that needs a dense input
densifies it (``convert_to_tensor`` calls ``_as_tensor``) with an unsorted segment sum, warning as
TF does when that is of unknown or large size.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

from . import shapes as S
from .core import Graph, Operation, Tensor

# TF warns when a densified IndexedSlices has at least this many elements.
LARGE_SPARSE_NUM_ELEMENTS = 100_000_000


class IndexedSlicesValue(NamedTuple):
    """A fetched IndexedSlices: its values, indices and dense shape as arrays (TF1's)."""

    values: Any
    indices: Any
    dense_shape: Any


class IndexedSlices:
    """``values`` (a Tensor of shape [n, ...]) at row ``indices`` (an int Tensor of shape [n]) of a
    tensor of shape ``dense_shape`` (a 1-D int Tensor, or None when unknown)."""

    # numpy must defer to our operators (as to a Tensor's)
    __array_priority__ = 100

    def __init__(self, values: Tensor, indices: Tensor, dense_shape: Tensor | None = None) -> None:
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape
        self._dense: Tensor | None = None

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def dense_shape(self) -> Tensor | None:
        return self._dense_shape

    @property
    def dtype(self) -> Any:
        return self._values.dtype

    @property
    def name(self) -> str:
        return self._values.name

    @property
    def op(self) -> Operation:
        return self._values.op

    @property
    def graph(self) -> Graph:
        return self._values.graph

    @property
    def device(self) -> str:
        return self._values.device

    @property
    def static_dense_shape(self) -> S.Shape:
        """The dense shape as far as it is known when the graph is built (None: unknown rank)."""
        if self._dense_shape is not None:
            known = _constant_shape(self._dense_shape)
            if known is not None:
                return known
        vs = self._values._shape
        if vs is None:
            return None
        return (None, *vs[1:])

    def __repr__(self) -> str:
        shape = "None" if self._dense_shape is None else self._dense_shape.name
        return f"IndexedSlices(indices={self._indices.name}, values={self._values.name}, dense_shape={shape})"

    def __neg__(self) -> IndexedSlices:
        from .ops.math import negative

        return IndexedSlices(negative(self._values), self._indices, self._dense_shape)

    def _as_tensor(self) -> Tensor:
        """The dense tensor (built once): rows summed at their indices, zeros elsewhere."""
        if self._dense is None:
            self._dense = _densify(self)
        return self._dense

    def _as_graph_element(self) -> Tensor:
        return self._as_tensor()


def _constant_shape(t: Tensor) -> tuple[int, ...] | None:
    """A shape tensor's value when the graph knows it (a constant, or the Shape of a fully
    defined tensor, possibly cast)."""
    op = t.op
    while op.type in ("Cast", "Identity"):
        op = op.inputs[0].op
    if op.type == "Const":
        return tuple(int(d) for d in op.attrs["value"].reshape(-1))
    if op.type == "Shape" and S.is_fully_defined(op.inputs[0]._shape):
        return tuple(op.inputs[0]._shape)
    return None


def _densify(s: IndexedSlices) -> Tensor:
    from .ops.segment import unsorted_segment_sum

    shape = s.static_dense_shape
    n = S.num_elements(shape)
    if n is None:
        warnings.warn(
            f"Converting sparse IndexedSlices ({s.name}) to a dense Tensor of unknown shape. "
            "This may consume a large amount of memory.",
            UserWarning,
            stacklevel=4,
        )
    elif n >= LARGE_SPARSE_NUM_ELEMENTS:
        warnings.warn(
            f"Converting sparse IndexedSlices ({s.name}) to a dense Tensor with {n} elements. "
            "This may consume a large amount of memory.",
            UserWarning,
            stacklevel=4,
        )
    with s.graph.as_default():
        if shape is not None and shape[0] is not None:
            rows: Any = int(shape[0])
        elif s.dense_shape is not None:
            rows = s.dense_shape[0]
        else:
            raise ValueError(f"IndexedSlices {s.name} without a dense_shape cannot be made dense")
        return unsorted_segment_sum(s.values, s.indices, rows)


def is_indexed_slices(value: Any) -> bool:
    return isinstance(value, IndexedSlices)
