"""The built-in hooks of ``tf.train``: stop at a step, save checkpoints, log tensors, catch NaN
losses, feed, run final ops (the summary hooks are in summary_hooks.py).

They run in the MonitoredSession's thread (the caller's), with the blocking TF1 session; the
global step is read through the extra fetches of ``before_run`` when possible, as TF's do.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

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
    "StopAtStepHook",
]


def global_step_tensor(what: str) -> Any:
    step = get_global_step(get_default_graph())
    if step is None:
        raise RuntimeError(
            f"{what} needs a global step: create one with tf.train.get_or_create_global_step()"
        )
    return step


def step_value(value: Any) -> int:
    return int(np.asarray(value).item())


class StopAtStepHook(SessionRunHook):
    """Requests a stop when the global step reaches ``last_step`` (or ``num_steps`` past its value
    when the session was created)."""

    def __init__(self, num_steps: int | None = None, last_step: int | None = None) -> None:
        if (num_steps is None) == (last_step is None):
            raise ValueError("StopAtStepHook needs exactly one of num_steps and last_step")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self) -> None:
        self._global_step = global_step_tensor("StopAtStepHook")

    def after_create_session(self, session: Any, coord: Any) -> None:
        if self._last_step is None:
            assert self._num_steps is not None
            self._last_step = step_value(session.run(self._global_step)) + self._num_steps

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        assert self._last_step is not None
        # The fetched value was read before this step's update: step + 1 is where it is now.
        if (
            step_value(run_values.results) + 1 >= self._last_step
            and step_value(run_context.session.run(self._global_step)) >= self._last_step
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
        self._global_step = global_step_tensor("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session: Any, coord: Any) -> None:
        step = step_value(session.run(self._global_step))
        self._save(session, step)
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if self._timer.should_trigger_for_step(step_value(run_values.results) + 1):
            step = step_value(run_context.session.run(self._global_step))
            if self._timer.should_trigger_for_step(step):
                self._timer.update_last_triggered_step(step)
                if self._save(run_context.session, step):
                    run_context.request_stop()

    def end(self, session: Any) -> None:
        step = step_value(session.run(self._global_step))
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def _get_saver(self) -> Any:
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        from .session_creator import default_saver

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
