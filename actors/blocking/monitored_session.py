"""``tf.train.MonitoredSession`` and ``MonitoredTrainingSession``: a blocking TF1 session that
initializes or restores the model, runs hooks around every ``run`` and closes cleanly.

Built on the blocking ``tf.Session`` (actors/blocking/sync_session.py). Creating one: hooks' ``begin``,
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
from antcolony.graph.core import Graph, get_default_graph

from .basic_hooks import CheckpointSaverHook
from .session_creator import ChiefSessionCreator, Scaffold, WorkerSessionCreator
from .session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues
from .summary_hooks import StepCounterHook, SummarySaverHook
from .sync_session import Session

logger = logging.getLogger(__name__)

__all__ = ["MonitoredSession", "MonitoredTrainingSession", "SingularMonitoredSession"]


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


USE_DEFAULT = object()


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
        creator: ChiefSessionCreator = WorkerSessionCreator(
            scaffold, master, config, max_wait_secs, checkpoint_dir=checkpoint_dir
        )
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
