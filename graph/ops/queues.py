"""TF1's queues: ``tf.FIFOQueue`` and ``tf.RandomShuffleQueue``, the graph side.

A queue op (``FIFOQueueV2`` / ``RandomShuffleQueueV2``, no inputs) outputs the session's queue
resource named ``shared_name`` (as ``IteratorV2`` outputs an iterator); ``QueueEnqueue(Many)V2``,
``QueueDequeue(Many|UpTo)V2``, ``QueueCloseV2`` and ``QueueSizeV2`` take that handle first. The
resource and the kernels are in ``devices/``. Every op here is stateful and CPU-only. ``CountUpTo``
(``tf.train.limit_epochs``' counter) is here too: it ends an input with ``OutOfRangeError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import dtypes
from .. import shapes as S
from ..core import Operation, Tensor, get_default_graph
from ..gradients import not_differentiable
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op
from .state import _ref_of

__all__ = ["FIFOQueue", "PaddingFIFOQueue", "QueueBase", "RandomShuffleQueue", "count_up_to"]

_QUEUE_OPS = ("FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2")


def _handle(op: Operation) -> list:
    return [(dtypes.string, ())]


for _t in _QUEUE_OPS:
    register_op(_t, stateful=True)(_handle)


@register_op("QueueEnqueueV2", stateful=True)
@register_op("QueueEnqueueManyV2", stateful=True)
@register_op("QueueCloseV2", stateful=True)
def _no_outputs(op: Operation) -> list:
    return []


@register_op("QueueSizeV2", stateful=True)
def _size_shape(op: Operation) -> list:
    return [(dtypes.int32, ())]


@register_op("QueueDequeueV2", stateful=True)
def _dequeue_shape(op: Operation) -> list:
    return list(zip(op.attrs["component_types"], op.attrs["shapes"]))


@register_op("QueueDequeueManyV2", stateful=True)
@register_op("QueueDequeueUpToV2", stateful=True)
def _dequeue_many_shape(op: Operation) -> list:
    n = op.attrs["n"] if op.type == "QueueDequeueManyV2" else None
    return [
        (t, None if s is None else (n, *s)) for t, s in zip(op.attrs["component_types"], op.attrs["shapes"])
    ]


@register_op("CountUpTo", stateful=True, ref_inputs=(0,))
def _count_up_to_shape(op: Operation) -> list:
    ref = op.inputs[0]
    if ref.dtype not in (dtypes.int32, dtypes.int64):
        raise ValueError(f"CountUpTo needs an int32 or int64 variable, {ref.op.name} is {ref.dtype.name}")
    return [(ref.dtype, ())]


not_differentiable(
    *_QUEUE_OPS,
    "QueueEnqueueV2",
    "QueueEnqueueManyV2",
    "QueueCloseV2",
    "QueueSizeV2",
    "QueueDequeueV2",
    "QueueDequeueManyV2",
    "QueueDequeueUpToV2",
    "CountUpTo",
)


def count_up_to(ref: Any, limit: int, name: str | None = None) -> Tensor:
    """Increments the variable and returns its value before; at ``limit`` an OutOfRangeError."""
    return make_op("CountUpTo", [_ref_of(ref)], {"limit": int(limit)}, name or "CountUpTo").outputs[0]


def _listed(values: Any) -> list[Any]:
    return list(values) if isinstance(values, (list, tuple)) else [values]


class QueueBase:
    """A queue of tuples of tensors of fixed dtypes (and, when given, shapes)."""

    _op_type = ""

    def __init__(
        self,
        dtypes_: Sequence[Any],
        shapes: Sequence[Any] | None,
        names: Sequence[str] | None,
        capacity: int,
        shared_name: str | None,
        name: str,
        **attrs: Any,
    ) -> None:
        self._dtypes = [dtypes.as_dtype(d) for d in _listed(dtypes_)]
        given = _listed(shapes) if shapes is not None else [None] * len(self._dtypes)
        if len(given) != len(self._dtypes):
            raise ValueError(f"{name}: {len(given)} shapes given for {len(self._dtypes)} dtypes")
        self._shapes = [None if s is None else S.as_shape(s) for s in given]
        self._names = list(names) if names is not None else None
        self._capacity = int(capacity)
        g = get_default_graph()
        spec = {"component_types": self._dtypes, "shapes": self._shapes, "capacity": self._capacity}
        op = g.create_op(self._op_type, [], {**spec, "shared_name": shared_name or "", **attrs}, name)
        if not shared_name:
            op.attrs["shared_name"] = op.name
        self._op = op
        self.queue_ref = op.outputs[0]
        # TF1 names a queue's ops after the queue, in the scope they are made in: fifo_queue_Dequeue
        self._short = op.name.rsplit("/", 1)[-1]

    @property
    def name(self) -> str:
        return self._op.name

    @property
    def dtypes(self) -> list[Any]:
        return list(self._dtypes)

    @property
    def shapes(self) -> list[Any]:
        return list(self._shapes)

    @property
    def names(self) -> list[str] | None:
        return self._names

    def _components(self, vals: Any, many: bool) -> list[Tensor]:
        if isinstance(vals, dict):
            if self._names is None:
                raise ValueError(f"queue {self.name} has no names: enqueue a list, not a dict")
            vals = [vals[n] for n in self._names]
        values = _listed(vals)
        if len(values) != len(self._dtypes):
            raise ValueError(f"queue {self.name} holds {len(self._dtypes)} components, got {len(values)}")
        out = [convert_to_tensor(v, dtype=d) for v, d in zip(values, self._dtypes)]
        for t, s in zip(out, self._shapes):
            elem = t._shape[1:] if (many and t._shape is not None) else t._shape
            if s is not None and not S.compatible(elem, s):
                raise ValueError(
                    f"{t.name} of shape {S.format_shape(t._shape)} does not fit queue {self.name}'s "
                    f"component shape {S.format_shape(s)}{' (after the batch axis)' if many else ''}"
                )
        return out

    def enqueue(self, vals: Any, name: str | None = None) -> Operation:
        return make_op(
            "QueueEnqueueV2",
            [self.queue_ref, *self._components(vals, False)],
            None,
            name or f"{self._short}_enqueue",
        )

    def enqueue_many(self, vals: Any, name: str | None = None) -> Operation:
        parts = self._components(vals, True)
        return make_op(
            "QueueEnqueueManyV2", [self.queue_ref, *parts], None, name or f"{self._short}_EnqueueMany"
        )

    def _dequeue(self, op_type: str, inputs: list[Tensor], name: str, **attrs: Any) -> Any:
        spec = {"component_types": self._dtypes, "shapes": self._shapes, **attrs}
        outs = make_op(op_type, [self.queue_ref, *inputs], spec, name).outputs
        if self._names is not None:
            return dict(zip(self._names, outs))
        return outs[0] if len(outs) == 1 else list(outs)

    def dequeue(self, name: str | None = None) -> Any:
        return self._dequeue("QueueDequeueV2", [], name or f"{self._short}_Dequeue")

    def dequeue_many(self, n: Any, name: str | None = None) -> Any:
        static = n if isinstance(n, int) else None
        count = convert_to_tensor(n, dtype=dtypes.int32)
        return self._dequeue("QueueDequeueManyV2", [count], name or f"{self._short}_DequeueMany", n=static)

    def dequeue_up_to(self, n: Any, name: str | None = None) -> Any:
        count = convert_to_tensor(n, dtype=dtypes.int32)
        return self._dequeue("QueueDequeueUpToV2", [count], name or f"{self._short}_DequeueUpTo")

    def close(self, cancel_pending_enqueues: bool = False, name: str | None = None) -> Operation:
        attrs = {"cancel_pending_enqueues": bool(cancel_pending_enqueues)}
        return make_op("QueueCloseV2", [self.queue_ref], attrs, name or f"{self._short}_Close")

    def size(self, name: str | None = None) -> Tensor:
        return make_op("QueueSizeV2", [self.queue_ref], None, name or f"{self._short}_Size").outputs[0]


class FIFOQueue(QueueBase):
    """``tf.FIFOQueue(capacity, dtypes, shapes=None, names=None, shared_name=None, name=...)``."""

    _op_type = "FIFOQueueV2"

    def __init__(
        self,
        capacity: int,
        dtypes: Any,
        shapes: Any = None,
        names: Any = None,
        shared_name: str | None = None,
        name: str = "fifo_queue",
    ) -> None:
        super().__init__(dtypes, shapes, names, capacity, shared_name, name)


class PaddingFIFOQueue(QueueBase):
    """``tf.PaddingFIFOQueue``: a FIFOQueue whose component shapes may have unknown dimensions;
    ``dequeue_many`` / ``dequeue_up_to`` pad each component with zeros (b"" for strings) to the
    batch's longest along every axis. Every component needs a shape of known rank."""

    _op_type = "PaddingFIFOQueueV2"

    def __init__(
        self,
        capacity: int,
        dtypes: Any,
        shapes: Any,
        names: Any = None,
        shared_name: str | None = None,
        name: str = "padding_fifo_queue",
    ) -> None:
        given = _listed(shapes) if shapes is not None else []
        if len(given) != len(_listed(dtypes)) or any(S.as_shape(s) is None for s in given):
            raise ValueError(
                f"PaddingFIFOQueue {name}: shapes must give one shape of known rank per dtype, got {shapes!r}"
            )
        super().__init__(dtypes, shapes, names, capacity, shared_name, name)


class RandomShuffleQueue(QueueBase):
    """``tf.RandomShuffleQueue``: dequeues a random element, keeping at least ``min_after_dequeue``
    until the queue is closed."""

    _op_type = "RandomShuffleQueueV2"

    def __init__(
        self,
        capacity: int,
        min_after_dequeue: int,
        dtypes: Any,
        shapes: Any = None,
        names: Any = None,
        seed: int | None = None,
        shared_name: str | None = None,
        name: str = "random_shuffle_queue",
    ) -> None:
        super().__init__(
            dtypes,
            shapes,
            names,
            capacity,
            shared_name,
            name,
            min_after_dequeue=int(min_after_dequeue),
            seed=seed,
        )
