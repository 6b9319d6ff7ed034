"""Pipelined GPU launches: a kernel's output handed to a dependent launch before it exists.

A GPU node whose successor runs on the same GPU worker sends that successor a ``Pending`` right
after telling the worker its ``PipelinedLaunch`` (``publish``), not after its ``KernelDone``.
The successor launches at once with the ``Pending`` among its inputs (``after``); the worker
orders it after the producer on the device: on the producer's stream (in order, nothing to wait
for), or on another stream that first waits on an event recorded on the producer's stream (no
host round trip). On the stream thread the launch itself is called: it swaps each ``Pending``
for the value the producer's kernel stored in it before that point.

Invariants:

- the worker starts launches of one priority in FIFO order, and a producer's ``Launch`` reaches
  it before any dependent's (the producer tells it first), so a dependent never starts before
  its producers have a stream (``GpuWorker`` parks it otherwise, as a safety net);
- a ``Pending`` is referenced only by the dependents' inputs (and by messages and gathered inputs
  on the way to them), so the producer's output it holds lives until the last dependent kernel
  has read it, and no longer;
- a producer that fails stores its error: each dependent raises ``UpstreamFailed`` without
  running its kernel, and its node drops that silently; the producer's own ``KernelDone`` fails
  the step naming the producer.
"""

from __future__ import annotations

from typing import Any

from .launch import Launch


class _NotYet:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<not computed>"


NOT_YET: Any = _NotYet()


class Pending:
    """The output of a launched GPU kernel, to be read on the device by dependent launches.

    ``value`` / ``error`` are written by the producer's stream thread before anything ordered
    after the producer on the device can run; ``stream`` and ``event`` are the worker's (on the
    loop): the stream the producer was started on, and an event recorded on it after the
    producer (made when the first dependent lands on another stream); ``parked`` holds
    dependents that reached the worker before the producer started (see the module's
    invariants)."""

    __slots__ = ("value", "error", "stream", "event", "parked", "host")

    def __init__(self, host: bool = True) -> None:
        # False when the producer's node needs only its kernel's end on the host (every consumer
        # of the value reads it from here): the completion then carries ``Published``, so
        # completions waiting for the loop never hold device memory
        self.host = host
        self.value: Any = NOT_YET
        self.error: BaseException | None = None
        self.stream: Any = None
        self.event: Any = None
        self.parked: list[Any] | None = None

    def __repr__(self) -> str:
        return f"<pending on {getattr(self.stream, 'label', None)}>"


class Published:
    """What a completion carries instead of an output read only by pipelined dependents: its
    size, for the trace record."""

    __slots__ = ("nbytes",)

    def __init__(self, value: Any) -> None:
        self.nbytes = getattr(value, "nbytes", 0)  # a single output: producers are single-output


class UpstreamFailed(Exception):
    """A pipelined kernel did not run: a kernel it depends on failed (``error``) or never ran.

    Internal: the dependent's node drops it; the step fails with the producer's own error."""

    def __init__(self, error: BaseException | None) -> None:
        super().__init__(f"a kernel this one depends on failed: {error!r}")
        self.error = error


class PipelinedLaunch(Launch):
    """A compute ``Launch`` on the pipeline. ``after``: its ``Pending`` inputs (None if none),
    whose producers the worker orders before it on the device; ``publish``: the ``Pending`` its
    output is stored in for its dependents (None if it has none). The worker clears both when
    it starts the launch (the launch is the completion's token, alive until the loop takes its
    ``KernelDone``, and must not keep a producer's output alive), and the stream calls the
    launch itself in place of ``compute``."""

    __slots__ = ("after", "publish", "_resolve", "_publish")

    def __init__(
        self,
        step: Any,
        compute: Any,
        inputs: list[Any],
        reply_to: Any,
        after: tuple[Any, ...] | None,
        publish: Pending | None,
    ) -> None:
        Launch.__init__(self, step, compute, inputs, 0, reply_to)
        self.after = after
        self.publish = publish
        self._resolve = after is not None
        self._publish = publish

    def __call__(self, *args: Any) -> Any:
        """``compute`` on the stream thread, with each ``Pending`` input replaced by its value;
        the result (or the error) is stored in ``publish`` for the dependents ordered after it."""
        publish, self._publish = self._publish, None
        try:
            if self._resolve:
                args = tuple([_resolved(a) if a.__class__ is Pending else a for a in args])
            out = self.compute(*args)
        except BaseException as exc:
            if publish is not None:
                # A stand-in, never raised: the dependents must not hold the producer's exception,
                # whose traceback's frames hold this kernel's inputs (device memory) for as long
                # as any of them is alive (a caller keeping a step's error, a launch dropped by a
                # closed stream). The producer's own KernelDone carries the real one.
                publish.error = RuntimeError(f"{type(exc).__name__}: {exc}")
            raise
        if publish is None:
            return out
        publish.value = out
        return out if publish.host else Published(out)


def _resolved(pending: Pending) -> Any:
    value = pending.value
    if pending.error is not None or value is NOT_YET:
        raise UpstreamFailed(pending.error)
    return value


__all__ = ["NOT_YET", "Pending", "PipelinedLaunch", "Published", "UpstreamFailed"]
