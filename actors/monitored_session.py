"""``tf.train.MonitoredSession`` and ``MonitoredTrainingSession``: a blocking TF1 session that
initializes or restores the model, runs hooks around every ``run`` and closes cleanly.

Built on the blocking ``tf.Session`` (actors/sync_session.py). Creating one: hooks' ``begin``,
``Scaffold.finalize`` (default init ops, summary op and Saver), the session, then either restore
the latest checkpoint of ``checkpoint_dir`` or run the init op, then the local init op, then
hooks' ``after_create_session``. ``run`` merges the hooks' SessionRunArgs into one step. The
``with`` block treats ``OutOfRangeError`` (an input pipeline's end) as a normal end, as TF: the
hooks' ``end`` runs (a final checkpoint) and the block exits without the error.

Not supported (single process, no recovery): re-creating the session after an AbortedError or
UnavailableError, and waiting for a chief in worker sessions (a WorkerSessionCreator initializes
or restores like the chief).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from antcolony.errors import OutOfRangeError, SessionClosedError
from antcolony.graph.core import Graph, Operation, get_default_graph
from antcolony.graph.graph_keys import GraphKeys
from antcolony.graph.ops.control import group
from antcolony.graph.ops.summary_ops import merge_all
from antcolony.graph.variables import global_variables_initializer, local_variables_initializer

from .basic_hooks import CheckpointSaverHook, StepCounterHook, SummarySaverHook
from .checkpoint_state import get_checkpoint_state, latest_checkpoint
from .saver import Saver
from .session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues
from .sync_session import Session

logger = logging.getLogger(__name__)

__all__ = [
    "ChiefSessionCreator",
    "MonitoredSession",
    "MonitoredTrainingSession",
    "Scaffold",
    "SingularMonitoredSession",
    "WorkerSessionCreator",
    "default_saver",
]

USE_DEFAULT = object()


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
            self._init_op = _from_collection(g, GraphKeys.INIT_OP, global_variables_initializer)
        if self._local_init_op is None:
            self._local_init_op = _from_collection(g, GraphKeys.LOCAL_INIT_OP, local_variables_initializer)
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


def _from_collection(g: Graph, key: str, make: Callable[[], Operation]) -> Operation:
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
    """As the chief's (one process: nobody else would initialize the variables)."""


class _Coordinator:
    """What ``after_create_session`` gets as ``coord``: stop requests, no threads to join."""

    def __init__(self) -> None:
        self._stop = threading.Event()

    def request_stop(self, ex: BaseException | None = None) -> None:
        self._stop.set()

    def should_stop(self) -> bool:
        return self._stop.is_set()

    def join(
        self, threads: Any = None, stop_grace_period_secs: float = 120, ignore_live_threads: bool = False
    ) -> None:
        pass


class _StepContext:
    """What ``run_step_fn``'s function gets: the raw session, a hooked run, and stop requests."""

    def __init__(self, monitored: MonitoredSession) -> None:
        self._monitored = monitored

    @property
    def session(self) -> Session:
        return self._monitored._raw()

    def run_with_hooks(self, *args: Any, **kwargs: Any) -> Any:
        return self._monitored.run(*args, **kwargs)

    def request_stop(self) -> None:
        self._monitored._stop_requested = True


class MonitoredSession:
    """A session with hooks; ``should_stop()`` turns True when a hook asks or the input ends."""

    def __init__(
        self,
        session_creator: Any = None,
        hooks: Sequence[SessionRunHook] | None = None,
        stop_grace_period_secs: float = 120,
    ) -> None:
        self._graph = get_default_graph()
        self._hooks = list(hooks or ())
        for hook in self._hooks:
            hook.begin()
        self._creator = session_creator or ChiefSessionCreator()
        self._coord = _Coordinator()
        self._stop_requested = False
        self._sess: Session | None = self._creator.create_session()
        for hook in self._hooks:
            hook.after_create_session(self._sess, self._coord)

    @property
    def graph(self) -> Graph:
        return self._graph

    def _raw(self) -> Session:
        if self._sess is None:
            raise SessionClosedError("this MonitoredSession is closed")
        return self._sess

    def run(self, fetches: Any, feed_dict: Any = None, options: Any = None, run_metadata: Any = None) -> Any:
        """Run ``fetches`` with every hook's extra fetches and feeds in the same step."""
        sess = self._raw()
        context = SessionRunContext(SessionRunArgs(fetches, feed_dict, options), sess)
        asked = [hook.before_run(context) for hook in self._hooks]
        feeds = dict(feed_dict or {})
        extra: dict[int, Any] = {}
        for i, args in enumerate(asked):
            if args is None:
                continue
            if args.fetches is not None:
                extra[i] = args.fetches
            for key, value in (args.feed_dict or {}).items():
                if key in feeds:
                    raise RuntimeError(f"Same tensor is fed by a SessionRunHook and user: {key}")
                feeds[key] = value
            if options is None and args.options is not None:
                options = args.options
        results = sess.run({"caller": fetches, "hooks": extra}, feeds or None, options, run_metadata)
        for i, hook in enumerate(self._hooks):
            hook.after_run(context, SessionRunValues(results["hooks"].get(i), options, run_metadata))
        self._stop_requested = self._stop_requested or context.stop_requested or self._coord.should_stop()
        return results["caller"]

    def run_step_fn(self, step_fn: Callable[[_StepContext], Any]) -> Any:
        return step_fn(_StepContext(self))

    def should_stop(self) -> bool:
        return self._sess is None or self._stop_requested

    def close(self) -> None:
        self._close(None)

    def _close(self, exc_type: type[BaseException] | None) -> None:
        sess, self._sess = self._sess, None
        if sess is None:
            return
        try:
            if exc_type is None:
                for hook in self._hooks:
                    hook.end(sess)
        finally:
            sess.close()

    def __enter__(self) -> MonitoredSession:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: Any, tb: Any) -> bool:
        if exc_type is not None and issubclass(exc_type, (OutOfRangeError, StopIteration)):
            exc_type = None  # the input's end is the training's normal end
        self._close(exc_type)
        return exc_type is None and exc is not None


class SingularMonitoredSession(MonitoredSession):
    """A MonitoredSession that creates its own (chief) session; ``raw_session()`` gives it."""

    def __init__(
        self,
        hooks: Sequence[SessionRunHook] | None = None,
        scaffold: Scaffold | None = None,
        master: str = "",
        config: Any = None,
        checkpoint_dir: str | None = None,
        stop_grace_period_secs: float = 120,
        checkpoint_filename_with_path: str | None = None,
    ) -> None:
        creator = ChiefSessionCreator(scaffold, master, config, checkpoint_dir, checkpoint_filename_with_path)
        super().__init__(creator, hooks, stop_grace_period_secs)

    def raw_session(self) -> Session:
        return self._raw()


def MonitoredTrainingSession(
    master: str = "",
    is_chief: bool = True,
    checkpoint_dir: str | None = None,
    scaffold: Scaffold | None = None,
    hooks: Sequence[SessionRunHook] | None = None,
    chief_only_hooks: Sequence[SessionRunHook] | None = None,
    save_checkpoint_secs: Any = USE_DEFAULT,
    save_summaries_steps: Any = USE_DEFAULT,
    save_summaries_secs: Any = USE_DEFAULT,
    config: Any = None,
    stop_grace_period_secs: float = 120,
    log_step_count_steps: int | None = 100,
    max_wait_secs: float = 7200,
    save_checkpoint_steps: Any = USE_DEFAULT,
    summary_dir: str | None = None,
) -> MonitoredSession:
    """A MonitoredSession for training, with TF's default hooks on the chief: a checkpoint every
    600 s (or ``save_checkpoint_steps``), summaries every 100 steps, steps/sec every 100 steps."""
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None

    scaffold = scaffold or Scaffold()
    all_hooks = list(hooks or ())
    if not is_chief:
        creator: ChiefSessionCreator = WorkerSessionCreator(scaffold, master, config, checkpoint_dir)
        return MonitoredSession(creator, all_hooks, stop_grace_period_secs)
    all_hooks.extend(chief_only_hooks or ())
    creator = ChiefSessionCreator(scaffold, master, config, checkpoint_dir)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(StepCounterHook(output_dir=summary_dir, every_n_steps=log_step_count_steps))
        if (save_summaries_steps and save_summaries_steps > 0) or (
            save_summaries_secs and save_summaries_secs > 0
        ):
            all_hooks.append(
                SummarySaverHook(
                    scaffold=scaffold,
                    save_steps=save_summaries_steps,
                    save_secs=save_summaries_secs,
                    output_dir=summary_dir,
                )
            )
    if checkpoint_dir and (
        (save_checkpoint_secs and save_checkpoint_secs > 0)
        or (save_checkpoint_steps and save_checkpoint_steps > 0)
    ):
        all_hooks.append(
            CheckpointSaverHook(
                checkpoint_dir,
                save_steps=save_checkpoint_steps,
                save_secs=save_checkpoint_secs,
                scaffold=scaffold,
            )
        )
    return MonitoredSession(creator, all_hooks, stop_grace_period_secs)
