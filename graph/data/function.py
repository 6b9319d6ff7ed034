"""Tracing a dataset's Python function (``map``, ``filter``) into a small function graph.

TF1 traces a ``Dataset.map`` function once, on placeholder-like tensors, into a graph function
the runtime runs per element. Here the function is traced once into its own ``Graph`` (not the
program's graph, so its ops never enter the program's collections, initializers or pruning): one
Placeholder per input component, the function's results as its outputs. The host pipeline
(``devices/data/``) runs that graph per element with the CPU kernels, off the event loop, so
``lambda x, y: (ac.cast(x, ac.float32) / 255., y)``, ``parse_single_example`` and ``py_func``
work as in TF. Limits, by this decision: the function cannot capture tensors of the program's
graph (pass their values as numpy or zip them into the dataset), nor use variables or control
flow (cond / while_loop); the error says so when tracing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from antcolony.errors import GraphError

from ..core import Graph, Tensor
from ..op_builder import convert_to_tensor
from ..ops.constant import placeholder
from .structure import ComponentSpec, flatten, pack_as

__all__ = ["TracedFunction", "call_with_element", "trace_function"]


@dataclass
class TracedFunction:
    """A function graph: placeholders in, flat outputs out, and the outputs' nest template."""

    graph: Graph
    inputs: list[Tensor]
    outputs: list[Tensor]
    output_structure: Any
    name: str

    @property
    def output_specs(self) -> list[ComponentSpec]:
        return [ComponentSpec(t.dtype, t._shape) for t in self.outputs]


def call_with_element(fn: Callable[..., Any], element: Any) -> Any:
    """``fn(*element)`` for a tuple element, ``fn(element)`` otherwise (as ``Dataset.map``)."""
    if isinstance(element, tuple) and not hasattr(element, "_fields"):
        return fn(*element)
    return fn(element)


_UNSUPPORTED = ("VariableV2", "Switch", "Merge", "Enter", "Exit", "NextIteration")


def trace_function(
    fn: Callable[..., Any], input_structure: Any, what: str, outer_seed: int | None
) -> TracedFunction:
    """Trace ``fn`` on placeholders laid out as ``input_structure`` (a nest of ComponentSpec)."""
    if not callable(fn):
        raise GraphError(f"{what} needs a callable, got {fn!r}")
    g = Graph()
    g.seed = outer_seed  # random ops in the function draw as they would in the program's graph
    with g.as_default():
        specs = flatten(input_structure)
        args = [placeholder(s.dtype, s.shape, name=f"arg{i}") for i, s in enumerate(specs)]
        try:
            result = call_with_element(fn, pack_as(input_structure, args))
        except GraphError as exc:
            hint = ""
            if "different graph" in str(exc):
                hint = (
                    ". A dataset function is traced into its own graph: it cannot use tensors of the "
                    "program's graph (pass numpy values instead)"
                )
            raise GraphError(f"{what}: tracing the function failed: {exc}{hint}") from exc
        if isinstance(result, list):
            result = tuple(result)  # as TF: a list result is a tuple of components
        outputs = []
        for leaf in flatten(result):
            if hasattr(leaf, "dense_shape"):
                raise GraphError(
                    f"{what}: the function returned a SparseTensor; dataset elements are dense here: "
                    "convert it inside the function with tf.sparse.to_dense"
                )
            t = convert_to_tensor(leaf)
            if t.graph is not g:
                raise GraphError(
                    f"{what}: the function returned {t.name}, a tensor of another graph; a dataset "
                    "function may only return tensors it computed from its arguments"
                )
            outputs.append(t)
    for op in g.get_operations():
        if op.type in _UNSUPPORTED:
            raise GraphError(
                f"{what}: the function builds a {op.type} op ({op.name}); dataset functions support "
                "neither variables nor control flow here: compute it with py_func or outside the dataset"
            )
    template = pack_as(result, list(range(len(outputs)))) if outputs else ()
    return TracedFunction(g, args, outputs, template, what)
