"""The built-in hooks of ``tf.train``: stop at a step, save checkpoints and summaries, log
tensors, catch NaN losses, count steps per second, feed, run final ops.

They run in the MonitoredSession's thread (the caller's), with the blocking TF1 session; the
global step is read through the extra fetches of ``before_run`` when possible, as TF's do.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from antcolony.graph.core import Tensor, get_default_graph
from antcolony.graph.train.optimizer import get_global_step

from .session_run_hook import (
    SecondOrStepTimer,
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)

logger = logging.getLogger(__name__)

__all__ = [
    "CheckpointSaverHook",
    "CheckpointSaverListener",
    "FeedFnHook",
    "FinalOpsHook",
    "LoggingTensorHook",
    "NanLossDuringTrainingError",
    "NanTensorHook",
    "StepCounterHook",
    "StopAtStepHook",
    "SummarySaverHook",
    "SummaryWriterCache",
]


def _global_step_tensor(what: str) -> Any:
    step = get_global_step(get_default_graph())
    if step is None:
        raise RuntimeError(
            f"{what} needs a global step: create one with tf.train.get_or_create_global_step()"
        )
    return step


def _step(value: Any) -> int:
    return int(np.asarray(value).item())


class SummaryWriterCache:
    """``tf.summary.FileWriterCache``: one FileWriter per directory, shared by hooks."""

    _writers: ClassVar[dict[str, Any]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def get(cls, logdir: str) -> Any:
        from .summary_writer import FileWriter

        key = os.path.abspath(logdir)
        with cls._lock:
            if key not in cls._writers:
                cls._writers[key] = FileWriter(key, graph=get_default_graph())
            return cls._writers[key]

    @classmethod
    def clear(cls) -> None:
        with cls._lock:
            writers, cls._writers = cls._writers, {}
        for w in writers.values():
            w.close()


def _scalar_summary(tag: str, value: float) -> Any:
    from tensorboardX.proto import summary_pb2

    return summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=float(value))])


class StopAtStepHook(SessionRunHook):
    """Requests a stop when the global step reaches ``last_step`` (or ``num_steps`` past its value
    when the session was created)."""

    def __init__(self, num_steps: int | None = None, last_step: int | None = None) -> None:
        if (num_steps is None) == (last_step is None):
            raise ValueError("StopAtStepHook needs exactly one of num_steps and last_step")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self) -> None:
        self._global_step = _global_step_tensor("StopAtStepHook")

    def after_create_session(self, session: Any, coord: Any) -> None:
        if self._last_step is None:
            assert self._num_steps is not None
            self._last_step = _step(session.run(self._global_step)) + self._num_steps

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        assert self._last_step is not None
        # The fetched value was read before this step's update: step + 1 is where it is now.
        if (
            _step(run_values.results) + 1 >= self._last_step
            and _step(run_context.session.run(self._global_step)) >= self._last_step
        ):
            run_context.request_stop()


class CheckpointSaverListener:
    """Called around each save of a CheckpointSaverHook; ``after_save`` may return True to stop."""

    def begin(self) -> None:
        pass

    def before_save(self, session: Any, global_step_value: int) -> None:
        pass

    def after_save(self, session: Any, global_step_value: int) -> bool | None:
        return None

    def end(self, session: Any, global_step_value: int) -> None:
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint when the session is created, every N steps or seconds, and at the end."""

    def __init__(
        self,
        checkpoint_dir: str,
        save_secs: float | None = None,
        save_steps: int | None = None,
        saver: Any = None,
        checkpoint_basename: str = "model.ckpt",
        scaffold: Any = None,
        listeners: Sequence[CheckpointSaverListener] | None = None,
        save_graph_def: bool = True,
    ) -> None:
        if saver is not None and scaffold is not None:
            raise ValueError("CheckpointSaverHook: give a saver or a scaffold, not both")
        self._dir = checkpoint_dir
        self._path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._saver = saver
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or ())

    def begin(self) -> None:
        self._global_step = _global_step_tensor("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session: Any, coord: Any) -> None:
        step = _step(session.run(self._global_step))
        self._save(session, step)
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if self._timer.should_trigger_for_step(_step(run_values.results) + 1):
            step = _step(run_context.session.run(self._global_step))
            if self._timer.should_trigger_for_step(step):
                self._timer.update_last_triggered_step(step)
                if self._save(run_context.session, step):
                    run_context.request_stop()

    def end(self, session: Any) -> None:
        step = _step(session.run(self._global_step))
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def _get_saver(self) -> Any:
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        from .monitored_session import default_saver

        return default_saver()

    def _save(self, session: Any, step: int) -> bool:
        for listener in self._listeners:
            listener.before_save(session, step)
        os.makedirs(self._dir, exist_ok=True)
        path = self._get_saver().save(session, self._path, global_step=step)
        logger.info("Saving checkpoints for %d into %s.", step, path)
        stop = False
        for listener in self._listeners:
            stop = bool(listener.after_save(session, step)) or stop
        return stop


class SummarySaverHook(SessionRunHook):
    """Runs the summary op every N steps or seconds and writes its result to ``output_dir``."""

    def __init__(
        self,
        save_steps: int | None = None,
        save_secs: float | None = None,
        output_dir: str | None = None,
        summary_writer: Any = None,
        scaffold: Any = None,
        summary_op: Any = None,
    ) -> None:
        if (scaffold is None) == (summary_op is None):
            raise ValueError("SummarySaverHook needs exactly one of scaffold and summary_op")
        if summary_writer is None and output_dir is None:
            raise ValueError("SummarySaverHook needs an output_dir or a summary_writer")
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._output_dir = output_dir
        self._writer = summary_writer
        self._scaffold = scaffold
        self._summary_op = summary_op
        self._request = False

    def begin(self) -> None:
        if self._writer is None and self._output_dir is not None:
            self._writer = SummaryWriterCache.get(self._output_dir)
        self._global_step = _global_step_tensor("SummarySaverHook")
        self._next_step: int | None = None

    def _op(self) -> Any:
        op = self._summary_op if self._summary_op is not None else self._scaffold.summary_op
        if isinstance(op, (list, tuple)):
            return list(op) or None
        return op

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        op = self._op()
        self._request = op is not None and (
            self._next_step is None or self._timer.should_trigger_for_step(self._next_step)
        )
        fetches: dict[str, Any] = {"global_step": self._global_step}
        if self._request:
            fetches["summary"] = op
        return SessionRunArgs(fetches)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        step = _step(run_values.results["global_step"])
        if self._request:
            self._timer.update_last_triggered_step(step)
            summaries = run_values.results["summary"]
            for s in summaries if isinstance(summaries, list) else [summaries]:
                self._writer.add_summary(s, step)
        self._next_step = step + 1

    def end(self, session: Any) -> None:
        if self._writer is not None:
            self._writer.flush()


class LoggingTensorHook(SessionRunHook):
    """Logs the values of ``tensors`` (a list or a dict tag -> tensor) every N steps or seconds,
    or only at the end with ``at_end=True``; ``formatter(dict tag -> value) -> str``."""

    def __init__(
        self,
        tensors: Any,
        every_n_iter: int | None = None,
        every_n_secs: float | None = None,
        at_end: bool = False,
        formatter: Callable[[dict[str, Any]], str] | None = None,
    ) -> None:
        if not at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError(
                "LoggingTensorHook needs exactly one of every_n_iter and every_n_secs, or at_end=True"
            )
        if isinstance(tensors, dict):
            self._tags = list(tensors)
            self._tensors = dict(tensors)
        else:
            items = list(tensors)
            self._tags = [t if isinstance(t, str) else t.name for t in items]
            self._tensors = dict(zip(self._tags, items))
        self._timer = (
            SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter)
            if not (at_end and every_n_iter is None and every_n_secs is None)
            else None
        )
        self._at_end = at_end
        self._formatter = formatter
        self._iter = 0
        self._should_log = False

    def begin(self) -> None:
        if self._timer is not None:
            self._timer.reset()
        self._iter = 0

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        self._should_log = self._timer is not None and self._timer.should_trigger_for_step(self._iter)
        return SessionRunArgs(self._tensors) if self._should_log else None

    def _log(self, values: dict[str, Any], elapsed: float | None = None) -> None:
        if self._formatter is not None:
            logger.info("%s", self._formatter(values))
            return
        text = ", ".join(f"{tag} = {values[tag]}" for tag in self._tags)
        if elapsed is not None:
            logger.info("%s (%.3f sec)", text, elapsed)
        else:
            logger.info("%s", text)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if self._should_log and self._timer is not None:
            elapsed, _ = self._timer.update_last_triggered_step(self._iter)
            self._log(run_values.results, elapsed)
        self._iter += 1

    def end(self, session: Any) -> None:
        if self._at_end:
            self._log(session.run(self._tensors))


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self) -> str:
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Fails the run with NanLossDuringTrainingError when ``loss_tensor`` is NaN (or, with
    ``fail_on_nan_loss=False``, logs and requests a stop)."""

    def __init__(self, loss_tensor: Tensor, fail_on_nan_loss: bool = True) -> None:
        self._loss = loss_tensor
        self._fail = fail_on_nan_loss

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._loss)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if np.isnan(run_values.results).any():
            if self._fail:
                logger.error("Model diverged with loss = NaN.")
                raise NanLossDuringTrainingError
            logger.warning("Model diverged with loss = NaN; requesting a stop.")
            run_context.request_stop()


class StepCounterHook(SessionRunHook):
    """Logs (and writes as the ``global_step/sec`` summary) the steps per second."""

    def __init__(
        self,
        every_n_steps: int | None = 100,
        every_n_secs: float | None = None,
        output_dir: str | None = None,
        summary_writer: Any = None,
    ) -> None:
        if every_n_secs is not None:
            every_n_steps = None
        self._timer = SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_steps)
        self._output_dir = output_dir
        self._writer = summary_writer
        self.last_rate: float | None = None

    def begin(self) -> None:
        if self._writer is None and self._output_dir is not None:
            self._writer = SummaryWriterCache.get(self._output_dir)
        self._global_step = _global_step_tensor("StepCounterHook")

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        step = _step(run_values.results)
        if self._timer.should_trigger_for_step(step):
            elapsed, steps = self._timer.update_last_triggered_step(step)
            if elapsed and steps:
                self.last_rate = steps / elapsed
                logger.info("global_step/sec: %g", self.last_rate)
                if self._writer is not None:
                    self._writer.add_summary(_scalar_summary("global_step/sec", self.last_rate), step)


class FeedFnHook(SessionRunHook):
    """Adds ``feed_fn()``'s feed dict to every run."""

    def __init__(self, feed_fn: Callable[[], dict[Any, Any]]) -> None:
        self._feed_fn = feed_fn

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(fetches=None, feed_dict=self._feed_fn())


class FinalOpsHook(SessionRunHook):
    """Runs ``final_ops`` when the session ends; their values are ``final_ops_values``."""

    def __init__(self, final_ops: Any, final_ops_feed_dict: Any = None) -> None:
        self._final_ops = final_ops
        self._feed = final_ops_feed_dict
        self.final_ops_values: Any = None

    def end(self, session: Any) -> None:
        if self._final_ops is not None:
            self.final_ops_values = session.run(self._final_ops, feed_dict=self._feed)
