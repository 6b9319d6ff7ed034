"""Supervision: the ``Directive`` a parent returns for a failed child, and how it is applied.

A failure is an exception raised while an actor handled a *tell* (exceptions while handling an
*ask* go to the asker instead). The failing actor's ``on_failure`` runs, then its parent's
``supervise(child, exc)`` picks a directive. ``ESCALATE`` makes the parent fail with the same
exception, so the decision moves one level up; the root guardian (the runtime) logs a failing
top-level actor and stops it. Everything here runs synchronously inside the failing actor's
drain turn on the event loop.
"""

from __future__ import annotations

import enum
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .actor import _Cell

__all__ = ["Directive"]

logger = logging.getLogger(__name__)


class Directive(enum.Enum):
    """What happens to a child whose handling of a tell raised."""

    RESUME = "resume"
    """The child keeps its state and continues with its next message."""
    RESTART = "restart"
    """A fresh instance from the same class and arguments replaces the child; its ``on_start``
    runs, its children are stopped, the ref and queued messages are kept, the failing message
    is dropped."""
    STOP = "stop"
    """The child is stopped without ``on_stop``; its queued asks fail with ``ActorDeadError``."""
    ESCALATE = "escalate"
    """The parent itself fails with the exception; the grandparent decides about the parent."""


def handle_failure(cell: _Cell, exc: BaseException) -> None:
    """Run ``on_failure`` and the supervisors' decisions for ``exc`` raised by ``cell``, then apply.

    Walks up the tree iteratively while supervisors escalate. Every actor on that chain is marked
    failed, so it gets no ``on_stop`` if the decision stops it (directly or as a descendant).
    """
    chain: list[_Cell] = []
    target = cell
    while True:
        target.failed = True
        chain.append(target)
        _call_on_failure(target, exc)
        parent = target.parent
        if parent is None:
            logger.error("top-level actor %s failed; the root guardian stops it", target.name, exc_info=exc)
            directive = Directive.STOP
            break
        directive = _decide(parent, target, exc)
        if directive is not Directive.ESCALATE:
            break
        target = parent
    if directive is Directive.RESUME:
        logger.debug("actor %s failed with %r; resumed", target.name, exc)
        for failed in chain:
            failed.failed = False
        return
    if target.parent is not None:
        logger.warning(
            "actor %s failed with %r; supervisor %s decided %s for %s",
            cell.name,
            exc,
            target.parent.name,
            directive.name,
            target.name,
            exc_info=exc,
        )
    if directive is Directive.RESTART:
        target.restart()
    else:
        target.terminate()


def _call_on_failure(cell: _Cell, exc: BaseException) -> None:
    instance = cell.instance
    if instance is None:
        return
    try:
        instance.on_failure(exc)
    except Exception:
        logger.exception("on_failure of %s raised; supervision continues", cell.name)


def _decide(parent: _Cell, child: _Cell, exc: BaseException) -> Directive:
    try:
        directive = parent.instance.supervise(child.ref, exc)
    except Exception:
        logger.exception("supervise of %s raised for child %s; stopping the child", parent.name, child.name)
        return Directive.STOP
    if not isinstance(directive, Directive):
        logger.error(
            "supervise of %s returned %r, not a Directive; stopping %s", parent.name, directive, child.name
        )
        return Directive.STOP
    return directive
