"""Kernels of TF1's queues, readers, ``CountUpTo`` and ``DecodeCSV`` (graph/ops/queues.py and
readers.py), over devices/data/queue_resource.py. Dequeues and reads may wait for elements, so
they are blocking kernels (a worker thread, never the event loop); the rest are cheap."""

from __future__ import annotations

import csv
from typing import Any

import numpy as np

from antcolony.errors import InvalidArgumentError, OutOfRangeError

from ..data.queue_resource import QueueResource, ReaderResource, queues_of, stacked
from ..resources import check_ref
from .registry import Aliasing, Compute, KernelContext, register_kernel

_CPU = ("CPU",)
_READER_KINDS = {"TextLineReaderV2": "text", "WholeFileReaderV2": "whole", "TFRecordReaderV2": "tfrecord"}


def _shared(ctx: KernelContext, make: Any) -> Compute:
    name = ctx.attr("shared_name")

    def compute() -> Any:
        table = queues_of(ctx.resources)
        found = table.get(name)
        # setdefault: two steps' kernels may get here at once; both must share one resource.
        return found if found is not None else table.setdefault(name, make())

    return compute


@register_kernel("FIFOQueueV2", devices=_CPU, aliasing=Aliasing.HELD)
def _fifo(ctx: KernelContext) -> Compute:
    return _shared(ctx, lambda: QueueResource(ctx.op.name, ctx.attr("capacity")))


@register_kernel("PaddingFIFOQueueV2", devices=_CPU, aliasing=Aliasing.HELD)
def _padding_fifo(ctx: KernelContext) -> Compute:
    return _shared(ctx, lambda: QueueResource(ctx.op.name, ctx.attr("capacity"), pads=True))


@register_kernel("RandomShuffleQueueV2", devices=_CPU, aliasing=Aliasing.HELD)
def _shuffle(ctx: KernelContext) -> Compute:
    op = ctx.op

    def make() -> QueueResource:
        rng = ctx.resources.rng_for(op)
        return QueueResource(op.name, op.attrs["capacity"], op.attrs["min_after_dequeue"], rng)

    return _shared(ctx, make)


def _scalar_strings(arrays: tuple[Any, ...]) -> tuple[Any, ...]:
    # a 0-d string result is its ``bytes``, as TF fetches a scalar string (kernels/strings.py)
    return tuple(a[()] if a.ndim == 0 and a.dtype == object else a for a in arrays)


def _queue(value: Any, op: Any) -> QueueResource:
    if not isinstance(value, QueueResource):
        raise InvalidArgumentError(None, op, f"{op.name} expects a queue handle as its first input")
    return value


def _element(op: Any, parts: tuple[Any, ...]) -> tuple[Any, ...]:
    spec = op.inputs[0].op.attrs
    out = []
    for i, (p, s, t) in enumerate(zip(parts, spec["shapes"], spec["component_types"])):
        a = np.array(p, dtype=t, copy=True)  # the queue keeps it past the step
        if s is not None and len(s) == a.ndim and any(d is not None and d != n for d, n in zip(s, a.shape)):
            raise InvalidArgumentError(
                None, op, f"{op.name}: component {i} has shape {a.shape}, the queue's is {tuple(s)}"
            )
        out.append(a)
    return tuple(out)


@register_kernel("QueueEnqueueV2", devices=_CPU)
def _enqueue(ctx: KernelContext) -> Compute:
    op = ctx.op

    def compute(handle: Any, *parts: Any) -> None:
        _queue(handle, op).enqueue([_element(op, parts)], op)

    return compute


@register_kernel("QueueEnqueueManyV2", devices=_CPU)
def _enqueue_many(ctx: KernelContext) -> Compute:
    op = ctx.op

    def compute(handle: Any, *parts: Any) -> None:
        arrays = [np.asarray(p) for p in parts]
        counts = {a.shape[0] if a.ndim else -1 for a in arrays}
        if len(counts) != 1 or -1 in counts:
            raise InvalidArgumentError(
                None, op, f"{op.name}: every component needs the same first (batch) dimension, got {counts}"
            )
        rows = [_element(op, tuple(a[i] for a in arrays)) for i in range(counts.pop())]
        _queue(handle, op).enqueue(rows, op)

    return compute


def _dequeue_kernel(ctx: KernelContext, up_to: bool) -> Compute:
    op = ctx.op
    shapes, types = op.attrs["shapes"], op.attrs["component_types"]

    def compute(handle: Any, n: Any = None) -> Any:
        if n is None:
            return _one(_scalar_strings(_queue(handle, op).dequeue(1, op)[0]))
        count = int(n)
        if count < 0:
            raise InvalidArgumentError(None, op, f"{op.name}: cannot dequeue {count} elements")
        queue = _queue(handle, op)
        out = stacked(queue.dequeue(count, op, up_to), shapes, types, queue.pads)
        return out[0] if len(out) == 1 else out

    def _one(element: tuple[Any, ...]) -> Any:
        return element[0] if len(element) == 1 else element

    return compute


@register_kernel("QueueDequeueV2", devices=_CPU, waits=True, aliasing=Aliasing.FRESH)
@register_kernel("QueueDequeueManyV2", devices=_CPU, waits=True, aliasing=Aliasing.FRESH)
def _dequeue(ctx: KernelContext) -> Compute:
    return _dequeue_kernel(ctx, up_to=False)


@register_kernel("QueueDequeueUpToV2", devices=_CPU, waits=True, aliasing=Aliasing.FRESH)
def _dequeue_up_to(ctx: KernelContext) -> Compute:
    return _dequeue_kernel(ctx, up_to=True)


@register_kernel("QueueCloseV2", devices=_CPU)
def _close(ctx: KernelContext) -> Compute:
    op = ctx.op
    return lambda handle: _queue(handle, op).close(op.attrs.get("cancel_pending_enqueues", False))


@register_kernel("QueueSizeV2", devices=_CPU, aliasing=Aliasing.FRESH)
def _size(ctx: KernelContext) -> Compute:
    op = ctx.op
    return lambda handle: np.int32(len(_queue(handle, op)))


@register_kernel("CountUpTo", devices=_CPU, aliasing=Aliasing.FRESH)
def _count_up_to(ctx: KernelContext) -> Compute:
    op = ctx.op
    limit = op.attrs["limit"]

    def compute(ref: Any) -> Any:
        r = check_ref(ref, op)
        old = np.asarray(r.read())
        if int(old) >= limit:
            raise OutOfRangeError(None, op, f"Reached limit of {limit}")
        r.write(np.asarray(old + 1, dtype=old.dtype))
        return old.copy()

    return compute


for _t, _kind in _READER_KINDS.items():

    @register_kernel(_t, devices=_CPU, aliasing=Aliasing.HELD)
    def _reader(ctx: KernelContext, kind: str = _kind) -> Compute:
        op = ctx.op
        make = lambda: ReaderResource(  # noqa: E731
            kind, op.attrs.get("skip_header_lines", 0), op.attrs.get("compression_type", "")
        )
        return _shared(ctx, make)


@register_kernel("ReaderReadV2", devices=_CPU, waits=True, aliasing=Aliasing.FRESH)
def _read(ctx: KernelContext) -> Compute:
    op = ctx.op

    def compute(reader: Any, queue: Any) -> tuple[Any, Any]:
        if not isinstance(reader, ReaderResource):
            raise InvalidArgumentError(None, op, f"{op.name} expects a reader handle as its first input")
        return reader.read(_queue(queue, op), op)

    return compute


@register_kernel("DecodeCSV", devices=_CPU, aliasing=Aliasing.FRESH)
def _decode_csv(ctx: KernelContext) -> Compute:
    op = ctx.op
    delim, quoted, na = op.attrs["field_delim"], op.attrs["use_quote_delim"], op.attrs["na_value"]
    select = op.attrs["select_cols"]
    types = [t.dtype for t in op.inputs[1:]]

    def compute(records: Any, *defaults: Any) -> tuple[Any, ...]:
        recs = np.asarray(records, dtype=object)
        cols = [np.empty(recs.shape, dtype=t) for t in types]
        for at, record in enumerate(recs.reshape(-1)):
            text = record.decode() if isinstance(record, bytes) else str(record)
            fields = _fields(text, delim, quoted)
            if select:
                fields = [fields[c] for c in select if c < len(fields)]
            if len(fields) != len(types):
                raise InvalidArgumentError(
                    None, op, f"{op.name}: Expect {len(types)} fields but have {len(fields)} in record {at}"
                )
            for c, (field, default) in enumerate(zip(fields, defaults)):
                cols[c].reshape(-1)[at] = _value(op, field, na, np.asarray(default), types[c], c, at)
        return _scalar_strings(tuple(cols))

    return compute


def _fields(text: str, delim: str, quoted: bool) -> list[str]:
    if not text:
        return [""]
    if quoted:
        return next(csv.reader([text], delimiter=delim, quotechar='"'))
    return next(csv.reader([text], delimiter=delim, quoting=csv.QUOTE_NONE, quotechar=None))


def _value(op: Any, field: str, na: str, default: np.ndarray, dtype: Any, col: int, at: int) -> Any:
    if field == "" or (na and field == na):
        if default.size == 0:
            raise InvalidArgumentError(
                None, op, f"{op.name}: Field {col} is required but missing in record {at}!"
            )
        return default.reshape(-1)[0]
    try:
        if dtype == np.dtype(object):
            return field.encode()
        return dtype.type(int(field)) if dtype.kind in "iu" else dtype.type(float(field))
    except ValueError:
        raise InvalidArgumentError(
            None, op, f"{op.name}: Field {col} in record {at} is not a valid {dtype.name}: {field!r}"
        ) from None
