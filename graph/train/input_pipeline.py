"""TF1's queue-based input pipelines: ``tf.train.QueueRunner`` and the producers and batchers
built on queues (``string_input_producer``, ``input_producer``, ``range_input_producer``,
``slice_input_producer``, ``limit_epochs``, ``batch``, ``shuffle_batch``), as TF1 builds them:
each producer is a queue, its enqueue op and a QueueRunner in the QUEUE_RUNNERS collection,
whose threads ``tf.train.start_queue_runners`` starts.

A runner thread waits for room in its queue between steps (``QueueResource.wait_for_room``),
never inside one: a step waiting in a kernel holds a CPU worker thread, and the consumer's
dequeue already holds one (devices/data/queue_resource.py). When its enqueue fails with
OutOfRangeError (``limit_epochs`` reached) or CancelledError, the last thread of a runner closes
the queue, so consumers drain it and then get OutOfRangeError, as TF1's.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from antcolony.errors import CancelledError, OutOfRangeError

from .. import dtypes
from ..core import Operation, Tensor, control_dependencies, get_default_graph
from ..graph_keys import GraphKeys
from ..op_builder import convert_to_tensor
from ..ops.array import gather
from ..ops.array_composite import range as range_
from ..ops.control import identity
from ..ops.math import cast, multiply
from ..ops.queues import FIFOQueue, PaddingFIFOQueue, QueueBase, RandomShuffleQueue, count_up_to
from ..ops.random import random_shuffle
from ..ops.summary_ops import scalar
from ..variables import Variable

logger = logging.getLogger(__name__)

__all__ = [
    "QueueRunner",
    "add_queue_runner",
    "batch",
    "input_producer",
    "limit_epochs",
    "range_input_producer",
    "shuffle_batch",
    "slice_input_producer",
    "string_input_producer",
]


class QueueRunner:
    """Threads that run enqueue ops, one thread per op, until the input ends or a stop."""

    def __init__(
        self,
        queue: QueueBase | None = None,
        enqueue_ops: Sequence[Operation] | None = None,
        close_op: Operation | None = None,
        cancel_op: Operation | None = None,
        queue_closed_exception_types: Sequence[type[BaseException]] | None = None,
    ) -> None:
        if queue is None or not enqueue_ops:
            raise ValueError("QueueRunner needs a queue and at least one enqueue op")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        self._closed_types = tuple(queue_closed_exception_types or (OutOfRangeError, CancelledError))
        self._lock = threading.Lock()
        self._running: dict[int, int] = {}  # live enqueue threads per session
        self.exceptions_raised: list[BaseException] = []

    @property
    def queue(self) -> QueueBase:
        return self._queue

    @property
    def enqueue_ops(self) -> list[Operation]:
        return list(self._enqueue_ops)

    @property
    def close_op(self) -> Operation:
        return self._close_op

    @property
    def cancel_op(self) -> Operation:
        return self._cancel_op

    @property
    def name(self) -> str:
        return self._queue.name

    def create_threads(
        self, sess: Any, coord: Any = None, daemon: bool = False, start: bool = False
    ) -> list[threading.Thread]:
        with self._lock:
            self._running[id(sess)] = len(self._enqueue_ops)
        threads = [
            threading.Thread(target=self._run, args=(sess, op, coord), daemon=daemon, name=f"{self.name}-{i}")
            for i, op in enumerate(self._enqueue_ops)
        ]
        if coord is not None:
            threads.append(threading.Thread(target=self._close_on_stop, args=(sess, coord), daemon=True))
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            if start:
                t.start()
        return threads

    def _run(self, sess: Any, enqueue_op: Operation, coord: Any) -> None:
        def stop() -> bool:
            return coord is not None and coord.should_stop()

        try:
            queue = sess.run(self._queue.queue_ref)  # the session's queue, to wait for room in
            while not stop() and queue.wait_for_room(stop):
                try:
                    sess.run(enqueue_op)
                except self._closed_types:
                    break
        except Exception as e:
            if coord is None:
                logger.error("queue runner %s failed: %s", self.name, e)
                self.exceptions_raised.append(e)
                raise
            coord.request_stop(e)
        finally:
            self._thread_done(sess)

    def _thread_done(self, sess: Any) -> None:
        with self._lock:
            self._running[id(sess)] -= 1
            last = self._running[id(sess)] == 0
        if last:
            try:
                sess.run(self._close_op)
            except Exception as e:
                logger.debug("queue runner %s: closing its queue failed: %s", self.name, e)

    def _close_on_stop(self, sess: Any, coord: Any) -> None:
        coord.wait_for_stop()
        try:
            sess.run(self._cancel_op)
        except Exception as e:
            logger.debug("queue runner %s: cancelling its queue failed: %s", self.name, e)


def add_queue_runner(qr: QueueRunner, collection: str = GraphKeys.QUEUE_RUNNERS) -> None:
    get_default_graph().add_to_collection(collection, qr)


def limit_epochs(tensor: Any, num_epochs: int | None = None, name: str | None = None) -> Tensor:
    """``tensor``, until it has been evaluated ``num_epochs`` times: then OutOfRangeError. Its
    counter is a local variable (run ``tf.local_variables_initializer()``)."""
    if num_epochs is None:
        return convert_to_tensor(tensor)
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0, got {num_epochs}")
    with get_default_graph().name_scope(name or "limit_epochs") as scope:
        counter = Variable(
            0, dtype=dtypes.int64, name="epochs", trainable=False, collections=[GraphKeys.LOCAL_VARIABLES]
        )
        with control_dependencies([count_up_to(counter, num_epochs).op]):
            return identity(tensor, name=scope.rstrip("/"))


def _fraction_full(queue: QueueBase, capacity: int, summary_name: str | None) -> None:
    if summary_name:
        scalar(summary_name, multiply(cast(queue.size(), dtypes.float32), 1.0 / capacity))


def input_producer(
    input_tensor: Any,
    element_shape: Any = None,
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    summary_name: str | None = None,
    name: str | None = None,
    cancel_op: Operation | None = None,
) -> FIFOQueue:
    """A queue fed with the rows of ``input_tensor`` (shuffled per epoch when ``shuffle``)."""
    with get_default_graph().name_scope(name or "input_producer") as scope:
        rows = convert_to_tensor(input_tensor)
        if element_shape is None and rows._shape is not None:
            element_shape = rows._shape[1:]
        if shuffle:
            rows = random_shuffle(rows, seed=seed)
        rows = limit_epochs(rows, num_epochs)
        # the queue op takes the scope's own name (input_producer), its ops go inside the scope
        queue = FIFOQueue(capacity, [rows.dtype], shapes=[element_shape], shared_name=shared_name, name=scope)
        add_queue_runner(QueueRunner(queue, [queue.enqueue_many([rows])], cancel_op=cancel_op))
        _fraction_full(queue, capacity, summary_name)
        return queue


def string_input_producer(
    string_tensor: Any,
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    name: str | None = None,
    cancel_op: Operation | None = None,
) -> FIFOQueue:
    """A queue of file names (for a reader), each epoch's order shuffled when ``shuffle``."""
    names = convert_to_tensor(string_tensor, dtype=dtypes.string)
    return input_producer(
        names, (), num_epochs, shuffle, seed, capacity, shared_name,
        f"fraction_of_{capacity}_full", name or "input_producer", cancel_op,
    )  # fmt: skip


def range_input_producer(
    limit: int,
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    name: str | None = None,
) -> FIFOQueue:
    """A queue of the integers 0..limit-1 (int32), shuffled per epoch when ``shuffle``."""
    return input_producer(
        range_(limit), (), num_epochs, shuffle, seed, capacity, shared_name,
        f"fraction_of_{capacity}_full", name or "input_producer",
    )  # fmt: skip


def slice_input_producer(
    tensor_list: Sequence[Any],
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    name: str | None = None,
) -> list[Tensor]:
    """One row of each tensor of ``tensor_list`` (the same row of each) per run."""
    with get_default_graph().name_scope(name or "input_producer"):
        tensors = [convert_to_tensor(t) for t in tensor_list]
        if not tensors:
            raise ValueError("slice_input_producer needs at least one tensor")
        dims = tensors[0]._shape
        if not dims or dims[0] is None:
            raise ValueError(f"slice_input_producer needs a known first dimension of {tensors[0].name}")
        size = dims[0]
        index = range_input_producer(size, num_epochs, shuffle, seed, capacity, shared_name).dequeue()
        return [gather(t, index) for t in tensors]


def _flat(tensors: Any) -> tuple[list[Tensor], Any]:
    if isinstance(tensors, dict):
        keys = sorted(tensors)
        return [convert_to_tensor(tensors[k]) for k in keys], lambda out: dict(zip(keys, out))
    if isinstance(tensors, (list, tuple)) and len(tensors) == 1:
        return [convert_to_tensor(tensors[0])], lambda out: out[0]  # TF1 returns a one-list's tensor
    if isinstance(tensors, (list, tuple)):
        return [convert_to_tensor(t) for t in tensors], list
    return [convert_to_tensor(tensors)], lambda out: out[0]


def _batcher(
    queue_of: Any,
    tensors: Any,
    batch_size: Any,
    num_threads: int,
    capacity: int,
    enqueue_many: bool,
    shapes: Any,
    allow_smaller_final_batch: bool,
    name: str,
    dynamic_pad: bool = False,
) -> Any:
    return batch_from_lists(
        queue_of, [tensors], num_threads, batch_size, capacity, enqueue_many, shapes,
        allow_smaller_final_batch, name, dynamic_pad,
    )  # fmt: skip


def batch_from_lists(
    queue_of: Any,
    tensors_list: Sequence[Any],
    threads_per_list: int,
    batch_size: Any,
    capacity: int,
    enqueue_many: bool,
    shapes: Any,
    allow_smaller_final_batch: bool,
    name: str,
    dynamic_pad: bool = False,
) -> Any:
    """Batches from the queue ``queue_of(dtypes, shapes)`` makes, fed by one enqueue op per list
    of ``tensors_list`` (each run by ``threads_per_list`` queue-runner threads), in the structure
    of the first list: ``tf.train.batch`` (one list) and ``batch_join`` (several)."""
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
        add_queue_runner(QueueRunner(queue, enqueues * threads_per_list))
        _fraction_full(queue, capacity, f"fraction_of_{capacity}_full")
        # the dequeue op takes the scope's own name (batch), as TF1 names it
        if allow_smaller_final_batch:
            out = queue.dequeue_up_to(batch_size, name=scope)
        else:
            out = queue.dequeue_many(batch_size, name=scope)
        return rebuild(out if isinstance(out, list) else [out])


def batch(
    tensors: Any,
    batch_size: Any,
    num_threads: int = 1,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """Batches of ``tensors`` (a list, a dict or one tensor; returned in the same structure).

    ``dynamic_pad``: shapes may have unknown dimensions; each batch pads every component with
    zeros (b"" for strings) to its longest element along them (a PaddingFIFOQueue)."""
    queue_class = PaddingFIFOQueue if dynamic_pad else FIFOQueue
    return _batcher(
        lambda types, shapes: queue_class(capacity, types, shapes, shared_name=shared_name),
        tensors, batch_size, num_threads, capacity, enqueue_many, shapes, allow_smaller_final_batch,
        name or "batch", dynamic_pad,
    )  # fmt: skip


def shuffle_batch(
    tensors: Any,
    batch_size: Any,
    capacity: int,
    min_after_dequeue: int,
    num_threads: int = 1,
    seed: int | None = None,
    enqueue_many: bool = False,
    shapes: Any = None,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """Batches drawn at random from a queue holding at least ``min_after_dequeue`` elements."""
    return _batcher(
        lambda types, shapes: RandomShuffleQueue(
            capacity, min_after_dequeue, types, shapes, seed=seed, shared_name=shared_name
        ),
        tensors, batch_size, num_threads, capacity, enqueue_many, shapes, allow_smaller_final_batch,
        name or "shuffle_batch",
    )  # fmt: skip
