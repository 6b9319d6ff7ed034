"""``tf.errors`` of the TF1 face: TF's error classes only (the same classes as
``antcolony.errors``). The runtime's own errors (``ActorDeadError``, ``EngineError``,
``SessionClosedError``, ...) are not TF names: import them from ``antcolony.errors``."""

from __future__ import annotations

from antcolony.errors import (
    AbortedError,
    AlreadyExistsError,
    CancelledError,
    DataLossError,
    DeadlineExceededError,
    FailedPreconditionError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    OpError,
    OutOfRangeError,
    PermissionDeniedError,
    ResourceExhaustedError,
    UnavailableError,
    UnimplementedError,
    UnknownError,
    exception_type_from_error_code,
)

__all__ = [
    "AbortedError",
    "AlreadyExistsError",
    "CancelledError",
    "DataLossError",
    "DeadlineExceededError",
    "FailedPreconditionError",
    "InternalError",
    "InvalidArgumentError",
    "NotFoundError",
    "OpError",
    "OutOfRangeError",
    "PermissionDeniedError",
    "ResourceExhaustedError",
    "UnavailableError",
    "UnimplementedError",
    "UnknownError",
    "exception_type_from_error_code",
]
