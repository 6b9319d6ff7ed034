"""The GPU device worker: compute streams and one copy stream per GPU, MXNet-style.

One actor per GPU receives ``Launch`` messages; ``kind="copy"`` work goes to the copy stream(s)
so transfers overlap compute, other work to the compute stream with a free slot that has waited
longest. A launch is enqueued on its stream as soon as it arrives: each stream holds up to
``LAUNCH_DEPTH`` launches in flight, run back to back in its order (a CUDA stream's queue), so
the next launch never waits for the previous one's completion to reach the loop; launches
beyond that wait in a priority queue (higher first, FIFO within a priority). Completions arrive
from the stream in batches, on the loop, and each is forwarded to its launching node as
``KernelDone`` with its own start and end. A ``PipelinedLaunch`` (``pipeline.py``) is started
after its producers on the device: on the first producer's stream when it has a slot, else
behind a ``wait_event`` on each other producer stream's event.

Compute launches pass the process's compute share of the GPU (``gpu_share.py``): while the
device owes idle time, the next launch waits on the loop's timer (an idle slot); copies are not
held. The share is set by ``SetComputeShare`` (the resource manager applying perfControl).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from functools import partial
from typing import Any

from antcolony.actors.actor import Actor
from antcolony.devices.launch import DropLaunches, KernelDone, Launch, LaunchDropped
from antcolony.devices.pipeline import PipelinedLaunch

from .backends.base import Completion, GpuBackend, Stream
from .gpu_share import ComputeShare, DeferIdle, GetShareStats, OwedIdle, SetComputeShare
from .launch_queue import LaunchQueue
from .worker_stats import GetWorkerStatistics, WorkerStatistics

#: Launches in flight per stream (a slot per launch in ``free``; a finished launch frees one).
#: Deep enough that a stream's thread finds work queued while the loop is busy elsewhere (trivial
#: kernels on the simulated GPU: about 45k launches/s at 4, 55k at 64, no clear gain beyond);
#: bounded so priorities still order the launches waiting behind it.
LAUNCH_DEPTH = 64


class GpuWorker(Actor):
    """Device worker of ``/device:GPU:<index>``."""

    def __init__(self, backend: GpuBackend, index: int, compute_streams: int, copy_streams: int) -> None:
        self.backend = backend
        self.index = index
        self.counts = {"compute": max(1, compute_streams), "copy": max(1, copy_streams)}
        self.free: dict[str, deque[Stream]] = {}  # a stream once per free slot
        self._stream_of: dict[str, Stream] = {}  # by label
        self.queues = {"compute": LaunchQueue(), "copy": LaunchQueue()}
        self.streams: list[Stream] = []
        self.share = ComputeShare()
        self.completed = 0
        self._wake: asyncio.TimerHandle | None = None
        self._held_since = 0.0  # when the current hold began

    def on_start(self) -> None:
        loop = asyncio.get_running_loop()
        for kind, n in self.counts.items():
            made = []
            for k in range(n):
                label = f"{kind}{k}"
                full = f"/gpu:{self.index}/{label}"
                done = partial(self._completed, kind, full)
                made.append(self.backend.create_stream(self.index, label, loop, done))
                self._stream_of[full] = made[-1]
            # Slots interleave the streams, so consecutive launches spread over them.
            self.free[kind] = deque(made * LAUNCH_DEPTH)
            self.streams.extend(made)

    def on_receive(self, msg: Any) -> Any:
        cls = type(msg)
        if cls is Launch or cls is PipelinedLaunch:
            kind = "copy" if msg.kind == "copy" else "compute"
            queue, free = self.queues[kind], self.free[kind]
            compute = kind == "compute"
            # Nothing waiting and a slot free: straight onto the stream (the common case).
            if not queue and free and not (compute and self._hold()):
                self._start(
                    compute, msg, _near(msg.after, free) if cls is PipelinedLaunch else free.popleft()
                )
                return None
            queue.push(msg)
            self._dispatch(kind)
        elif cls is SetComputeShare:
            self.share.set_percent(msg.percent)
            self._rehold()
        elif cls is OwedIdle:
            return self.share.owed_now(), self.share.busy_s
        elif cls is DeferIdle:
            self.share.defer(msg.seconds, msg.allowance)
            self._rehold()
        elif cls is GetShareStats:
            return self.share.stats()
        elif cls is DropLaunches:
            return self._drop(msg)
        elif cls is GetWorkerStatistics:
            queued = len(self.queues["compute"]) + len(self.queues["copy"])
            idle = len(self.free.get("compute", ())) + len(self.free.get("copy", ()))
            in_flight = len(self.streams) * LAUNCH_DEPTH - idle
            return WorkerStatistics(
                f"/device:GPU:{self.index}",
                queued,
                in_flight,
                self.completed,
                self._wake is not None,
                self.ref.mailbox_size,
            )
        return None

    def _drop(self, msg: DropLaunches) -> tuple[int, tuple[asyncio.Future[None], ...]]:
        """``DropLaunches``: out of the queues now, off the streams as they reach them. A
        dropped launch takes its inputs (device memory) with it and is reported to its node as a
        ``LaunchDropped`` failure, as a stream reports one it skips: a node that holds something
        until its kernel is done (an engine node: its variables' grant) must hear of it, or a
        later step touching those variables waits for ever. A dropped pipelined launch's
        dependents parked on it are dropped and reported too (one step)."""
        match = msg.match
        taken: list[Any] = []

        def of_match(launch: Any) -> bool:
            return bool(match(launch.step))

        def take(launch: Any) -> bool:
            if of_match(launch):
                taken.append(launch)
                return True
            return False

        dropped = sum(queue.remove_if(take) for queue in self.queues.values())
        _report_dropped(taken, f"dropped from GPU {self.index}'s queue: its step ended")
        return dropped, tuple(stream.drop(of_match) for stream in self.streams)

    def _dispatch(self, kind: str) -> None:
        queue, free = self.queues[kind], self.free[kind]
        compute = kind == "compute"
        if compute and queue and free and self._hold():
            return
        while queue and free:
            launch = queue.pop()
            self._start(
                compute,
                launch,
                _near(launch.after, free) if launch.__class__ is PipelinedLaunch else free.popleft(),
            )

    def _start(self, compute: bool, launch: Launch, stream: Stream) -> None:
        if launch.__class__ is PipelinedLaunch:
            self._start_pipelined(launch, stream)
            return
        # The stream owns (and drops) the inputs; Launch (actors/messages.py, in the core
        # rewrite) types them as a list.
        inputs, launch.inputs = launch.inputs, None  # type: ignore[assignment]
        if compute:
            self.share.started()
        stream.launch(launch.compute, inputs, launch)

    def _start_pipelined(self, launch: PipelinedLaunch, stream: Stream) -> None:
        """Start a pipelined launch (``devices/pipeline.py``) on ``stream``, ordered on the device
        after its producers; parked on a producer not started yet (its slot given back)."""
        after, publish = launch.after, launch.publish
        if after is not None:
            for pending in after:
                if pending.stream is None:
                    if pending.parked is None:
                        pending.parked = []
                    pending.parked.append(launch)
                    self.free["compute"].appendleft(stream)
                    return
            if len(after) == 1:
                pending = after[0]
                if pending.stream is not stream:
                    if pending.event is None:
                        # Recorded now, on the producer's stream, after the producer (already
                        # enqueued there): later than needed at worst, never too early.
                        pending.event = pending.stream.record_event()
                    stream.wait_event(pending.event)
            else:
                # One event per other stream, recorded now: it covers every producer already
                # enqueued there (a stream runs in order).
                events: dict[Stream, Any] = {}
                for pending in after:
                    other = pending.stream
                    if other is not stream and other not in events:
                        events[other] = other.record_event()
                        stream.wait_event(events[other])
            launch.after = None
        inputs, launch.inputs = launch.inputs, None  # type: ignore[assignment]
        self.share.started()
        if publish is None:
            stream.launch(launch, inputs, launch)
            return
        launch.publish = None
        publish.stream = stream
        stream.launch(launch, inputs, launch)
        if publish.parked:
            parked, publish.parked = publish.parked, None
            for waiting in parked:
                self.on_receive(waiting)

    def _completed(self, kind: str, label: str, batch: list[Completion]) -> None:
        """A stream's completions since its last batch, in its order (on the loop)."""
        free = self.free[kind]
        stream = self._stream_of[label]
        compute = kind == "compute"
        for launch, result, error, start, end in batch:
            # direct: an idle node handles its completion now, not a drain callback later
            launch.reply_to.direct(KernelDone(launch.step, result, error, start, end, label))
            free.append(stream)
            if compute:
                self.share.finished(start, end)
        self.completed += len(batch)
        if self.ref.is_alive:
            self._dispatch(kind)

    def _hold(self) -> bool:
        """True when compute launches must wait for the device to pay its idle debt (a timer
        then dispatches them); never sleeps."""
        if self._wake is not None:
            return True
        now = time.perf_counter()
        wait = self.share.hold_for(now)
        if wait <= 0.0:
            return False
        self._held_since = now
        self._wake = self.runtime.loop.call_later(wait, self._woken)
        return True

    def _rehold(self) -> None:
        """A held launch follows the share as it is now, not the debt it was held for."""
        if self._wake is not None:
            self._wake.cancel()
            self._woken()

    def _woken(self) -> None:
        """The hold ends (its timer fired, or the share changed): count it, dispatch again."""
        self._wake = None
        self.share.held(time.perf_counter() - self._held_since)
        if self.ref.is_alive:
            self._dispatch("compute")

    def on_stop(self) -> None:
        if self._wake is not None:
            self._wake.cancel()
        for stream in self.streams:
            stream.close()


def _report_dropped(launches: list[Any], why: str) -> None:
    """Tell each dropped launch's node (and those of the launches parked on it) it was dropped."""
    now = time.perf_counter()
    while launches:
        launch = launches.pop()
        publish = getattr(launch, "publish", None)
        if publish is not None and publish.parked:
            launches.extend(publish.parked)
            publish.parked = None
        launch.inputs = None  # its inputs' device memory goes now, not with the message
        launch.reply_to.direct(KernelDone(launch.step, None, LaunchDropped(why), now, now, "dropped"))


def _near(after: tuple[Any, ...] | None, free: deque[Stream]) -> Stream:
    """A free slot for a pipelined launch: on its first producer's stream when that one has a
    slot (in order after it, no event to wait on), else the next free one."""
    stream = None if after is None else after[0].stream
    if stream is not None:
        try:
            free.remove(stream)
        except ValueError:
            pass
        else:
            return stream
    return free.popleft()
