"""Iterator ops and ``tf.data.Iterator`` (TF1): the graph side of pulling elements.

- ``IteratorV2`` (no inputs) outputs the session's iterator resource named ``shared_name``,
  created empty on first use (as VariableV2 outputs a variable reference).
- ``MakeIterator(handle, *captured)`` (re)starts that iterator on a dataset: the dataset is held
  in a process-local registry under a token attr (as py_func's functions), its captured tensors
  (placeholders, ...) are the op's inputs, so their values arrive when the initializer runs.
- ``OneShotIterator(*captured)`` outputs a resource started on its dataset at its first run.
- ``IteratorGetNext(handle)`` outputs the next element's components with the dataset's static
  shapes; at the end it fails with ``OutOfRangeError``, as TF.

The kernels and the host pipeline are in ``devices/``; every one of these ops is stateful (run
once per step, never merged) and CPU-only.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from typing import Any

from antcolony.errors import GraphError

from .. import dtypes
from ..core import Graph, Operation, Tensor, get_default_graph
from ..gradients import not_differentiable
from ..registry import register_op
from ..shapes import compatible
from ..tensor_shape import TensorShape
from .dataset import Dataset, normalize_types_shapes
from .structure import ComponentSpec, flatten, map_structure, pack_as, same_structure

__all__ = [
    "Iterator",
    "get_output_classes",
    "get_output_shapes",
    "get_output_types",
    "lookup_dataset",
    "make_initializable_iterator",
    "make_one_shot_iterator",
]

_DATASETS: dict[str, Dataset] = {}
_LOCK = threading.Lock()
_COUNTER = itertools.count()


def _register(graph: Graph, dataset: Dataset) -> str:
    with _LOCK:
        token = f"dataset_{next(_COUNTER)}"
        _DATASETS[token] = dataset
    weakref.finalize(graph, _DATASETS.pop, token, None)
    return token


def lookup_dataset(token: str) -> Dataset | None:
    """The dataset registered under ``token`` (None once the graph that made it is gone)."""
    return _DATASETS.get(token)


def _handle_shape(op: Operation) -> list:
    return [(dtypes.string, ())]


register_op("IteratorV2", stateful=True)(_handle_shape)
register_op("OneShotIterator", stateful=True)(_handle_shape)


@register_op("MakeIterator", stateful=True)
def _make_iterator_shape(op: Operation) -> list:
    return []


@register_op("IteratorGetNext", stateful=True)
def _get_next_shape(op: Operation) -> list:
    return list(zip(op.attrs["output_types"], op.attrs["output_shapes"]))


not_differentiable("IteratorV2", "OneShotIterator", "MakeIterator", "IteratorGetNext")


def _type_attrs(specs: list[ComponentSpec]) -> dict[str, Any]:
    return {"output_types": [s.dtype for s in specs], "output_shapes": [s.shape for s in specs]}


def _graph_for(dataset: Dataset) -> Graph:
    g = dataset.graph()
    if g is not None and g is not get_default_graph():
        raise GraphError(
            "the dataset captures tensors of a graph that is not the default graph; make the "
            "iterator inside `with graph.as_default():`"
        )
    return get_default_graph()


class Iterator:
    """``tf.data.Iterator``: ``get_next()`` tensors, and for a reinitializable iterator its
    ``initializer`` / ``make_initializer(dataset)``."""

    def __init__(self, handle: Tensor, initializer: Operation | None, element_spec: Any) -> None:
        self._handle = handle
        self._initializer = initializer
        self.element_spec = element_spec

    @staticmethod
    def from_structure(
        output_types: Any,
        output_shapes: Any = None,
        shared_name: str | None = None,
        output_classes: Any = None,
    ) -> Iterator:
        """An iterator of this element structure, started on a dataset by ``make_initializer``."""
        spec = normalize_types_shapes(output_types, output_shapes)
        g = get_default_graph()
        op = g.create_op(
            "IteratorV2", [], {"shared_name": shared_name or "", **_type_attrs(flatten(spec))}, "Iterator"
        )
        if not shared_name:
            op.attrs["shared_name"] = op.name
        return Iterator(op.outputs[0], None, spec)

    @property
    def initializer(self) -> Operation:
        if self._initializer is None:
            raise GraphError(
                "this iterator has no initializer: a one-shot iterator starts itself, and an iterator "
                "from Iterator.from_structure is started by make_initializer(dataset)"
            )
        return self._initializer

    def make_initializer(self, dataset: Dataset, name: str | None = None) -> Operation:
        """An op that (re)starts this iterator on ``dataset`` (same structure and dtypes)."""
        mine, theirs = flatten(self.element_spec), dataset.flat_specs()
        if not same_structure(self.element_spec, dataset.element_spec) or any(
            a.dtype != b.dtype or not compatible(a.shape, b.shape) for a, b in zip(mine, theirs)
        ):
            raise GraphError(
                f"make_initializer: the dataset's elements ({dataset.output_types}, {dataset.output_shapes}) "
                f"do not match the iterator's ({self.output_types}, {self.output_shapes})"
            )
        g = self._handle.graph
        with g.as_default():
            token = _register(g, dataset)
            inputs = [self._handle, *dataset.captured_tensors()]
            return g.create_op("MakeIterator", inputs, {"dataset": token}, name or "MakeIterator")

    def get_next(self, name: str | None = None) -> Any:
        """The next element's tensors, in the dataset's structure; OutOfRangeError at the end."""
        specs = flatten(self.element_spec)
        g = self._handle.graph
        with g.as_default():
            op = g.create_op("IteratorGetNext", [self._handle], _type_attrs(specs), name or "IteratorGetNext")
        return pack_as(self.element_spec, list(op.outputs))

    def string_handle(self, name: str | None = None) -> Tensor:
        raise GraphError("Iterator.string_handle (feedable iterators) is not supported; use make_initializer")

    @property
    def output_types(self) -> Any:
        return map_structure(lambda s: s.dtype, self.element_spec)

    @property
    def output_shapes(self) -> Any:
        return map_structure(lambda s: TensorShape(s.shape), self.element_spec)

    @property
    def output_classes(self) -> Any:
        return map_structure(lambda s: Tensor, self.element_spec)


def make_one_shot_iterator(dataset: Dataset) -> Iterator:
    """``tf.data.make_one_shot_iterator``: starts itself at its first run in each session."""
    g = _graph_for(dataset)
    token = _register(g, dataset)
    attrs = {"dataset": token, "shared_name": "", **_type_attrs(dataset.flat_specs())}
    op = g.create_op("OneShotIterator", dataset.captured_tensors(), attrs, "OneShotIterator")
    op.attrs["shared_name"] = op.name
    return Iterator(op.outputs[0], None, dataset.element_spec)


def make_initializable_iterator(dataset: Dataset, shared_name: str | None = None) -> Iterator:
    """``tf.data.make_initializable_iterator``: run ``iterator.initializer`` (feeding the
    dataset's placeholders) to start or restart it."""
    _graph_for(dataset)
    it = Iterator.from_structure(dataset.output_types, dataset.output_shapes, shared_name)
    it._initializer = it.make_initializer(dataset)
    return it


def get_output_types(dataset_or_iterator: Any) -> Any:
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator: Any) -> Any:
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator: Any) -> Any:
    return dataset_or_iterator.output_classes
