"""``tf.train.batch_join`` and ``tf.train.shuffle_batch_join``: one queue fed by several lists of
tensors, each by its own enqueue thread (a QueueRunner with one enqueue op per list), so several
readers fill one batch; batches come back in the structure of the first list."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core import get_default_graph
from ..ops.queues import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue
from .input_pipeline import QueueRunner, _flat, _fraction_full, add_queue_runner

__all__ = ["batch_join", "shuffle_batch_join"]


def _joined(
    queue_of: Any,
    tensors_list: Sequence[Any],
    batch_size: Any,
    capacity: int,
    enqueue_many: bool,
    shapes: Any,
    allow_smaller_final_batch: bool,
    name: str,
    dynamic_pad: bool = False,
) -> Any:
    if not tensors_list:
        raise ValueError(f"{name}: tensors_list needs at least one list of tensors")
    with get_default_graph().name_scope(name) as scope:
        flats = [_flat(tensors) for tensors in tensors_list]
        first, rebuild = flats[0]
        for other, _ in flats[1:]:
            if [t.dtype for t in other] != [t.dtype for t in first]:
                raise ValueError(f"{name}: every list of tensors_list needs the dtypes of the first")
        if shapes is None:
            shapes = [t._shape[1:] if (enqueue_many and t._shape is not None) else t._shape for t in first]
        for t, s in zip(first, shapes):
            if s is None or (not dynamic_pad and any(d is None for d in s)):
                need = "a shape of known rank" if dynamic_pad else "a fully defined shape"
                raise ValueError(f"{name}: every tensor needs {need} (pass shapes=): {t.name} has {s}")
        queue = queue_of([t.dtype for t in first], list(shapes))
        enqueues = [queue.enqueue_many(flat) if enqueue_many else queue.enqueue(flat) for flat, _ in flats]
        add_queue_runner(QueueRunner(queue, enqueues))
        _fraction_full(queue, capacity, f"fraction_of_{capacity}_full")
        if allow_smaller_final_batch:
            out = queue.dequeue_up_to(batch_size, name=scope)
        else:
            out = queue.dequeue_many(batch_size, name=scope)
        return rebuild(out if isinstance(out, list) else [out])


def batch_join(
    tensors_list: Sequence[Any],
    batch_size: Any,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """Batches from one FIFO queue that every list of ``tensors_list`` feeds (one thread each)."""
    queue_class = PaddingFIFOQueue if dynamic_pad else FIFOQueue
    return _joined(
        lambda types, shapes: queue_class(capacity, types, shapes, shared_name=shared_name),
        tensors_list, batch_size, capacity, enqueue_many, shapes, allow_smaller_final_batch,
        name or "batch_join", dynamic_pad,
    )  # fmt: skip


def shuffle_batch_join(
    tensors_list: Sequence[Any],
    batch_size: Any,
    capacity: int,
    min_after_dequeue: int,
    seed: int | None = None,
    enqueue_many: bool = False,
    shapes: Any = None,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """Batches drawn at random from one queue that every list of ``tensors_list`` feeds."""
    return _joined(
        lambda types, shapes: RandomShuffleQueue(
            capacity, min_after_dequeue, types, shapes, seed=seed, shared_name=shared_name
        ),
        tensors_list, batch_size, capacity, enqueue_many, shapes, allow_smaller_final_batch,
        name or "shuffle_batch_join",
    )  # fmt: skip
