"""``tf.train.batch_join`` and ``tf.train.shuffle_batch_join``: one queue fed by several lists of
tensors, each by its own enqueue thread (a QueueRunner with one enqueue op per list), so several
readers fill one batch; batches come back in the structure of the first list."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ops.queues import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue
from .input_pipeline import batch_from_lists

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
    return batch_from_lists(
        queue_of, tensors_list, 1, batch_size, capacity, enqueue_many, shapes, allow_smaller_final_batch,
        name, dynamic_pad,
    )  # fmt: skip


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
