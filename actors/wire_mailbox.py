"""The receiving end of the tensor wire, shared by its transports: a mailbox of rendezvous keys.

A task's partitions ask for a tensor by (step id, rendezvous key); whichever comes first, the
frame or the receive, waits for the other. The sending task is read from the key's source device
(``/job:ps/replica:0/task:1/device:CPU:0`` -> ``/job:ps/task:1``), so when a transport sees a peer
go (its connection drops, its actor dies) every receive waiting on that peer fails with an
:class:`UnavailableError` naming it, and so does every later receive from it until it is back.
"""

from __future__ import annotations

import abc
import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from antcolony.errors import DeadlineExceededError, UnavailableError
from antcolony.graph.device_spec import DeviceSpec

from .tensor_wire import parse_rendezvous_key

__all__ = ["TensorMailbox", "TensorWire", "task_name", "task_of_key"]

logger = logging.getLogger(__name__)

#: Aborted steps remembered, so that their late frames are dropped (step ids are random: an id
#: seen again this soon is the same step).
ABORTED_KEPT = 4096


def task_name(device_or_task: str) -> str:
    """``/job:J/task:T`` of a device or task name (job 'localhost' and task 0 where missing)."""
    spec = DeviceSpec.parse(device_or_task)
    return f"/job:{spec.job or 'localhost'}/task:{spec.task or 0}"


def task_of_key(key: str) -> str:
    return task_name(parse_rendezvous_key(key).src_device)


class TensorMailbox:
    """(step id, key) -> future of the tensor; loop-thread only."""

    def __init__(self) -> None:
        self._slots: dict[tuple[int, str], asyncio.Future[np.ndarray]] = {}
        self._down: dict[str, BaseException] = {}
        self._aborted: OrderedDict[int, BaseException] = OrderedDict()
        # Frames that are requests to this task (remote_variables.py's variable service) are
        # taken by it when it returns True; everything else waits here for its receive.
        self.service: Callable[[int, str, np.ndarray], bool] | None = None

    def deliver(self, step_id: int, key: str, value: np.ndarray) -> None:
        if self.service is not None and self.service(step_id, key, value):
            return
        if step_id in self._aborted:
            # a frame of a step that failed elsewhere, sent before its sender learnt it: nobody
            # will receive it, and a slot kept for it would stay for the life of the task
            logger.debug("tensor %r of aborted step %d dropped", key, step_id)
            return
        fut = self._slot(step_id, key)
        if fut.done():
            logger.warning("tensor %r of step %d arrived twice; the second is dropped", key, step_id)
            return
        fut.set_result(value)

    async def recv(self, key: str, step_id: int, timeout: float | None = None) -> np.ndarray:
        """The tensor sent under ``key`` in step ``step_id``; UnavailableError if its sender is
        gone, DeadlineExceededError after ``timeout`` seconds."""
        aborted = self._aborted.get(step_id)
        if aborted is not None:
            raise aborted
        fut = self._slot(step_id, key)
        if not fut.done():
            down = self._down.get(task_of_key(key))
            if down is not None:
                self._slots.pop((step_id, key), None)
                raise down
        try:
            if timeout is None:
                return await asyncio.shield(fut)
            return await asyncio.wait_for(asyncio.shield(fut), timeout)
        except TimeoutError:
            raise DeadlineExceededError(
                None, None, f"no tensor {key!r} for step {step_id} within {timeout} s; is its sender running?"
            ) from None
        finally:
            if fut.done():
                self._slots.pop((step_id, key), None)

    def _slot(self, step_id: int, key: str) -> asyncio.Future[np.ndarray]:
        fut = self._slots.get((step_id, key))
        if fut is None:
            fut = self._slots[(step_id, key)] = asyncio.get_running_loop().create_future()
        return fut

    def peer_up(self, task: str) -> None:
        self._down.pop(task, None)

    def peer_down(self, task: str, reason: str) -> None:
        """Fail every receive waiting on ``task``, and later ones until it is back."""
        error = UnavailableError(None, None, f"task {task} is unavailable: {reason}")
        self._down[task] = error
        for (step_id, key), fut in list(self._slots.items()):
            if not fut.done() and task_of_key(key) == task:
                fut.set_exception(error)
                fut.exception()  # retrieved: a receive nobody awaits any more is not an error
                del self._slots[(step_id, key)]

    def abort_step(self, step_id: int, error: BaseException) -> None:
        """Fail a step's pending receives and drop its tensors (the step failed elsewhere); its
        frames that arrive later are dropped and its later receives fail with ``error`` (the last
        ``ABORTED_KEPT`` aborted steps are remembered)."""
        self._aborted[step_id] = error
        self._aborted.move_to_end(step_id)
        while len(self._aborted) > ABORTED_KEPT:
            self._aborted.popitem(last=False)
        for slot_key, fut in list(self._slots.items()):
            if slot_key[0] == step_id:
                if not fut.done():
                    fut.set_exception(error)
                    fut.exception()
                del self._slots[slot_key]

    def pending(self) -> int:
        return len(self._slots)


class TensorWire(abc.ABC):
    """One task's end of the wire: send tensors to peer tasks, receive those sent to it."""

    def __init__(self, task: str) -> None:
        self.task = task_name(task)
        self.mailbox = TensorMailbox()

    @abc.abstractmethod
    async def send(self, peer: str, key: str, step_id: int, value: np.ndarray) -> None:
        """Send ``value`` to task ``peer`` under ``key``; UnavailableError naming ``peer`` if it is gone."""

    async def recv(self, key: str, step_id: int, timeout: float | None = None) -> np.ndarray:
        return await self.mailbox.recv(key, step_id, timeout)

    @abc.abstractmethod
    async def close(self) -> None:
        """Stop sending and receiving; receives still waiting fail."""
