"""The one error hierarchy of antcolony.

``OpError`` and its subclasses mirror ``tf.errors``: they are raised by ``Session.run`` and name
the node that failed (``.op``, ``.node_name``). Build-time graph errors are ``GraphError``
(also a ``ValueError``, as TF raises ``ValueError`` for bad shapes at build time). Actor-kernel
errors derive from ``ActorError``.

This module imports nothing from the project, so every layer may import it.
"""

from __future__ import annotations

# Under a private name: this module is the public ``ac.errors`` namespace.
import typing as _typing

__all__ = [
    "AbortedError",
    "ActorDeadError",
    "ActorError",
    "ActorStartError",
    "AlreadyExistsError",
    "AntColonyError",
    "AskTimeoutError",
    "AsyncOnlyError",
    "BlockingCallInEventLoopError",
    "CancelledError",
    "ConfigError",
    "DataLossError",
    "DeadlineExceededError",
    "FailedPreconditionError",
    "FileRefusedError",
    "GraphError",
    "GraphFinalizedError",
    "IncompleteConfigError",
    "InternalError",
    "InvalidArgumentError",
    "InvalidFetchError",
    "NoDefaultSessionError",
    "NotFoundError",
    "OpError",
    "OutOfRangeError",
    "PermissionDeniedError",
    "ResourceExhaustedError",
    "SessionClosedError",
    "UnavailableError",
    "UnimplementedError",
    "UnknownError",
    "exception_type_from_error_code",
]


class AntColonyError(Exception):
    """Base of every error antcolony raises on purpose."""


class OpError(AntColonyError):
    """A step failed; ``op`` is the failing Operation (or None), ``node_name`` its name."""

    error_code: int = 2

    def __init__(
        self, node_def: _typing.Any, op: _typing.Any, message: str, error_code: int | None = None
    ) -> None:
        self.node_def = node_def
        self.op = op
        self.message = message
        if error_code is not None:
            self.error_code = error_code
        super().__init__(self._format())

    @property
    def node_name(self) -> str | None:
        if self.op is not None:
            return getattr(self.op, "name", None)
        return getattr(self.node_def, "name", None)

    def _format(self) -> str:
        name = self.node_name
        if name:
            return f"{self.message}\n\t [[node {name}]]"
        return self.message

    def __reduce__(self) -> tuple[_typing.Any, ...]:
        return (type(self), (None, None, self.message, self.error_code))


class CancelledError(OpError):
    """The step was cancelled (session closed, or the caller's task cancelled)."""

    error_code = 1


class UnknownError(OpError):
    error_code = 2


class InvalidArgumentError(OpError):
    """An argument (feed, shape, dtype, device) is invalid."""

    error_code = 3


class InvalidFetchError(InvalidArgumentError, ValueError):
    """A fetch names nothing in the graph (or is not a fetchable thing); also a ``ValueError``,
    which is what TF's session raises there, so TF1 code catching ValueError keeps working."""


class DeadlineExceededError(OpError):
    """The step did not finish within ``RunOptions.timeout_in_ms``."""

    error_code = 4


class NotFoundError(OpError):
    error_code = 5


class AlreadyExistsError(OpError):
    error_code = 6


class PermissionDeniedError(OpError):
    error_code = 7


class ResourceExhaustedError(OpError):
    """A device ran out of memory (or another resource)."""

    error_code = 8


class FailedPreconditionError(OpError):
    """State is not ready, e.g. a variable read before it was initialized."""

    error_code = 9


class AbortedError(OpError):
    error_code = 10


class OutOfRangeError(OpError):
    error_code = 11


class UnimplementedError(OpError):
    """No kernel or rule exists for what was asked."""

    error_code = 12


class InternalError(OpError):
    """A bug in antcolony or a kernel; please report it."""

    error_code = 13


class UnavailableError(OpError):
    error_code = 14


class DataLossError(OpError):
    """Data is corrupt or unreadable (e.g. a truncated checkpoint file)."""

    error_code = 15


class GraphError(AntColonyError, ValueError):
    """A graph could not be built as asked (bad shapes, dtypes, names, missing gradient rule)."""


class GraphFinalizedError(GraphError, RuntimeError):
    """An op was added to a finalized graph (TF1 raises RuntimeError there: a Supervisor or a
    monitored session finalizes its graph so a training loop cannot grow it step after step)."""


class ActorError(AntColonyError):
    """Base of actor-kernel errors."""


class ActorDeadError(ActorError):
    """The actor was stopped before it could handle the message."""


class ActorStartError(ActorError):
    """An actor's ``on_start`` hook raised; the actor was not started."""


class AskTimeoutError(ActorError, TimeoutError):
    """An ``ask`` got no reply within its timeout."""


class SessionClosedError(AntColonyError, RuntimeError):
    """A closed Session (or one bound to another event loop) was used."""


class BlockingCallInEventLoopError(AntColonyError, RuntimeError):
    """A blocking (TF1-style) call was made from a running event loop, which it would stall."""


class AsyncOnlyError(AntColonyError, TypeError):
    """An asynchronous object was used synchronously (``with`` instead of ``async with``)."""


class NoDefaultSessionError(AntColonyError, ValueError):
    """``Tensor.eval`` / ``Operation.run`` found no session to use (TF raises ValueError here)."""


class ConfigError(AntColonyError, ValueError):
    """A setting or a config file is invalid; the message names it and the fix."""


class IncompleteConfigError(ConfigError):
    """A config file's text ends early (empty or truncated JSON): typically a file caught while
    a writer that does not rename atomically is still writing it."""


class FileRefusedError(ConfigError):
    """A path given as a config or status file exists but is not read: it is not a regular file
    (a FIFO, a device, a directory) or it is larger than a file of its kind can be.

    ``reason`` is the message without the path (``"is a FIFO, not a regular file"``).
    """

    def __init__(self, path: str, reason: str, fix: str) -> None:
        super().__init__(f"{path} {reason}; {fix}")
        self.path = path
        self.reason = reason


def exception_type_from_error_code(code: int) -> type[OpError]:
    """The OpError subclass for a TF error code (as ``tf.errors``)."""
    for cls in OpError.__subclasses__():
        if cls.error_code == code:
            return cls
    return UnknownError


class EngineError(AntColonyError, RuntimeError):
    """The dependency engine was misused (closed engine, deleted or foreign var, bad prop)."""


__all__ += ["EngineError"]
