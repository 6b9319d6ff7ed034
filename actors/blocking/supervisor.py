"""``tf.train.Supervisor``: TF1's older training wrapper (before monitored sessions), which
programs such as TF's ``mnist_replica.py`` use: the chief initialises or restores from
``logdir`` and runs the standard services (a checkpoint every ``save_model_secs``, summaries
every ``save_summaries_secs``, both as threads of its ``Coordinator``); other workers wait for
the chief's variables. ``managed_session`` stops the services and closes the session on exit,
treating ``OutOfRangeError`` as a normal end.

As TF1, the constructor finalizes the graph: ops created after it are an error.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from typing import Any

from antcolony.actors.summary.writer_cache import SummaryWriterCache
from antcolony.graph.core import Graph, get_default_graph
from antcolony.graph.graph_keys import GraphKeys
from antcolony.graph.ops.summary_ops import merge_all
from antcolony.graph.train.optimizer import get_global_step
from antcolony.graph.variables import (
    global_variables,
    global_variables_initializer,
    local_variables_initializer,
)

from .basic_hooks import step_value
from .coordinator import Coordinator, LooperThread, start_queue_runners
from .session_creator import (
    ChiefSessionCreator,
    Scaffold,
    WorkerSessionCreator,
    default_saver,
    from_collection,
)

logger = logging.getLogger(__name__)

__all__ = ["Supervisor"]


class Supervisor:
    """TF1's ``tf.train.Supervisor`` (see the module docstring). Arguments left at
    ``Supervisor.USE_DEFAULT`` take TF's defaults from the graph; ``None`` turns the part off."""

    USE_DEFAULT = 0

    def __init__(
        self,
        graph: Graph | None = None,
        ready_op: Any = USE_DEFAULT,
        ready_for_local_init_op: Any = USE_DEFAULT,
        is_chief: bool = True,
        init_op: Any = USE_DEFAULT,
        init_feed_dict: Any = None,
        local_init_op: Any = USE_DEFAULT,
        logdir: str | None = None,
        summary_op: Any = USE_DEFAULT,
        saver: Any = USE_DEFAULT,
        global_step: Any = USE_DEFAULT,
        save_summaries_secs: float = 120,
        save_model_secs: float = 600,
        recovery_wait_secs: float = 30,
        stop_grace_secs: float = 120,
        checkpoint_basename: str = "model.ckpt",
        session_manager: Any = None,
        summary_writer: Any = USE_DEFAULT,
        init_fn: Any = None,
        local_init_run_options: Any = None,
    ) -> None:
        self._graph = graph if graph is not None else get_default_graph()
        with self._graph.as_default():
            g = self._graph
            self._init_op = _default(
                init_op, lambda: from_collection(g, GraphKeys.INIT_OP, global_variables_initializer)
            )
            self._local_init_op = _default(
                local_init_op,
                lambda: from_collection(g, GraphKeys.LOCAL_INIT_OP, local_variables_initializer),
            )
            self._summary_op = _default(
                summary_op, lambda: from_collection(g, GraphKeys.SUMMARY_OP, merge_all)
            )
            self._saver = _default(saver, lambda: default_saver() if global_variables() else None)
            self._global_step = _default(global_step, lambda: get_global_step(self._graph))
        self._ready_op = None if ready_op is None else ready_op or None
        self._ready_for_local_init_op = (
            None if ready_for_local_init_op is None else ready_for_local_init_op or None
        )
        self._is_chief = is_chief
        self._init_feed_dict = init_feed_dict
        self._init_fn = init_fn
        self._logdir = logdir
        self._save_summaries_secs = save_summaries_secs
        self._save_model_secs = save_model_secs
        self._recovery_wait_secs = recovery_wait_secs
        self._stop_grace_secs = stop_grace_secs
        self._save_path = os.path.join(logdir, checkpoint_basename) if logdir else None
        self._summary_writer = _default(
            summary_writer, lambda: SummaryWriterCache.get(logdir) if logdir and is_chief else None
        )
        self._coord = Coordinator()
        self._started_threads: list[Any] = []
        self._graph.finalize()

    # --- sessions -------------------------------------------------------------------------------

    def prepare_or_wait_for_session(
        self,
        master: str = "",
        config: Any = None,
        wait_for_checkpoint: bool = False,
        max_wait_secs: float = 7200,
        start_standard_services: bool = True,
    ) -> Any:
        """The chief: a session restored from ``logdir``'s latest checkpoint or initialised, and
        (``start_standard_services``) the checkpoint and summary threads. Other workers: a session
        once the chief has initialised the variables they share (at most ``max_wait_secs``)."""
        self._coord.clear_stop()
        scaffold = Scaffold(
            init_op=self._init_op,
            init_feed_dict=self._init_feed_dict,
            init_fn=None if self._init_fn is None else (lambda _scaffold, sess: self._init_fn(sess)),
            local_init_op=self._local_init_op,
            summary_op=self._summary_op,
            saver=self._saver,
        )
        with self._graph.as_default():
            if self._is_chief:
                sess = ChiefSessionCreator(
                    scaffold, master, config, checkpoint_dir=self._logdir
                ).create_session()
                if start_standard_services:
                    self.start_standard_services(sess)
            else:
                sess = WorkerSessionCreator(
                    scaffold, master, config, max_wait_secs=max_wait_secs
                ).create_session()
        return sess

    @contextlib.contextmanager
    def managed_session(
        self,
        master: str = "",
        config: Any = None,
        start_standard_services: bool = True,
        close_summary_writer: bool = True,
    ) -> Iterator[Any]:
        """``prepare_or_wait_for_session`` for a ``with`` block; on leaving it, the services
        stop and the session closes. An exception in the block stops them and is re-raised,
        except ``OutOfRangeError`` (a clean end)."""
        sess = self.prepare_or_wait_for_session(
            master=master, config=config, start_standard_services=start_standard_services
        )
        try:
            yield sess
        except Exception as exc:
            self._coord.request_stop(exc)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                sess.close()

    # --- services and stopping ------------------------------------------------------------------

    def start_standard_services(self, sess: Any) -> list[Any]:
        """The chief's threads: a checkpoint every ``save_model_secs`` (the first at once) and
        the summary op every ``save_summaries_secs``, when there is a saver / summary op and a
        ``logdir``."""
        if not self._is_chief:
            raise RuntimeError("only the chief Supervisor runs the standard services (is_chief=True)")
        threads = []
        if self._logdir and self._summary_writer is not None:
            self._summary_writer.add_graph(self._graph)
        if self._save_path and self._saver is not None and self._save_model_secs:
            threads.append(LooperThread.loop(self._coord, self._save_model_secs, self._checkpoint, (sess,)))
        if self._summary_writer is not None and self._summary_op is not None and self._save_summaries_secs:
            threads.append(
                LooperThread.loop(self._coord, self._save_summaries_secs, self._summarize, (sess,))
            )
        self._started_threads.extend(threads)
        return threads

    def _checkpoint(self, sess: Any) -> None:
        assert self._saver is not None and self._save_path is not None
        self._saver.save(sess, self._save_path, global_step=self._global_step)

    def _summarize(self, sess: Any) -> None:
        if self._global_step is None:
            summary = sess.run(self._summary_op)
            step = None
        else:
            summary, step = sess.run([self._summary_op, self._global_step])
        self.summary_computed(sess, summary, step)

    def summary_computed(self, sess: Any, summary: Any, global_step: Any = None) -> None:
        """Write ``summary`` (a serialized Summary) at ``global_step`` (default: the session's)."""
        if self._summary_writer is None:
            raise RuntimeError("this Supervisor has no summary writer (is_chief=False or no logdir)")
        if global_step is None and self._global_step is not None:
            global_step = sess.run(self._global_step)
        self._summary_writer.add_summary(summary, None if global_step is None else step_value(global_step))

    def start_queue_runners(self, sess: Any, queue_runners: Any = None) -> list[Any]:
        """Start the graph's (or these) queue runners' threads under this Supervisor's coordinator."""
        if queue_runners is None:
            threads = start_queue_runners(sess, coord=self._coord)
        else:
            threads = [
                t for qr in queue_runners for t in qr.create_threads(sess, coord=self._coord, start=True)
            ]
        self._started_threads.extend(threads)
        return threads

    def loop(
        self, timer_interval_secs: float, target: Any, args: Any = None, kwargs: Any = None
    ) -> LooperThread:
        """Run ``target`` every ``timer_interval_secs`` in a thread until the Supervisor stops."""
        looper = LooperThread.loop(self._coord, timer_interval_secs, target, args, kwargs)
        self._started_threads.append(looper)
        return looper

    def request_stop(self, ex: BaseException | None = None) -> None:
        self._coord.request_stop(ex)

    def should_stop(self) -> bool:
        return self._coord.should_stop()

    def wait_for_stop(self) -> None:
        self._coord.wait_for_stop()

    def stop(
        self,
        threads: Any = None,
        close_summary_writer: bool = True,
        ignore_live_threads: bool = False,
    ) -> None:
        """Stop the services and the given threads (waiting ``stop_grace_secs`` at most), close the
        summary writer; re-raise an exception a thread reported."""
        self._coord.request_stop()
        try:
            self._coord.join(
                [*self._started_threads, *(threads or ())],
                stop_grace_period_secs=self._stop_grace_secs,
                ignore_live_threads=ignore_live_threads,
            )
        finally:
            self._started_threads = []
            if close_summary_writer and self._summary_writer is not None:
                self._summary_writer.flush()

    # --- what TF1's Supervisor exposes ----------------------------------------------------------

    @property
    def coord(self) -> Coordinator:
        return self._coord

    @property
    def is_chief(self) -> bool:
        return self._is_chief

    @property
    def init_op(self) -> Any:
        return self._init_op

    @property
    def init_feed_dict(self) -> Any:
        return self._init_feed_dict

    @property
    def ready_op(self) -> Any:
        return self._ready_op

    @property
    def ready_for_local_init_op(self) -> Any:
        return self._ready_for_local_init_op

    @property
    def summary_op(self) -> Any:
        return self._summary_op

    @property
    def summary_writer(self) -> Any:
        return self._summary_writer

    @property
    def saver(self) -> Any:
        return self._saver

    @property
    def global_step(self) -> Any:
        return self._global_step

    @property
    def save_path(self) -> str | None:
        return self._save_path

    @property
    def save_model_secs(self) -> float:
        return self._save_model_secs

    @property
    def save_summaries_secs(self) -> float:
        return self._save_summaries_secs

    @property
    def session_manager(self) -> None:
        return None


def _default(value: Any, make: Any) -> Any:
    # TF's USE_DEFAULT is 0; None switches the part off
    return make() if isinstance(value, int) and not isinstance(value, bool) and value == 0 else value
