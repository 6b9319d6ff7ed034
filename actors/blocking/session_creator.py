"""Creating a monitored session's session: ``Scaffold`` (the init ops, summary op and Saver, with
TF's defaults) and the session creators, which restore the latest checkpoint or initialize.

Not supported (one process): waiting for a chief in worker sessions (a WorkerSessionCreator
initializes or restores like the chief).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from antcolony.actors.checkpoint.checkpoint_state import get_checkpoint_state, latest_checkpoint
from antcolony.actors.checkpoint.saver import Saver
from antcolony.graph.core import Graph, get_default_graph
from antcolony.graph.graph_keys import GraphKeys
from antcolony.graph.ops.control import group
from antcolony.graph.ops.summary_ops import merge_all
from antcolony.graph.variables import global_variables_initializer, local_variables_initializer

from ..remote_session import wait_for_remote_variables
from .background_loop import background_loop
from .sync_session import Session

logger = logging.getLogger(__name__)

__all__ = ["ChiefSessionCreator", "Scaffold", "WorkerSessionCreator", "default_saver", "from_collection"]


def default_saver() -> Saver:
    """The graph's Saver (collection ``savers``), created for every global variable if absent."""
    g = get_default_graph()
    savers = g.get_collection(GraphKeys.SAVERS)
    if len(savers) > 1:
        raise RuntimeError(f"more than one Saver in the {GraphKeys.SAVERS!r} collection; pass one explicitly")
    if savers:
        saver: Saver = savers[0]
        return saver
    saver = Saver(allow_empty=True)
    g.add_to_collection(GraphKeys.SAVERS, saver)
    return saver


class Scaffold:
    """The ops a monitored session needs, filled with TF's defaults by ``finalize``."""

    def __init__(
        self,
        init_op: Any = None,
        init_feed_dict: Any = None,
        init_fn: Callable[[Scaffold, Any], None] | None = None,
        ready_op: Any = None,
        ready_for_local_init_op: Any = None,
        local_init_op: Any = None,
        summary_op: Any = None,
        saver: Saver | None = None,
        copy_from_scaffold: Scaffold | None = None,
    ) -> None:
        if copy_from_scaffold is not None:
            init_op = init_op or copy_from_scaffold.init_op
            init_feed_dict = init_feed_dict or copy_from_scaffold.init_feed_dict
            init_fn = init_fn or copy_from_scaffold.raw_init_fn
            local_init_op = local_init_op or copy_from_scaffold.local_init_op
            summary_op = summary_op or copy_from_scaffold.summary_op
            saver = saver or copy_from_scaffold.saver
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._init_fn: Callable[[Scaffold, Any], None] | None = init_fn
        self._ready_op = ready_op
        self._local_init_op = local_init_op
        self._summary_op = summary_op
        self._saver = saver
        self._finalized = False

    def finalize(self) -> Scaffold:
        if self._finalized:
            return self
        g = get_default_graph()
        if self._init_op is None:
            self._init_op = from_collection(g, GraphKeys.INIT_OP, global_variables_initializer)
        if self._local_init_op is None:
            self._local_init_op = from_collection(g, GraphKeys.LOCAL_INIT_OP, local_variables_initializer)
        if self._summary_op is None:
            found = g.get_collection(GraphKeys.SUMMARY_OP)
            self._summary_op = found[0] if found else merge_all()
        if self._saver is None:
            self._saver = default_saver()
        self._finalized = True
        return self

    @property
    def init_op(self) -> Any:
        return self._init_op

    @property
    def init_feed_dict(self) -> Any:
        return self._init_feed_dict

    @property
    def init_fn(self) -> Callable[[Any], None] | None:
        fn = self._init_fn
        return None if fn is None else (lambda sess: fn(self, sess))

    @property
    def raw_init_fn(self) -> Callable[[Scaffold, Any], None] | None:
        """``init_fn`` as given: called with (scaffold, session)."""
        return self._init_fn

    @property
    def ready_op(self) -> Any:
        return self._ready_op

    @property
    def local_init_op(self) -> Any:
        return self._local_init_op

    @property
    def summary_op(self) -> Any:
        return self._summary_op

    @property
    def saver(self) -> Saver | None:
        return self._saver


def from_collection(g: Graph, key: str, make: Callable[[], Any]) -> Any:
    """The op of collection ``key`` (several: grouped), else ``make()``."""
    found = g.get_collection(key)
    if found:
        return found[0] if len(found) == 1 else group(*found)
    return make()


class ChiefSessionCreator:
    """Creates the session: restores the latest checkpoint of ``checkpoint_dir`` (or the given
    file) when there is one, else runs the scaffold's init op; then its local init op."""

    def __init__(
        self,
        scaffold: Scaffold | None = None,
        master: str = "",
        config: Any = None,
        checkpoint_dir: str | None = None,
        checkpoint_filename_with_path: str | None = None,
    ) -> None:
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_file = checkpoint_filename_with_path

    def create_session(self) -> Session:
        scaffold = self._scaffold.finalize()
        sess = Session(self._master, graph=get_default_graph(), config=self._config)
        try:
            remote = sess._session.remote_variables
            if remote is not None:
                # a chief of a cluster: its ps tasks may still be starting
                background_loop().call(
                    "waiting for the cluster's tasks", wait_for_remote_variables, remote, 30 * 60, 0.5, False
                )
            path = self._checkpoint_file
            state = None
            if path is None and self._checkpoint_dir:
                path = latest_checkpoint(self._checkpoint_dir)
                state = get_checkpoint_state(self._checkpoint_dir)
            if path and scaffold.saver is not None:
                scaffold.saver.restore(sess, path)
                if state is not None:
                    # As TF's SessionManager: the saver keeps rotating the checkpoints already there.
                    scaffold.saver.recover_last_checkpoints(state.all_model_checkpoint_paths)
                logger.info("Restored model from %s", path)
            else:
                if scaffold.init_op is not None:
                    sess.run(scaffold.init_op, feed_dict=scaffold.init_feed_dict)
                if scaffold.init_fn is not None:
                    scaffold.init_fn(sess)
            if scaffold.local_init_op is not None:
                sess.run(scaffold.local_init_op)
        except BaseException:
            sess.close()
            raise
        return sess


class WorkerSessionCreator(ChiefSessionCreator):
    """Without a master, as the chief's (one process: nobody else would initialize the
    variables). With one (a task's ``server.target``), waits for the chief to initialise the
    variables on other tasks, up to ``max_wait_secs``."""

    def __init__(
        self,
        scaffold: Scaffold | None = None,
        master: str = "",
        config: Any = None,
        max_wait_secs: float = 30 * 60,
        checkpoint_dir: str | None = None,
    ) -> None:
        super().__init__(scaffold, master, config, checkpoint_dir)
        self._max_wait_secs = max_wait_secs

    def create_session(self) -> Session:
        if not self._master:
            return super().create_session()
        # A worker of a cluster: the chief initialises the variables on the ps tasks; this one
        # waits until they are (TF1's SessionManager.wait_for_session), then runs its local init.
        scaffold = self._scaffold.finalize()
        sess = Session(self._master, graph=get_default_graph(), config=self._config)
        try:
            remote = sess._session.remote_variables
            assert remote is not None  # a master names a server, or Session refused it
            background_loop().call(
                "waiting for the chief worker", wait_for_remote_variables, remote, self._max_wait_secs
            )
            if scaffold.local_init_op is not None:
                sess.run(scaffold.local_init_op)
        except BaseException:
            sess.close()
            raise
        return sess
