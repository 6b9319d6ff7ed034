"""Kernels of the iterator ops (graph/data/iterator_ops.py), over devices/data/ pipelines.

IteratorV2 / OneShotIterator output the session's IteratorResource (as VariableV2 outputs a
variable reference); MakeIterator and OneShotIterator start its pipeline on their dataset with
the captured tensors' values; IteratorGetNext pulls an element. Starting and pulling are blocking
kernels: they run on a CPU worker thread (pipelines read files, call user generators and map
functions), never on the event loop.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import FailedPreconditionError, InvalidArgumentError
from antcolony.graph.data.iterator_ops import lookup_dataset

from ..data.iterator_resource import IteratorResource, iterators_of
from .registry import Aliasing, Compute, KernelContext, register_kernel


def _resource(ctx: KernelContext) -> IteratorResource:
    table = iterators_of(ctx.resources)
    name = ctx.attr("shared_name")
    it = table.get(name)
    if it is None:
        # setdefault: two steps' kernels may get here at once; both must share one resource.
        it = table.setdefault(name, IteratorResource(name))
    return it


def _dataset(ctx: KernelContext) -> Any:
    ds = lookup_dataset(ctx.attr("dataset"))
    if ds is None:
        raise FailedPreconditionError(
            None, ctx.op, f"{ctx.op.name}: its dataset is gone (the graph was imported into another process?)"
        )
    return ds


def _check(value: Any, op: Any) -> IteratorResource:
    if not isinstance(value, IteratorResource):
        raise InvalidArgumentError(None, op, f"{op.name} expects an iterator handle as its first input")
    return value


@register_kernel("IteratorV2", devices=("CPU",))
def _iterator(ctx: KernelContext) -> Compute:
    return lambda: _resource(ctx)


@register_kernel("MakeIterator", devices=("CPU",), blocking=True)
def _make_iterator(ctx: KernelContext) -> Compute:
    op, ds = ctx.op, _dataset(ctx)
    captured = list(op.inputs[1:])
    seed = op.graph.seed

    def compute(handle: Any, *values: Any) -> None:
        _check(handle, op).start(ds, dict(zip(captured, values)), seed)

    return compute


@register_kernel("OneShotIterator", devices=("CPU",), blocking=True)
def _one_shot(ctx: KernelContext) -> Compute:
    op, ds = ctx.op, _dataset(ctx)
    captured = list(op.inputs)
    seed = op.graph.seed

    def compute(*values: Any) -> IteratorResource:
        it = _resource(ctx)
        it.start_once(ds, dict(zip(captured, values)), seed)
        return it

    return compute


@register_kernel("IteratorGetNext", devices=("CPU",), blocking=True, aliasing=Aliasing.HELD)
def _get_next(ctx: KernelContext) -> Compute:
    op = ctx.op
    n = len(op.outputs)

    def compute(handle: Any) -> Any:
        element = _check(handle, op).get_next(op)
        if len(element) != n:
            raise InvalidArgumentError(
                None, op, f"{op.name}: the pipeline produced {len(element)} components, {n} expected"
            )
        # A string scalar leaves as its bytes (as TF fetches it, and as a fed scalar is kept).
        out = [
            v[()] if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype == object else v for v in element
        ]
        return out[0] if n == 1 else tuple(out)

    return compute
