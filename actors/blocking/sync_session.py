"""Blocking TF1 sessions (``tf.Session``, ``tf.InteractiveSession``) over the async ``Session``.

Each call hands the async session's coroutine to the shared background loop and waits, so a TF1
program runs unchanged while the runtime stays asynchronous underneath.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from typing import Any

from antcolony.actors.blocking.background_loop import background_loop, refuse_in_event_loop
from antcolony.actors.run_options import RunMetadata, RunOptions
from antcolony.actors.session import Session as AsyncSession
from antcolony.config.config_proto import ConfigProto
from antcolony.config.session_config import SessionConfig
from antcolony.errors import SessionClosedError
from antcolony.graph.core import Graph
from antcolony.graph.default_session import default_session, pop_default_session, push_default_session

logger = logging.getLogger(__name__)


class Session:
    """``tf.compat.v1.Session``: ``run`` blocks until the step is done.

    ``with Session() as sess:`` makes it the default session (for ``Tensor.eval``) and its graph
    the default graph, and closes it at the end. Not for use inside async code: there use
    ``async with ac.Session(...)`` and ``await sess.run(...)``.
    """

    def __init__(
        self,
        target: str = "",
        graph: Graph | None = None,
        config: SessionConfig | ConfigProto | None = None,
    ) -> None:
        if isinstance(config, ConfigProto):
            config = config.to_session_config()
        if config is not None and not isinstance(config, SessionConfig):
            raise TypeError(
                f"Session config must be a tf.ConfigProto or an ac.SessionConfig, got {type(config).__name__}"
            )
        self._session = AsyncSession(graph, config, target)
        self._loop = background_loop()
        self._scopes: contextlib.ExitStack | None = None

    @property
    def graph(self) -> Graph:
        return self._session.graph

    @property
    def graph_def(self) -> Any:
        return self._session.graph.as_graph_def()

    @property
    def config(self) -> SessionConfig:
        return self._session.config

    @property
    def closed(self) -> bool:
        return self._session.closed

    @property
    def sess_str(self) -> str:
        return ""

    @property
    def async_session(self) -> AsyncSession:
        """The async session underneath (for code mixing both faces)."""
        return self._session

    def run(
        self,
        fetches: Any,
        feed_dict: dict[Any, Any] | None = None,
        options: RunOptions | None = None,
        run_metadata: RunMetadata | None = None,
    ) -> Any:
        """Run the graph fragment needed for ``fetches``; returns values in the same structure."""
        self._check_open()
        return self._loop.call("Session.run", self._session.run, fetches, feed_dict, options, run_metadata)

    def make_callable(
        self,
        fetches: Any,
        feed_list: Sequence[Any] | None = None,
        accept_options: bool = False,
    ) -> Callable[..., Any]:
        """A blocking callable running ``fetches`` with positional feed values for ``feed_list``."""
        acall = self._session.make_callable(fetches, feed_list)

        def call(
            *args: Any, options: RunOptions | None = None, run_metadata: RunMetadata | None = None
        ) -> Any:
            if not accept_options and (options is not None or run_metadata is not None):
                raise TypeError("this callable was made without accept_options=True; it takes no options")
            self._check_open()
            return self._loop.call(
                "a Session callable", acall, *args, options=options, run_metadata=run_metadata
            )

        return call

    def list_devices(self) -> list[Any]:
        return self._loop.call_sync("Session.list_devices", self._session.list_devices)

    def memory_stats(self, device: str = "/gpu:0") -> Any:
        return self._loop.call_sync("Session.memory_stats", self._session.memory_stats, device)

    def close(self) -> None:
        """Cancel steps in flight and free the session's state; idempotent."""
        if self._session.closed:
            return
        self._loop.call("Session.close", self._session.close)

    def as_default(self) -> contextlib.AbstractContextManager[Session]:
        """Make this the default session (for ``Tensor.eval`` / ``Operation.run``) inside the block."""
        return default_session(self)

    def __enter__(self) -> Session:
        refuse_in_event_loop("`with tf.Session()`")
        scopes = contextlib.ExitStack()
        scopes.enter_context(self.graph.as_default())
        scopes.enter_context(self.as_default())
        self._scopes = scopes
        return self

    def __exit__(self, *exc: Any) -> None:
        scopes, self._scopes = self._scopes, None
        if scopes is not None:
            scopes.close()
        self.close()

    def __del__(self) -> None:
        # As TF: a session dropped without close() still frees its executors; without waiting,
        # since the collector may run anywhere (even on the loop's own thread).
        session = getattr(self, "_session", None)
        if session is not None and not session.closed:
            self._loop.close_soon(session.close)

    def _check_open(self) -> None:
        if self._session.closed:
            raise SessionClosedError("Attempted to use a closed Session; create a new one")


class InteractiveSession(Session):
    """A session that makes itself the default (and its graph the default graph) until closed,
    for shells and notebooks: ``t.eval()`` works without a ``with`` block."""

    def __init__(
        self,
        target: str = "",
        graph: Graph | None = None,
        config: SessionConfig | ConfigProto | None = None,
    ) -> None:
        super().__init__(target, graph, config)
        self._graph_scope: contextlib.AbstractContextManager[Graph] | None = self.graph.as_default()
        self._graph_scope.__enter__()
        push_default_session(self)

    def close(self) -> None:
        pop_default_session(self)
        scope, self._graph_scope = self._graph_scope, None
        if scope is not None:
            try:
                scope.__exit__(None, None, None)
            except ValueError:
                # Closed from another thread or context than the one that opened it: the graph
                # default there is not ours to reset.
                logger.debug("InteractiveSession closed outside the context that created it")
        super().close()
