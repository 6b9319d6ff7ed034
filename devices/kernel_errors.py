"""A kernel's exception as the ``OpError`` a user sees: naming the op that raised it, of the
``tf.errors`` class TF would raise (``MemoryError`` -> ``ResourceExhaustedError``, ``ValueError``
-> ``InvalidArgumentError``, anything else -> ``InternalError``; OpErrors keep their class).
Used wherever kernels run: node actors, segments, fused loops, device contexts, tf.data functions.
"""

from __future__ import annotations

import traceback
from typing import Any

from antcolony.errors import (
    InternalError,
    InvalidArgumentError,
    OpError,
    ResourceExhaustedError,
    UnimplementedError,
)

__all__ = ["as_op_error"]


# Python exceptions a kernel may raise -> the OpError a user sees (most specific class first).
_KERNEL_ERRORS: tuple[tuple[type[BaseException], type[OpError]], ...] = (
    (MemoryError, ResourceExhaustedError),
    (NotImplementedError, UnimplementedError),
    (ZeroDivisionError, InvalidArgumentError),
    (FloatingPointError, InvalidArgumentError),
    (IndexError, InvalidArgumentError),
    (KeyError, InvalidArgumentError),
    (ValueError, InvalidArgumentError),
    (TypeError, InvalidArgumentError),
)


def as_op_error(exc: BaseException, op: Any) -> OpError:
    """``exc`` raised by ``op``'s kernel as an OpError naming ``op`` (OpErrors keep their class)."""
    if isinstance(exc, OpError):
        if exc.op is not None:
            return exc
        err = type(exc)(exc.node_def, op, exc.message, exc.error_code)
    else:
        cls = next((c for base, c in _KERNEL_ERRORS if isinstance(exc, base)), InternalError)
        err = cls(None, op, f"{op.type} kernel of {op.name} failed: {type(exc).__name__}: {exc}")
    _traceback_to_note(exc)
    err.__cause__ = exc
    return err


def _traceback_to_note(exc: BaseException) -> None:
    """Keep the lines of the kernel's traceback (as a note, shown with the error) but not its
    frames: their locals hold the step's tensors (device memory) for as long as the caller keeps
    the error, and a frame still running when the error is handed over (a worker thread's, an
    actor handler's) can neither be cleared nor let go, and leads back to the step and so to
    the error: a cycle that only the garbage collector would free."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        tb = current.__traceback__
        if tb is not None:
            lines = "".join(traceback.format_tb(tb)).rstrip()
            current.add_note(f"Traceback of the kernel (most recent call last):\n{lines}")
            current.__traceback__ = None
        current = current.__cause__ or current.__context__
