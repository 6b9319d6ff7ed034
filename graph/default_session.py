"""The default session stack, ``Tensor.eval`` and ``Operation.run``, as TF1's ops.py has them.

The graph layer only keeps the stack: any object with a blocking ``run(fetches, feed_dict)`` and
a ``graph`` may be pushed (``antcolony.compat.v1.Session`` is). The stack is per thread / context,
as TF's is per thread.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
from collections.abc import Iterator
from typing import Any, Protocol, TypeVar

from antcolony.errors import AsyncOnlyError, NoDefaultSessionError

from .core import Graph, Operation, Tensor


class BlockingSession(Protocol):
    @property
    def graph(self) -> Graph: ...

    def run(self, fetches: Any, feed_dict: Any = None) -> Any: ...


_S = TypeVar("_S", bound=BlockingSession)

_stack: contextvars.ContextVar[tuple[BlockingSession, ...]] = contextvars.ContextVar(
    "ac_default_session", default=()
)


def get_default_session() -> BlockingSession | None:
    """The innermost session made default (``with sess:``, ``sess.as_default()``), or None."""
    stack = _stack.get()
    return stack[-1] if stack else None


@contextlib.contextmanager
def default_session(session: _S) -> Iterator[_S]:
    token = _stack.set((*_stack.get(), session))
    try:
        yield session
    finally:
        _stack.reset(token)


def push_default_session(session: BlockingSession) -> None:
    """Make ``session`` the default until ``pop_default_session`` (InteractiveSession's lifetime)."""
    _stack.set((*_stack.get(), session))


def pop_default_session(session: BlockingSession) -> None:
    stack = _stack.get()
    if session in stack:
        # Remove the newest entry for this session; others pushed later stay in order.
        i = len(stack) - 1 - stack[::-1].index(session)
        _stack.set(stack[:i] + stack[i + 1 :])


def _session_for(element: Tensor | Operation, session: BlockingSession | None, what: str) -> BlockingSession:
    sess = session if session is not None else get_default_session()
    if sess is None:
        raise NoDefaultSessionError(
            f"Cannot {what} {element.name}: no default session is registered. Use `with sess.as_default():` "
            f"(or `with tf.Session() as sess:`), or pass the session explicitly: `{what}(session=sess)`"
        )
    if sess.graph is not element.graph:
        raise NoDefaultSessionError(
            f"Cannot {what} {element.name} with this session: it belongs to another graph than the session's"
        )
    return sess


def _blocking_run(sess: BlockingSession, fetch: Any, feed_dict: Any) -> Any:
    result = sess.run(fetch, feed_dict)
    if inspect.isawaitable(result):
        # An async ac.Session was passed: its run is a coroutine this blocking call cannot await.
        if inspect.iscoroutine(result):
            result.close()
        raise AsyncOnlyError(
            "eval()/run() need a blocking session (antcolony.compat.v1.Session); with an async ac.Session "
            "use `await sess.run(tensor)`"
        )
    return result


def run_blocking(
    element: Tensor | Operation, feed_dict: Any, session: BlockingSession | None, what: str
) -> Any:
    """Run ``element`` with ``session`` or the default one (``Variable.load`` and the like)."""
    return _blocking_run(_session_for(element, session, what), element, feed_dict)


def _tensor_eval(self: Tensor, feed_dict: Any = None, session: BlockingSession | None = None) -> Any:
    """The value of this tensor, computed with ``session`` or the default session."""
    return _blocking_run(_session_for(self, session, "eval"), self, feed_dict)


def _operation_run(self: Operation, feed_dict: Any = None, session: BlockingSession | None = None) -> None:
    """Run this operation with ``session`` or the default session."""
    _blocking_run(_session_for(self, session, "run"), self, feed_dict)


Tensor.eval = _tensor_eval  # type: ignore[attr-defined]
Operation.run = _operation_run  # type: ignore[attr-defined]
