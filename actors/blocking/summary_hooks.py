"""The summary hooks of ``tf.train``: SummarySaverHook and StepCounterHook, which share their
FileWriters through ``tf.summary.FileWriterCache`` (actors/summary/writer_cache.py)."""

from __future__ import annotations

import logging
from typing import Any

from antcolony.actors.summary.writer_cache import SummaryWriterCache

from .basic_hooks import global_step_tensor, step_value
from .session_run_hook import (
    SecondOrStepTimer,
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)

logger = logging.getLogger(__name__)

__all__ = ["StepCounterHook", "SummarySaverHook"]


def _scalar_summary(tag: str, value: float) -> Any:
    from tensorboardX.proto import summary_pb2

    return summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=float(value))])


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
        self._global_step = global_step_tensor("SummarySaverHook")
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
        step = step_value(run_values.results["global_step"])
        if self._request:
            self._timer.update_last_triggered_step(step)
            summaries = run_values.results["summary"]
            for s in summaries if isinstance(summaries, list) else [summaries]:
                self._writer.add_summary(s, step)
        self._next_step = step + 1

    def end(self, session: Any) -> None:
        if self._writer is not None:
            self._writer.flush()


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
        self._global_step = global_step_tensor("StepCounterHook")

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        step = step_value(run_values.results)
        if self._timer.should_trigger_for_step(step):
            elapsed, steps = self._timer.update_last_triggered_step(step)
            if elapsed and steps:
                self.last_rate = steps / elapsed
                logger.info("global_step/sec: %g", self.last_rate)
                if self._writer is not None:
                    self._writer.add_summary(_scalar_summary("global_step/sec", self.last_rate), step)
