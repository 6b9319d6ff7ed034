"""Running a traced dataset function (graph/data/function.py) on the host, per element.

The function graph is small (a handful of ops per element), so it is run directly: its ops in
creation order (which is topological: an op's inputs exist before it), each by its CPU kernel,
on the calling pipeline thread, with no executor, actors or event loop involved.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from antcolony.devices.kernel_errors import as_op_error
from antcolony.errors import InvalidArgumentError, UnimplementedError
from antcolony.graph.core import Operation, Tensor
from antcolony.graph.data.function import TracedFunction

from ..kernels.registry import KernelContext, find_kernel
from ..resources import SessionResources

__all__ = ["HostFunction"]


def _needed_ops(fn: TracedFunction) -> list[Operation]:
    """The ops the outputs depend on (data and control edges), in creation order."""
    seen: set[int] = set()
    stack = [t.op for t in fn.outputs]
    while stack:
        op = stack.pop()
        if id(op) in seen:
            continue
        seen.add(id(op))
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return [op for op in fn.graph.get_operations() if id(op) in seen]


class HostFunction:
    """``fn(*flat_input_values) -> flat output values`` for one traced function."""

    def __init__(self, fn: TracedFunction, resources: SessionResources) -> None:
        self._fn = fn
        placeholders = {id(t.op) for t in fn.inputs}
        self._steps: list[tuple[Operation, Any]] = []
        for op in _needed_ops(fn):
            if id(op) in placeholders:
                continue
            kd = find_kernel(op.type, "CPU")
            if kd is None:
                raise UnimplementedError(
                    None,
                    op,
                    f"{fn.name}: op {op.type} ({op.name}) has no CPU kernel to run in a dataset function",
                )
            self._steps.append((op, kd.factory(KernelContext(op, np, resources, "/cpu:0"))))
        self._inputs = list(fn.inputs)
        self._outputs = list(fn.outputs)

    def __call__(self, args: Sequence[Any]) -> tuple[Any, ...]:
        values: dict[Tensor, Any] = dict(zip(self._inputs, args))
        for op, compute in self._steps:
            try:
                out = compute(*(values[t] for t in op.inputs))
            except Exception as exc:
                raise as_op_error(exc, op) from exc
            outs = op.outputs
            if len(outs) == 1:
                values[outs[0]] = out
            elif outs:
                for t, v in zip(outs, out):
                    values[t] = v
        try:
            return tuple(np.asarray(values[t]) for t in self._outputs)
        except KeyError as exc:  # an output that is an input passes through
            raise InvalidArgumentError(
                None, None, f"{self._fn.name}: output {exc} was not computed"
            ) from None
